// Parser of the pattern text syntax (grammar in pattern.h).
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <utility>

#include "egraph/pattern_impl.h"

namespace tangle::eg {

namespace {

struct Token {
  enum class Kind { LParen, RParen, LBrack, RBrack, Comma, String, Atom, End } kind;
  size_t pos;        // byte offset in the text
  std::string text;  // Atom: the atom; String: the unescaped contents
};

bool isDelimiter(char c) {
  return c == '(' || c == ')' || c == '[' || c == ']' || c == ',' || c == '"' || c == ' ' || c == '\t' ||
         c == '\n' || c == '\r';
}

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  std::shared_ptr<detail::PatternData> parse() {
    impl_ = std::make_shared<detail::PatternData>();
    impl_->text = std::string(text_);
    impl_->root = parseNode();
    Token t = next();
    if (t.kind != Token::Kind::End) fail(t, "unexpected text after the pattern");
    assignOrder();
    return impl_;
  }

 private:
  [[noreturn]] void fail(const Token& t, const std::string& what) const {
    std::string near = t.kind == Token::Kind::End ? std::string("end of pattern") : "'" + describe(t) + "'";
    // A long pattern is cut: the column says where the problem is.
    std::string shown = text_.size() <= 160 ? std::string(text_) : std::string(text_.substr(0, 120)) + " ...";
    throw std::invalid_argument("pattern \"" + shown + "\": column " + std::to_string(t.pos + 1) +
                                " at " + near + ": " + what);
  }
  static std::string describe(const Token& t) {
    switch (t.kind) {
      case Token::Kind::LParen: return "(";
      case Token::Kind::RParen: return ")";
      case Token::Kind::LBrack: return "[";
      case Token::Kind::RBrack: return "]";
      case Token::Kind::Comma: return ",";
      case Token::Kind::String: return "\"" + t.text + "\"";
      default: return t.text;
    }
  }

