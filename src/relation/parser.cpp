// Recursive-descent parser of relation files (grammar in relation.h).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "relation/lexer.h"
#include "relation/relation.h"
#include "relation/signature.h"
#include "relation/stars.h"

namespace tangle {

namespace {

using rel::Token;
using Kind = Token::Kind;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> splitWords(std::string_view s) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    size_t start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
    if (i > start) words.push_back(s.substr(start, i - start));
  }
  return words;
}

// A path in the relation file, relative to the file's folder unless absolute.
std::string resolvePath(const std::string& relationPath, std::string_view p) {
  namespace fs = std::filesystem;
  fs::path q{std::string(p)};
  if (q.is_absolute()) return q.lexically_normal().string();
  fs::path dir = fs::path(relationPath).parent_path();
  return (dir.empty() ? q : dir / q).lexically_normal().string();
}

bool isKeyChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

// Parser of one tokenized statement.
class StatementParser {
 public:
  StatementParser(const std::string& file, const rel::Statement& st)
      : file_(file), toks_(rel::tokenize(st)) {}

  const Token& peek(size_t k = 0) const { return toks_[std::min(pos_ + k, toks_.size() - 1)]; }
  const Token& next() {
    const Token& t = peek();
    if (pos_ < toks_.size() - 1) ++pos_;
    return t;
  }
  SourceLoc loc(const Token& t) const { return {file_, t.line}; }

  [[noreturn]] void fail(const Token& at, const std::string& msg) const {
    throw InputError(loc(at), msg);
  }

  void expect(Kind kind, const std::string& what) {
    if (peek().kind != kind) fail(peek(), "expected " + what + ", got " + rel::describe(peek()));
    next();
  }

  void expectEnd(const std::string& after) {
    if (peek().kind != Kind::End)
      fail(peek(), "unexpected " + rel::describe(peek()) + " after " + after);
  }

  TensorName tensor(const std::string& role) {
    const Token& t = peek();
    if (t.kind != Kind::Word) fail(t, "expected " + role + ", got " + rel::describe(t));
    auto name = rel::parseTensorName(t.text);
    if (!name) failBadTensor(t);
    next();
    return *name;
  }

  [[noreturn]] void failBadTensor(const Token& t) const {
    fail(t, "bad tensor name '" + std::string(t.text) + "' (expected S.name, Dk.name or D*.name)");
  }

  RelExpr expr() {
    const Token& t = peek();
    // Bounded so that a hostile file cannot overflow the stack (here or in the passes over the tree).
    if (depth_ >= kMaxDepth) fail(t, "expression nested more than " + std::to_string(kMaxDepth) + " levels deep");
    struct Nest {
      int& d;
      explicit Nest(int& d) : d(++d) {}
      ~Nest() { --d; }
    } nest(depth_);
    RelExpr e;
    e.loc = loc(t);
    if (t.kind == Kind::LBracket) return intList();
    if (t.kind != Kind::Word) fail(t, "expected an expression, got " + rel::describe(t));
    next();
    if (peek().kind == Kind::LParen) {
      e.kind = RelExpr::Kind::Call;
      e.op = std::string(t.text);
      if (!rel::isKnownOp(e.op))
        fail(t, "unknown op '" + e.op +
                    "' (known: concat, shard, sum, slice, transpose, permute, reshape)");
      callArgs(e);
      rel::checkCall(e);
      return e;
    }
    if (auto i = rel::parseInt(t.text)) {
      e.kind = RelExpr::Kind::Int;
      e.i = *i;
      return e;
    }
    if (auto f = rel::parseNumber(t.text)) {
      e.kind = RelExpr::Kind::Float;
      e.f = *f;
      return e;
    }
    if (auto name = rel::parseTensorName(t.text)) {
      e.kind = RelExpr::Kind::Tensor;
      e.tensor = *name;
      return e;
    }
    if (!t.text.empty() && (t.text[0] == '-' || (t.text[0] >= '0' && t.text[0] <= '9')))
      fail(t, "bad number '" + std::string(t.text) + "'");
    failBadTensor(t);
  }

  // Parses one side of an expectation or relation: an expression that must
  // stand for a tensor.
  RelExpr tensorExpr(const std::string& role) {
    RelExpr e = expr();
    if (e.kind != RelExpr::Kind::Tensor && e.kind != RelExpr::Kind::Call)
      throw InputError(e.loc, role + " must be a tensor expression, got " + e.toString());
    return e;
  }

