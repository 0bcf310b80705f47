// Parser of sympy-printed size expressions (see expr.h: parse).
#include <algorithm>
#include <cctype>
#include <unordered_map>

#include "sym/expr.h"

namespace tangle::sym {

namespace {

struct SyntaxError {
  std::string why;
};

class Parser {
 public:
  Parser(std::string_view s, const std::function<std::string(std::string_view)>& qualify) : s_(s), qualify_(qualify) {}

  ExprId parseAll() {
    ExprId e = expr();
    // A comparison (a SymBool such as `s0 >= 2`) is an unknown value to us.
    for (std::string_view op : {"==", "!=", "<=", ">=", "<", ">"})
      if (eat(op)) {
        ExprId rhs = expr();
        e = opaque(op, {e, rhs});
        break;
      }
    skipSpace();
    if (pos_ != s_.size()) throw SyntaxError{"unexpected '" + std::string(s_.substr(pos_)) + "'"};
    // Expressions are shared, so a short text can stand for a tree too large to print or walk
    // (an opaque `a % b` of a sum, multiplied in, nested again: exponential).
    std::unordered_map<ExprId, size_t> memo;
    if (treeSize(e, memo) > kMaxTreeSize)
      throw SyntaxError{"expression too large for a size (over " + std::to_string(kMaxTreeSize) + " nodes written out)"};
    return e;
  }

 private:
  std::string_view s_;
  const std::function<std::string(std::string_view)>& qualify_;
  size_t pos_ = 0;
  static constexpr int kMaxDepth = 200;
  static constexpr size_t kMaxTerms = 256, kMaxDegree = 64, kMaxTreeSize = 4096;
  int depth_ = 0;  // unary() calls in progress (a SyntaxError ends the parse, so no unwinding needed)

  void skipSpace() {
    while (pos_ < s_.size() && s_[pos_] == ' ') ++pos_;
  }
  bool eat(std::string_view tok) {
    skipSpace();
    if (s_.substr(pos_, tok.size()) != tok) return false;
    pos_ += tok.size();
    return true;
  }
  void expect(std::string_view tok) {
    if (!eat(tok)) throw SyntaxError{"expected '" + std::string(tok) + "'"};
  }

  ExprId expr() {
    ExprId e = term();
    for (;;) {
      if (eat("+")) e = add(e, bounded(term(), e, false));
      else if (eat("-")) e = sub(e, bounded(term(), e, false));
      else return e;
    }
  }

  // Nodes of e written out as a tree, saturating just past kMaxTreeSize.
  static size_t treeSize(ExprId e, std::unordered_map<ExprId, size_t>& memo) {
    if (auto it = memo.find(e); it != memo.end()) return it->second;
    size_t n = 1;
    for (const Term& t : poly(e).terms) {
      ++n;
      for (AtomId a : t.atoms) {
        const Atom& at = atom(a);
        ++n;
        if (at.kind == Atom::Kind::FloorDiv) n += treeSize(at.arg, memo);
        for (ExprId x : at.args) n += treeSize(x, memo);
        if (n > kMaxTreeSize) break;
      }
      if (n > kMaxTreeSize) break;
    }
    n = std::min(n, kMaxTreeSize + 1);
    memo[e] = n;
    return n;
  }

  // b, after checking that a + b or a * b stays small enough to be a size: a
  // product of sums multiplies out, so without a bound a short text could take
  // exponential time and memory to normalize.
  static ExprId bounded(ExprId b, ExprId a, bool product) {
    const Poly &pa = poly(a), &pb = poly(b);
    size_t terms = product ? (pa.terms.size() + 1) * (pb.terms.size() + 1) : pa.terms.size() + pb.terms.size();
    if (terms > kMaxTerms) throw SyntaxError{"expression too large for a size (over " + std::to_string(kMaxTerms) + " terms)"};
    auto degree = [](const Poly& p) {
      size_t d = 0;
      for (const Term& t : p.terms) d = std::max(d, t.atoms.size());
      return d;
    };
    if (product && degree(pa) + degree(pb) > kMaxDegree)
      throw SyntaxError{"expression too large for a size (a product of over " + std::to_string(kMaxDegree) + " factors)"};
    return b;
  }