  Token lex() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\r'))
      ++pos_;
    size_t start = pos_;
    if (pos_ >= text_.size()) return {Token::Kind::End, start, ""};
    char c = text_[pos_];
    switch (c) {
      case '(': ++pos_; return {Token::Kind::LParen, start, ""};
      case ')': ++pos_; return {Token::Kind::RParen, start, ""};
      case '[': ++pos_; return {Token::Kind::LBrack, start, ""};
      case ']': ++pos_; return {Token::Kind::RBrack, start, ""};
      case ',': ++pos_; return {Token::Kind::Comma, start, ""};
      case '"': {
        std::string s;
        ++pos_;
        while (pos_ < text_.size() && text_[pos_] != '"') {
          if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) ++pos_;
          s += text_[pos_++];
        }
        if (pos_ >= text_.size()) fail({Token::Kind::String, start, s}, "unterminated string");
        ++pos_;
        return {Token::Kind::String, start, s};
      }
      default: break;
    }
    while (pos_ < text_.size() && !isDelimiter(text_[pos_])) ++pos_;
    return {Token::Kind::Atom, start, std::string(text_.substr(start, pos_ - start))};
  }

  Token next() {
    if (peeked_) {
      Token t = std::move(*peeked_);
      peeked_.reset();
      return t;
    }
    return lex();
  }
  const Token& peek() {
    if (!peeked_) peeked_ = lex();
    return *peeked_;
  }

  static bool isVariable(const Token& t) { return t.kind == Token::Kind::Atom && t.text.size() > 1 && t.text[0] == '?'; }
  static bool isListVariable(const Token& t) {
    return isVariable(t) && t.text.size() > 4 && t.text.compare(t.text.size() - 3, 3, "...") == 0;
  }

  // Variables share one namespace: a name may not be used in two roles.
  enum class Role { Class, Attr, List };
  int variable(const Token& t, std::string name, Role role) {
    if (name.empty()) fail(t, "empty variable name");
    auto index = [](std::vector<std::string>& names, const std::string& n) {
      for (size_t i = 0; i < names.size(); ++i)
        if (names[i] == n) return static_cast<int>(i);
      names.push_back(n);
      return static_cast<int>(names.size() - 1);
    };
    auto has = [](const std::vector<std::string>& names, const std::string& n) {
      for (const auto& x : names)
        if (x == n) return true;
      return false;
    };
    detail::PatternData& p = *impl_;
    bool clash = (role != Role::Class && has(p.classVars, name)) || (role != Role::Attr && has(p.attrVars, name)) ||
                 (role != Role::List && has(p.listVars, name));
    if (clash) fail(t, "variable ?" + name + " is used in two roles (e-class, attribute, list)");
    switch (role) {
      case Role::Class: return index(p.classVars, name);
      case Role::Attr: return index(p.attrVars, name);
      case Role::List: return index(p.listVars, name);
    }
    return -1;
  }

  int addNode(PatNode n) {
    impl_->nodes.push_back(std::move(n));
    return static_cast<int>(impl_->nodes.size() - 1);
  }

  int parseNode() {
    Token t = next();
    // Bounded against stack overflow here and in the recursive passes over patterns.
    if (depth_ >= kMaxDepth) fail(t, "nested more than " + std::to_string(kMaxDepth) + " levels deep");
    ++depth_;
    int id = parseNodeBody(t);
    --depth_;
    return id;
  }

  int parseNodeBody(const Token& t) {
    if (isListVariable(t)) fail(t, "a list variable may only be the last child of an operator");
    if (isVariable(t)) {
      PatNode n;
      n.isVar = true;
      n.var = variable(t, t.text.substr(1), Role::Class);
      return addNode(std::move(n));
    }
    if (t.kind != Token::Kind::LParen) fail(t, "expected '(' or a ?variable");
    Token opTok = next();
    if (opTok.kind != Token::Kind::Atom || opTok.text[0] == '?')
      fail(opTok, "expected an operator name after '('");
    PatNode n;
    n.op = intern(opTok.text);
    if (peek().kind == Token::Kind::LBrack) {
      next();
      parseAttrs(n);
    }
    while (true) {
      const Token& c = peek();
      if (c.kind == Token::Kind::RParen) {
        next();
        break;
      }
      if (c.kind == Token::Kind::End) fail(c, "missing ')'");
      if (isListVariable(c)) {
        Token lv = next();
        n.listVar = variable(lv, lv.text.substr(1, lv.text.size() - 4), Role::List);
        Token close = next();
        if (close.kind != Token::Kind::RParen) fail(close, "a list variable must be the last child (expected ')')");
        break;
      }
      int child = parseNode();
      n.children.push_back(child);
    }
    if (n.literalAttrs) {
      AttrList list;
      for (const PatAttr& a : n.attrs) list.push_back(a.literal);
      n.attrsId = internAttrs(list);
    }
    return addNode(std::move(n));
  }

  void parseAttrs(PatNode& n) {
    if (peek().kind == Token::Kind::RBrack) {
      next();
      return;
    }
    while (true) {
      n.attrs.push_back(parseAttr());
      if (n.attrs.back().kind != PatAttr::Kind::Literal) n.literalAttrs = false;
      Token t = next();
      if (t.kind == Token::Kind::RBrack) return;
      if (t.kind != Token::Kind::Comma) fail(t, "expected ',' or ']' in the attribute list");
    }
  }

  PatAttr parseAttr() {
    Token t = next();
    PatAttr a;
    if (t.kind == Token::Kind::String) {
      a.literal = Attr::str(t.text);
      return a;
    }
    if (t.kind == Token::Kind::LBrack) {
      std::vector<int64_t> values;
      if (peek().kind == Token::Kind::RBrack) {
        next();
      } else {
        while (true) {
          Token v = next();
          int64_t x;
          if (v.kind != Token::Kind::Atom || !parseInt(v.text, x)) fail(v, "expected an integer in the list");
          values.push_back(x);
          Token sep = next();
          if (sep.kind == Token::Kind::RBrack) break;
          if (sep.kind != Token::Kind::Comma) fail(sep, "expected ',' or ']' in the integer list");
        }
      }
      a.literal = Attr::ints(std::move(values));
      return a;
    }
    if (t.kind != Token::Kind::Atom) fail(t, "expected an attribute");
    if (t.text == "_") {
      a.kind = PatAttr::Kind::Any;
    } else if (isVariable(t)) {
      if (isListVariable(t)) fail(t, "list variables are not attributes");
      a.kind = PatAttr::Kind::Var;
      a.var = variable(t, t.text.substr(1), Role::Attr);
    } else if (t.text == "true" || t.text == "false") {
      a.literal = Attr::boolean(t.text == "true");
    } else if (t.text == "none") {
      a.literal = Attr::none();
    } else {
      int64_t i;
      double f;
      if (parseInt(t.text, i)) a.literal = Attr::integer(i);
      else if (parseFloat(t.text, f)) a.literal = Attr::real(f);
      else fail(t, "expected an attribute (number, true, false, none, \"string\", [ints], ?var or _)");
    }
    return a;
  }

  static bool parseInt(const std::string& s, int64_t& out) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && p == s.data() + s.size();
  }
  static bool parseFloat(const std::string& s, double& out) {
    if (s.empty()) return false;
    char* end = nullptr;
    errno = 0;
    out = std::strtod(s.c_str(), &end);
    return end == s.c_str() + s.size() && errno != ERANGE;
  }

  // Fixes the binding order and which variable occurrences bind (see PatternData).
  void assignOrder() {
    detail::PatternData& p = *impl_;
    std::vector<uint8_t> classSeen(p.classVars.size()), attrSeen(p.attrVars.size()), listSeen(p.listVars.size());
    PatNode& root = p.nodes[p.root];
    if (root.isVar) {
      root.firstUse = true;
      return;
    }
    std::vector<int> stack{p.root};
    std::vector<int> depth(p.nodes.size(), 0);
    while (!stack.empty()) {
      int id = stack.back();
      stack.pop_back();
      p.bindOrder.push_back(id);
      PatNode& n = p.nodes[id];
      if (id != p.root && std::find(p.innerOps.begin(), p.innerOps.end(), n.op) == p.innerOps.end())
        p.innerOps.push_back(n.op);
      if (!n.children.empty() || n.listVar >= 0) p.height = std::max(p.height, depth[id] + 1);
      for (int c : n.children) depth[c] = depth[id] + 1;
      for (PatAttr& a : n.attrs)
        if (a.kind == PatAttr::Kind::Var) a.firstUse = !std::exchange(attrSeen[a.var], 1);
      for (int c : n.children) {
        PatNode& child = p.nodes[c];
        if (child.isVar) child.firstUse = !std::exchange(classSeen[child.var], 1);
      }
      if (n.listVar >= 0) n.listFirstUse = !std::exchange(listSeen[n.listVar], 1);
      for (auto it = n.children.rbegin(); it != n.children.rend(); ++it)
        if (!p.nodes[*it].isVar) stack.push_back(*it);
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
  std::optional<Token> peeked_;
  static constexpr int kMaxDepth = 100;
  int depth_ = 0;  // parseNode() calls in progress
  std::shared_ptr<detail::PatternData> impl_;
};

}  // namespace

Pattern Pattern::parse(std::string_view text) {
  Pattern p;
  p.impl_ = Parser(text).parse();
  const PatNode& root = p.impl_->nodes[p.impl_->root];
  p.height_ = p.impl_->height;
  p.hasRootOp_ = !root.isVar;
  p.rootOp_ = root.isVar ? 0 : root.op;
  return p;
}

}  // namespace tangle::eg