  // Comma-separated tensor names (input/output statements).
  std::vector<TensorName> tensorList(const std::string& role) {
    std::vector<TensorName> out;
    out.push_back(tensor(role));
    while (peek().kind == Kind::Comma) {
      next();
      out.push_back(tensor(role));
    }
    expectEnd(out.back().toString());
    return out;
  }

  const Token& current() const { return peek(); }

 private:
  void callArgs(RelExpr& call) {
    const Token& open = next();  // '('
    bool sawKeyword = false;
    while (peek().kind != Kind::RParen) {
      if (peek().kind == Kind::End) fail(open, "unclosed '(' in call to " + call.op);
      if (peek().kind == Kind::Word && peek(1).kind == Kind::Equals) {
        std::string key(next().text);
        next();  // '='
        call.kwargs.emplace_back(std::move(key), expr());
        sawKeyword = true;
      } else {
        const Token& at = peek();
        if (sawKeyword) fail(at, "positional argument after keyword argument in " + call.op);
        call.args.push_back(expr());
      }
      if (peek().kind == Kind::Comma) {
        next();
      } else if (peek().kind != Kind::RParen) {
        fail(peek(), "expected ',' or ')' in call to " + call.op + ", got " + rel::describe(peek()));
      }
    }
    next();  // ')'
  }

  RelExpr intList() {
    RelExpr e;
    e.kind = RelExpr::Kind::IntList;
    e.loc = loc(peek());
    next();  // '['
    while (peek().kind != Kind::RBracket) {
      const Token& t = peek();
      auto v = t.kind == Kind::Word ? rel::parseInt(t.text) : std::nullopt;
      if (!v) fail(t, "expected an integer in list, got " + rel::describe(t));
      e.ints.push_back(*v);
      next();
      if (peek().kind == Kind::Comma) {
        next();
      } else if (peek().kind != Kind::RBracket) {
        fail(peek(), "expected ',' or ']' in integer list, got " + rel::describe(peek()));
      }
    }
    next();  // ']'
    return e;
  }

  static constexpr int kMaxDepth = 100;
  const std::string& file_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  int depth_ = 0;  // calls of expr() in progress
};

// Builds a RelationFile statement by statement.
class FileParser {
 public:
  explicit FileParser(const std::string& path) { out_.path = path; }

  RelationFile run(std::string_view text) {
    for (const rel::Statement& st : rel::splitStatements(text, out_.path)) statement(st);
    return std::move(out_);
  }

 private:
  SourceLoc at(int line) const { return {out_.path, line}; }

  void statement(const rel::Statement& st) {
    std::string_view text = st.text;
    size_t wordEnd = 0;
    while (wordEnd < text.size() && text[wordEnd] != ' ' && text[wordEnd] != '\t') ++wordEnd;
    std::string_view keyword = text.substr(0, wordEnd);
    std::string_view rest = trim(text.substr(wordEnd));
    if (keyword == "spec") return specStatement(rest, st.line);
    if (keyword == "impl") return implStatement(rest, st.line);
    if (keyword == "option") return optionStatement(rest, st.line);
    if (keyword == "lemmas") return lemmasStatement(rest, st.line);
    if (keyword == "assume") return assumeStatement(rest, st.line);

    StatementParser p(out_.path, st);
    const Token first = p.next();
    if (first.kind != Kind::Word)
      p.fail(first, "unknown statement starting with " + rel::describe(first));
    if (first.text == "const") return constStatement(p);
    if (first.text == "input") return inputStatement(p);
    if (first.text == "output") return outputStatement(p);
    if (first.text == "expect") return expectStatement(p, first);
    if (first.text == "group") return groupStatement(p, first);
    if (first.text == "zero") return zeroStatement(p, first);
    if (rel::looksLikeTensorName(first.text) || p.current().kind == Kind::Equals)
      return relationStatement(p, first);
    p.fail(first, "unknown statement '" + std::string(first.text) +
                      "' (expected spec, impl, const, input, output, expect, group, option, lemmas, assume, zero or S.x = ...)");
  }

  void specStatement(std::string_view rest, int line) {
    if (rest.empty()) throw InputError(at(line), "spec needs a path");
    if (out_.specPath)
      throw InputError(at(line), "spec given twice (first on line " + std::to_string(specLine_) + ")");
    out_.specPath = resolvePath(out_.path, rest);
    specLine_ = line;
  }