  // A division or modulus by a non-constant is an unknown integer to us.
  static ExprId divide(ExprId a, ExprId b, const char* op) {
    auto k = constantValue(b);
    if (k && *k > 0) {
      if (std::string_view(op) == "//") return *floorDiv(a, *k);
      if (std::string_view(op) == "%") return *mod(a, *k);
      if (*mod(a, *k) == constant(0)) return *floorDiv(a, *k);  // exact true division
    }
    return opaque(op, {a, b});
  }

  ExprId term() {
    ExprId e = unary();
    for (;;) {
      if (eat("**")) {
        auto n = constantValue(unary());
        if (!n || *n < 0 || *n > 8) throw SyntaxError{"only small constant powers are supported"};
        ExprId base = e;
        e = constant(1);
        for (int64_t i = 0; i < *n; ++i) e = mul(e, bounded(base, e, true));
      } else if (eat("*")) {
        e = mul(e, bounded(unary(), e, true));
      } else if (eat("//")) {
        e = divide(e, unary(), "//");
      } else if (eat("/")) {
        e = divide(e, unary(), "/");
      } else if (eat("%")) {
        e = divide(e, unary(), "%");
      } else {
        return e;
      }
    }
  }

  ExprId unary() {
    // Every recursion of the grammar passes here: bounded against stack overflow on hostile input.
    if (depth_ >= kMaxDepth) throw SyntaxError{"nested more than " + std::to_string(kMaxDepth) + " levels deep"};
    ++depth_;
    ExprId e = eat("-") ? neg(unary()) : eat("+") ? unary() : primary();
    --depth_;
    return e;
  }

  ExprId primary() {
    skipSpace();
    if (pos_ >= s_.size()) throw SyntaxError{"unexpected end"};
    char c = s_[pos_];
    if (eat("(")) {
      ExprId e = expr();
      expect(")");
      return e;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      int64_t v = 0;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
        if (v > (INT64_MAX - 9) / 10) throw SyntaxError{"integer too large"};
        v = v * 10 + (s_[pos_++] - '0');
      }
      return constant(v);
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = pos_;
      // A dot joins a graph prefix to a name ("D0.s77", as relation files write them).
      auto identChar = [&](size_t i) {
        unsigned char ch = static_cast<unsigned char>(s_[i]);
        return std::isalnum(ch) || ch == '_' ||
               (ch == '.' && i + 1 < s_.size() && std::isalpha(static_cast<unsigned char>(s_[i + 1])));
      };
      while (pos_ < s_.size() && identChar(pos_)) ++pos_;
      std::string_view name = s_.substr(start, pos_ - start);
      if (!eat("(")) return var(qualify_(name));
      return call(name);
    }
    throw SyntaxError{std::string("unexpected '") + c + "'"};
  }

  ExprId call(std::string_view name) {
    std::vector<ExprId> args;
    if (!eat(")")) {
      do args.push_back(expr());
      while (eat(","));
      expect(")");
    }
    if (args.size() == 2 && name == "FloorDiv") return divide(args[0], args[1], "//");
    if (args.size() == 2 && (name == "Mod" || name == "PythonMod")) return divide(args[0], args[1], "%");
    return opaque(name, std::move(args));
  }
};

}  // namespace

std::optional<ExprId> parse(std::string_view text, const std::function<std::string(std::string_view)>& qualify,
                            std::string* error) {
  try {
    return Parser(text, qualify).parseAll();
  } catch (const SyntaxError& e) {
    if (error) *error = e.why + " in the size expression '" + std::string(text) + "'";
    return std::nullopt;
  } catch (const Overflow& e) {
    if (error) *error = std::string(e.what()) + " in the size expression '" + std::string(text) + "'";
    return std::nullopt;
  }
}

}  // namespace tangle::sym