  void implStatement(std::string_view rest, int line) {
    if (out_.implPattern)
      throw InputError(at(line), "impl given twice (first on line " + std::to_string(implLine_) + ")");
    auto words = splitWords(rest);
    std::string_view path = rest;
    if (words.size() >= 2 && words[words.size() - 2] == "ranks") {
      auto n = rel::parseInt(words.back());
      if (!n || *n < 1 || *n > 1'000'000)
        throw InputError(at(line), "impl ranks must be a positive integer, got '" +
                                       std::string(words.back()) + "'");
      out_.implRanks = static_cast<int>(*n);
      path = trim(rest.substr(0, static_cast<size_t>(words[words.size() - 2].data() - rest.data())));
    } else if (!words.empty() && words.back() == "ranks") {
      throw InputError(at(line), "impl ... ranks needs a rank count");
    }
    if (path.empty()) throw InputError(at(line), "impl needs a path pattern such as fw.g0.r{rank}.py");
    out_.implPattern = resolvePath(out_.path, path);
    implLine_ = line;
  }

  void lemmasStatement(std::string_view rest, int line) {
    if (rest.empty()) throw InputError(at(line), "lemmas needs the path of a lemma file");
    out_.lemmaPaths.push_back(resolvePath(out_.path, rest));
    out_.lemmaLocs.push_back(at(line));
  }

  // The sides are sym expressions, parsed when the graphs' symbols are known.
  void assumeStatement(std::string_view rest, int line) {
    static constexpr std::string_view kOps[] = {"==", "<=", ">=", "<", ">", "="};
    for (std::string_view op : kOps) {
      size_t at_ = rest.find(op);
      if (at_ == std::string_view::npos) continue;
      std::string lhs(trim(rest.substr(0, at_))), rhs(trim(rest.substr(at_ + op.size())));
      if (lhs.empty() || rhs.empty()) break;
      out_.assumptions.push_back({lhs, op == "=" ? "==" : std::string(op), rhs, at(line)});
      return;
    }
    throw InputError(at(line), "assume needs a comparison of symbolic sizes, e.g. `assume S.s0 == 2*D*.s0`");
  }

  void optionStatement(std::string_view rest, int line) {
    size_t eq = rest.find('=');
    if (eq == std::string_view::npos)
      throw InputError(at(line), "missing '=' in option (write: option key = value)");
    std::string key(trim(rest.substr(0, eq)));
    std::string value(trim(rest.substr(eq + 1)));
    if (key.empty() || !std::all_of(key.begin(), key.end(), isKeyChar))
      throw InputError(at(line), "bad option name '" + key + "'");
    if (value.empty()) throw InputError(at(line), "option '" + key + "' needs a value");
    if (auto it = optionLines_.find(key); it != optionLines_.end())
      throw InputError(at(line), "option '" + key + "' set twice (first on line " +
                                     std::to_string(it->second) + ")");
    optionLines_[key] = line;
    out_.options[key] = value;
    out_.optionLocs[key] = at(line);
  }

  void constStatement(StatementParser& p) {
    const Token nameTok = p.current();
    ConstantDecl c;
    c.loc = p.loc(nameTok);
    c.tensor = p.tensor("a tensor name after const");
    p.expect(Kind::Equals, "'=' after const " + c.tensor.toString());
    const Token& v = p.current();
    auto value = v.kind == Kind::Word ? rel::parseNumber(v.text) : std::nullopt;
    if (!value) p.fail(v, "const value must be a number, got " + rel::describe(v));
    p.next();
    p.expectEnd("const value");
    for (const ConstantDecl& d : out_.constants)
      if (sameTensor(d.tensor, c.tensor))
        p.fail(nameTok, "const " + c.tensor.toString() + " declared twice (first on line " +
                            std::to_string(d.loc.line) + ")");
    c.value = *value;
    out_.constants.push_back(std::move(c));
  }

  void inputStatement(StatementParser& p) {
    const SourceLoc loc = p.loc(p.current());
    for (TensorName& t : p.tensorList("a tensor name")) {
      out_.cutInputs.push_back(std::move(t));
      out_.cutInputLocs.push_back(loc);
    }
  }

  void outputStatement(StatementParser& p) {
    const Token first = p.current();
    for (TensorName& t : p.tensorList("a spec tensor name")) {
      if (t.side != TensorName::Side::Spec)
        p.fail(first, "output names spec tensors (S.name), got " + t.toString());
      out_.outputs.push_back(std::move(t));
      out_.outputLocs.push_back(p.loc(first));
    }
  }

  void expectStatement(StatementParser& p, const Token& keyword) {
    Expectation x;
    x.loc = p.loc(keyword);
    x.lhs = p.tensorExpr("the left side of expect");
    if (p.current().kind != Kind::Equals)
      p.fail(p.current(), "missing '=' in expect after " + x.lhs.toString());
    p.next();
    x.rhs = p.tensorExpr("the right side of expect");
    p.expectEnd(x.rhs.toString());
    bool perRank = rel::isStarTensor(x.lhs) || rel::isStarTensor(x.rhs);
    rel::checkStars(x.lhs, perRank);
    rel::checkStars(x.rhs, perRank);
    out_.expectations.push_back(std::move(x));
  }

  // zero EXPR: an implementation input (or a slice of one) holds zeros there.
  void zeroStatement(StatementParser& p, const Token& keyword) {
    ZeroRegion z;
    z.loc = p.loc(keyword);
    z.region = p.tensorExpr("a region after zero, e.g. slice(D3.w, dim=0, start=1, end=3)");
    p.expectEnd(z.region.toString());
    const RelExpr* base = &z.region;
    while (base->kind == RelExpr::Kind::Call && base->op == "slice" && !base->args.empty()) base = &base->args[0];
    if (base->kind != RelExpr::Kind::Tensor || base->tensor.side != TensorName::Side::Impl)
      p.fail(keyword, "zero needs an implementation tensor or slice(...) of one, got " + z.region.toString());
    rel::checkStars(z.region, rel::isStarTensor(z.region));
    out_.zeros.push_back(std::move(z));
  }

  void groupStatement(StatementParser& p, const Token& keyword) {
    const Token name = p.current();
    if (name.kind != Kind::Word) p.fail(name, "group needs a name, got " + rel::describe(name));
    p.next();
    std::string key(name.text);
    p.expect(Kind::Equals, "'=' after group " + key);
    std::vector<int> ranks;
    while (p.current().kind != Kind::End) {
      const Token& t = p.current();
      if (t.kind == Kind::Comma && !ranks.empty()) {
        p.next();
        continue;
      }
      auto r = t.kind == Kind::Word ? rel::parseInt(t.text) : std::nullopt;
      if (!r || *r < 0 || *r > 1'000'000)
        p.fail(t, "group " + key + ": expected a rank number, got " + rel::describe(t));
      if (std::find(ranks.begin(), ranks.end(), *r) != ranks.end())
        p.fail(t, "group " + key + " lists rank " + std::to_string(*r) + " twice");
      ranks.push_back(static_cast<int>(*r));
      p.next();
    }
    if (ranks.empty()) p.fail(name, "group " + key + " lists no ranks");
    if (auto it = out_.groupLocs.find(key); it != out_.groupLocs.end())
      p.fail(name, "group " + key + " declared twice (first on line " +
                       std::to_string(it->second.line) + ")");
    out_.groups[key] = std::move(ranks);
    out_.groupLocs[key] = p.loc(keyword);
  }

  void relationStatement(StatementParser& p, const Token& first) {
    auto lhs = rel::parseTensorName(first.text);
    if (!lhs) p.failBadTensor(first);
    if (lhs->side != TensorName::Side::Spec)
      p.fail(first, "the left side of a relation must be a spec tensor (S.name), got " +
                        lhs->toString() + " (use expect for other equalities)");
    if (p.current().kind != Kind::Equals)
      p.fail(p.current(), "missing '=' after " + lhs->toString() + " (write: " + lhs->toString() +
                              " = expression)");
    p.next();
    RelationEntry r;
    r.lhs = *lhs;
    r.loc = p.loc(first);
    r.rhs = p.tensorExpr("the right side of " + lhs->toString() + " =");
    p.expectEnd(r.rhs.toString());
    rel::checkStars(r.rhs, rel::isStarTensor(r.rhs));
    out_.relations.push_back(std::move(r));
  }

  static bool sameTensor(const TensorName& a, const TensorName& b) {
    return a.side == b.side && a.rank == b.rank && a.allRanks == b.allRanks && a.name == b.name;
  }

  RelationFile out_;
  int specLine_ = 0, implLine_ = 0;
  std::map<std::string, int> optionLines_;
};

}  // namespace

RelationFile parseRelationText(const std::string& text, const std::string& path) {
  return FileParser(path).run(text);
}

RelationFile parseRelationFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw InputError({path, 0}, "cannot open relation file '" + path + "'");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError({path, 0}, "cannot open relation file '" + path + "'");
  std::ostringstream buf;
  buf << in.rdbuf();
  return parseRelationText(buf.str(), path);
}

}  // namespace tangle
