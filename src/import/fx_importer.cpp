#include "import/fx_importer.h"

#include <array>
#include <charconv>
#include <cstring>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <unordered_map>

#include "import/text_file.h"
#include "import/type_annotation.h"
#include "sym/context.h"

namespace tangle {

namespace {

// ---------------------------------------------------------------- lexer ----

enum class Tok : uint8_t { Name, Number, String, Op, Newline, Comment, End };

struct Token {
  Tok kind = Tok::End;
  char op = 0;            // Op: the character
  std::string_view text;  // source text (String: including quotes; Comment: after '#')
  int line = 0;
  size_t begin = 0;       // offset of the first character in the source
};

// Character classes by table: the lexer asks for every byte of the dump.
enum : uint8_t { kIdentStart = 1, kDigit = 2 };
constexpr std::array<uint8_t, 256> kCharClass = [] {
  std::array<uint8_t, 256> t{};
  for (int c = 'a'; c <= 'z'; ++c) t[static_cast<size_t>(c)] = kIdentStart;
  for (int c = 'A'; c <= 'Z'; ++c) t[static_cast<size_t>(c)] = kIdentStart;
  t['_'] = kIdentStart;
  for (int c = '0'; c <= '9'; ++c) t[static_cast<size_t>(c)] = kDigit;
  return t;
}();
uint8_t charClass(char c) { return kCharClass[static_cast<unsigned char>(c)]; }
bool isIdentStart(char c) { return charClass(c) == kIdentStart; }
bool isDigit(char c) { return charClass(c) == kDigit; }
bool isIdentChar(char c) { return charClass(c) != 0; }

// Python-style tokens. As in Python, a line break inside brackets does not end
// the statement; a comment on a line of its own is a token (it carries the
// source location of the following nodes), other comments are skipped.
class Lexer {
 public:
  Lexer(std::string_view src, const std::string& path) : s_(src), path_(path) {}

  Token next() {
    for (;;) {
      while (p_ < s_.size() && (s_[p_] == ' ' || s_[p_] == '\t' || s_[p_] == '\r' || s_[p_] == '\f')) ++p_;
      Token t;
      t.line = line_;
      t.begin = p_;
      if (p_ >= s_.size()) {
        if (!atLineStart_ && depth_ == 0) {  // a last line without '\n' still ends its statement
          atLineStart_ = true;
          t.kind = Tok::Newline;
          return t;
        }
        t.kind = Tok::End;
        return t;
      }
      char c = s_[p_];
      if (c == '\n') {
        ++p_;
        ++line_;
        if (depth_ > 0) continue;  // implicit line joining inside brackets
        atLineStart_ = true;
        t.kind = Tok::Newline;
        return t;
      }
      if (c == '#') {
        size_t eol = s_.find('\n', p_);
        if (eol == std::string_view::npos) eol = s_.size();
        std::string_view body = s_.substr(p_ + 1, eol - p_ - 1);
        p_ = eol;
        if (!atLineStart_ || depth_ > 0) continue;
        while (!body.empty() && body.front() == ' ') body.remove_prefix(1);
        while (!body.empty() && (body.back() == ' ' || body.back() == '\r')) body.remove_suffix(1);
        t.kind = Tok::Comment;
        t.text = body;
        return t;
      }
      atLineStart_ = false;
      if (isIdentStart(c)) {
        size_t e = p_ + 1;
        while (e < s_.size() && isIdentChar(s_[e])) ++e;
        t.kind = Tok::Name;
        t.text = s_.substr(p_, e - p_);
        p_ = e;
        return t;
      }
      if (isDigit(c) || (c == '.' && p_ + 1 < s_.size() && isDigit(s_[p_ + 1]))) {
        size_t e = p_ + 1;
        while (e < s_.size()) {
          char d = s_[e];
          if (isIdentChar(d) || d == '.') {
            ++e;
          } else if ((d == '-' || d == '+') && (s_[e - 1] == 'e' || s_[e - 1] == 'E')) {
            ++e;  // exponent sign
          } else {
            break;
          }
        }
        t.kind = Tok::Number;
        t.text = s_.substr(p_, e - p_);
        p_ = e;
        return t;
      }
      if (c == '\'' || c == '"') {
        size_t e = p_ + 1;
        while (e < s_.size() && s_[e] != c && s_[e] != '\n') e += (s_[e] == '\\' && e + 1 < s_.size()) ? 2 : 1;
        if (e >= s_.size() || s_[e] != c)
          throw InputError(SourceLoc{path_, line_}, "unterminated string literal (expected a closing " +
                                                        std::string(1, c) + " on the same line)");
        t.kind = Tok::String;
        t.text = s_.substr(p_, e + 1 - p_);
        p_ = e + 1;
        return t;
      }
      if (c == '(' || c == '[' || c == '{') ++depth_;
      if ((c == ')' || c == ']' || c == '}') && depth_ > 0) --depth_;
      t.kind = Tok::Op;
      t.op = c;
      t.text = s_.substr(p_, 1);
      ++p_;
      return t;
    }
  }

 private:
  std::string_view s_;
  const std::string& path_;
  size_t p_ = 0;
  int line_ = 1;
  int depth_ = 0;
  bool atLineStart_ = true;
};

std::string describe(const Token& t) {
  switch (t.kind) {
    case Tok::Name: return "'" + std::string(t.text) + "'";
    case Tok::Number: return "number " + std::string(t.text);
    case Tok::String: return "string " + std::string(t.text.substr(0, 40));
    case Tok::Op: return "'" + std::string(1, t.op) + "'";
    case Tok::Newline: return "end of line";
    case Tok::Comment: return "a comment";
    case Tok::End: return "end of file";
  }
  return "?";
}

// Decodes a python string literal (quotes included).
std::string unquote(std::string_view lit) {
  std::string out;
  out.reserve(lit.size());
  for (size_t i = 1; i + 1 < lit.size(); ++i) {
    char c = lit[i];
    if (c != '\\' || i + 2 >= lit.size()) {
      out += c;
      continue;
    }
    char e = lit[++i];
    switch (e) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case '0': out += '\0'; break;
      case '\\': case '\'': case '"': out += e; break;
      case 'x':
        if (i + 2 < lit.size()) {
          int v = 0;
          auto [ptr, ec] = std::from_chars(lit.data() + i + 1, lit.data() + i + 3, v, 16);
          if (ec == std::errc() && ptr == lit.data() + i + 3) {
            out += static_cast<char>(v);
            i += 2;
            break;
          }
        }
        [[fallthrough]];
      default: out += '\\'; out += e;
    }
  }
  return out;
}

// --------------------------------------------------------------- parser ----

// What a type annotation says: a tensor type, or the value of a Sym(...).
struct Annotation {
  std::optional<TensorType> type;
  std::optional<sym::ExprId> symValue;
  bool complex = false;
};

struct Param {
  std::string name;
  Annotation ann;
  int line = 0;
};

class FxParser {
 public:
  FxParser(std::string_view text, const std::string& path) : text_(text), path_(path), lex_(text, path) {
    tok_ = lex_.next();
    g_.path = path;
    size_t lines = 0;  // a node a line, at most
    for (const char* p = text.data(); !text.empty() &&
                                      (p = static_cast<const char*>(std::memchr(p, '\n', text.data() + text.size() - p)));
         ++p)
      ++lines;
    g_.nodes.reserve(lines);
  }

  Graph run() {
    parseHeader();
    parseForwardSignature();
    parseBody();
    g_.verify();
    return std::move(g_);
  }

 private:
  // ---- token helpers
  void advance() {
    lastEnd_ = tok_.begin + tok_.text.size();
    if (hasPeek_) {
      tok_ = peek_;
      hasPeek_ = false;
    } else {
      tok_ = lex_.next();
    }
  }
  const Token& peek() {
    if (!hasPeek_) {
      peek_ = lex_.next();
      hasPeek_ = true;
    }
    return peek_;
  }
  bool isOp(char c) const { return tok_.kind == Tok::Op && tok_.op == c; }
  bool isName(std::string_view s) const { return tok_.kind == Tok::Name && tok_.text == s; }
  bool atLineEnd() const { return tok_.kind == Tok::Newline || tok_.kind == Tok::End; }

  // Errors are reported at the line where the current statement starts,
  // naming the line of the offending token when it differs.
  [[noreturn]] void fail(const std::string& msg) const {
    failRaw(stmtNode_.empty() ? msg : "node '" + stmtNode_ + "': " + msg);
  }
  [[noreturn]] void failRaw(const std::string& msg) const {
    std::string full = msg;
    if (tok_.line != stmtLine_ && tok_.kind != Tok::End) full += " (at line " + std::to_string(tok_.line) + ")";
    throw InputError(SourceLoc{path_, stmtLine_}, full);
  }
  [[noreturn]] void expected(const std::string& what) const {
    fail("expected " + what + ", found " + describe(tok_));
  }

  void expectOp(char c, const char* what) {
    if (!isOp(c)) expected(std::string("'") + c + "' " + what);
    advance();
  }
  std::string_view expectName(const char* what) {
    if (tok_.kind != Tok::Name) expected(what);
    std::string_view n = tok_.text;
    advance();
    return n;
  }
  void expectLineEnd() {
    if (!atLineEnd()) expected("end of line");
    if (tok_.kind == Tok::Newline) advance();
  }
  void startStatement() {
    stmtLine_ = tok_.line;
    stmtNode_.clear();
  }
  // Skips a balanced bracket group starting at the current '(' / '['.
  void skipGroup() {
    int depth = 0;
    do {
      if (tok_.kind == Tok::End) expected("a closing bracket");
      if (tok_.kind == Tok::Op && (tok_.op == '(' || tok_.op == '[' || tok_.op == '{')) ++depth;
      if (tok_.kind == Tok::Op && (tok_.op == ')' || tok_.op == ']' || tok_.op == '}')) --depth;
      advance();
    } while (depth > 0);
  }
  // NAME(.NAME)* starting at the current Name token.
  std::string dottedName() {
    std::string out(tok_.text);
    advance();
    if (isOp('.')) out.reserve(64);  // "torch.ops.aten.mm.default": one allocation
    while (isOp('.')) {
      advance();
      out += '.';
      out += expectName("a name after '.'");
    }
    return out;
  }

  // ---- header: everything before `class X(torch.nn.Module):`
  void parseHeader() {
    for (;;) {
      startStatement();
      if (tok_.kind == Tok::Newline || tok_.kind == Tok::Comment) {
        advance();
      } else if (tok_.kind == Tok::End) {
        fail("unexpected end of file: expected 'class <name>(torch.nn.Module):' (is this a torch.fx print_readable() dump?)");
      } else if (isName("import") || isName("from")) {
        while (!atLineEnd()) advance();
        expectLineEnd();
      } else if (isName("class")) {
        advance();
        // The class name may be `<lambda>`: accept any tokens up to the final ':'.
        bool colonLast = false;
        while (!atLineEnd()) {
          colonLast = isOp(':');
          advance();
        }
        if (!colonLast) fail("expected ':' at the end of the 'class' line");
        expectLineEnd();
        return;
      } else if (tok_.kind == Tok::Name && peek().kind == Tok::Op && peek().op == ':') {
        advance();  // `f32: type` declarations
        advance();
        expectName("a type name");
        expectLineEnd();
      } else {
        expected("'class <name>(torch.nn.Module):', an import or a comment before the graph");
      }
    }
  }

  // ---- `def forward(self, a: "f32[8]", ...):`
  void parseForwardSignature() {
    for (;;) {
      startStatement();
      if (tok_.kind == Tok::Newline || tok_.kind == Tok::Comment) {
        advance();
        continue;
      }
      if (!isName("def")) expected("'def forward(self, ...):'");
      break;
    }
    advance();
    expectName("a method name after 'def'");
    expectOp('(', "after the method name");
    std::string_view self = expectName("'self' as the first parameter");
    if (self != "self") fail("expected 'self' as the first parameter of forward(), found '" + std::string(self) + "'");
    while (isOp(',')) {
      advance();
      if (isOp(')')) break;
      Param p;
      p.line = tok_.line;
      p.name = std::string(expectName("a parameter name"));
      if (isOp(':')) {
        advance();
        stmtNode_ = p.name;
        p.ann = parseAnnotation(p.name);
        stmtNode_.clear();
      }
      params_.push_back(std::move(p));
    }
    expectOp(')', "closing the parameters of forward()");
    if (isOp('-')) {  // return annotation `-> ...`
      while (!isOp(':') && !atLineEnd()) advance();
    }
    expectOp(':', "after the forward() signature");
    expectLineEnd();
  }

  Annotation parseAnnotation(const std::string& node) {
    if (tok_.kind != Tok::String) expected("a type annotation string such as \"f32[8, 16]\"");
    // Without escapes the literal's text between its quotes is its value.
    std::string_view lit = tok_.text;
    std::string unquoted;
    std::string_view text = lit.substr(1, lit.size() - 2);
    if (lit.find('\\') != std::string_view::npos) text = unquoted = unquote(lit);
    AnnotationResult r = parseTypeAnnotation(text);
    if (!r.ok) fail("cannot parse the type annotation \"" + std::string(text) + "\": " + r.error);
    advance();
    return {std::move(r.type), r.symValue, r.complex};
  }

  // ---- body
  void parseBody() {
    for (;;) {
      startStatement();
      switch (tok_.kind) {
        case Tok::Newline:
          advance();
          continue;
        case Tok::Comment:
          if (tok_.text.substr(0, 5) == "File:") source_ = std::string(tok_.text);
          else source_.clear();
          advance();
          continue;
        case Tok::End:
          fail("unexpected end of file: expected a 'return' statement ending forward() (truncated file?)");
        case Tok::Name:
          break;
        default:
          expected("a node definition or 'return'");
      }
      if (isName("return")) {
        parseReturn();
        return;
      }
      if (isName("class") || isName("def"))
        fail("unsupported nested '" + std::string(tok_.text) + "': only one forward() per dump is supported");
      parseStatement();
    }
  }

  void parseStatement() {
    std::string name(tok_.text);
    stmtNode_ = name;
    advance();
    if (isOp(',')) return parseTupleUnpack(std::move(name));
    Annotation ann;
    if (isOp(':')) {
      advance();
      ann = parseAnnotation(name);
      if (isOp(';') || atLineEnd()) return parseDeclarations(std::move(name), std::move(ann));
    }
    if (!isOp('=')) expected("':' or '=' after '" + name + "'");
    advance();
    materializePlaceholders();

    Node n;
    n.name = std::move(name);
    n.type = std::move(ann.type);
    n.symValue = ann.symValue;
    n.complexView = ann.complex;
    n.loc = SourceLoc{path_, stmtLine_};
    n.source = source_;
    parseRhs(n);
    parseCleanup();
    expectLineEnd();
    checkSymSize(n);
    g_.add(std::move(n));
  }

  // `x: "f32[4]"; y: "i64[]"; ` — placeholder declarations of pytree-style dumps.
  void parseDeclarations(std::string name, Annotation ann) {
    for (;;) {
      declared_.push_back(Param{name, std::move(ann), stmtLine_});
      if (!isOp(';')) break;
      advance();
      if (atLineEnd()) break;
      name = std::string(expectName("a parameter declaration after ';'"));
      stmtNode_ = name;
      expectOp(':', "in a parameter declaration");
      ann = parseAnnotation(name);
    }
    expectLineEnd();
  }

  // `a, b, = fx_pytree.tree_flatten_spec([primals, tangents], self._in_spec)`
  void parseTupleUnpack(std::string first) {
    std::vector<std::string> names{std::move(first)};
    while (isOp(',')) {
      advance();
      if (isOp('=')) break;
      names.emplace_back(expectName("a name in the unpacking assignment"));
    }
    expectOp('=', "after the unpacked names");
    if (tok_.kind != Tok::Name) expected("'fx_pytree.tree_flatten_spec(...)'");
    std::string callee = dottedName();
    if (callee != "fx_pytree.tree_flatten_spec" && callee != "pytree.tree_flatten_spec")
      fail("unsupported tuple assignment from '" + callee + "': only fx_pytree.tree_flatten_spec(...) is understood");
    if (!isOp('(')) expected("'(' after '" + callee + "'");
    skipGroup();
    expectLineEnd();
    if (placeholdersDone_) fail("fx_pytree.tree_flatten_spec(...) after the first node: inputs are already defined");
    for (std::string& n : names) {
      Param p{n, {}, stmtLine_};
      for (const Param& d : declared_)
        if (d.name == n) p.ann = d.ann;
      addPlaceholder(std::move(p));
    }
    placeholdersDone_ = true;
  }

  void addPlaceholder(Param p) {
    Node n;
    n.name = std::move(p.name);
    n.op = "placeholder";
    n.type = std::move(p.ann.type);
    n.symValue = p.ann.symValue;
    n.complexView = p.ann.complex;
    n.loc = SourceLoc{path_, p.line};
    g_.add(std::move(n));
  }

  // Inputs are the forward() parameters, unless a tree_flatten_spec line
  // already defined them; plain declarations without unpacking count too.
  void materializePlaceholders() {
    if (placeholdersDone_) return;
    placeholdersDone_ = true;
    for (Param& p : params_) addPlaceholder(std::move(p));
    for (Param& p : declared_) addPlaceholder(std::move(p));
  }

  void parseRhs(Node& n) {
    if (n.symValue && isSymArithmetic()) return parseSymArithmetic(n);
    if (tok_.kind != Tok::Name) expected("a call, 'self.<attr>' or '<tuple>[<index>]'");
    if (isName("self") && peek().kind == Tok::Op && peek().op == '.') {
      advance();
      advance();
      std::string attr(expectName("an attribute name after 'self.'"));
      while (isOp('.')) {
        advance();
        attr += '.';
        attr += expectName("an attribute name after '.'");
      }
      n.op = "get_attr";
      n.args.emplace_back(std::move(attr));
      return;
    }
    std::string_view first = tok_.text;
    std::string callee = dottedName();
    if (isOp('[')) {
      if (callee.find('.') != std::string::npos) expected("'(' after '" + callee + "'");
      advance();
      NodeId src = resolve(first);
      Value index = parseValue();
      if (!std::holds_alternative<int64_t>(index.v)) fail("expected an integer index in '" + callee + "[...]'");
      expectOp(']', "closing the index");
      Node& tuple = g_.node(src);
      if (!tuple.type) tuple.isTuple = true;
      n.op = "getitem";
      n.args.emplace_back(TensorRef{src});
      n.args.push_back(std::move(index));
      return;
    }
    if (!isOp('(')) expected("'(' or '[' after '" + callee + "'");
    constexpr std::string_view kOps = "torch.ops.";
    n.op = callee.compare(0, kOps.size(), kOps) == 0 ? callee.substr(kOps.size()) : callee;
    parseCallArgs(n.args, &n.kwargs);
  }

  // `size: "Sym(s0)" = torch.ops.aten.sym_size.int(x, 0)` must name x's size.
  void checkSymSize(const Node& n) {
    if (!n.symValue || n.op.rfind("aten.sym_size", 0) != 0 || n.args.size() != 2) return;
    auto x = std::get_if<TensorRef>(&n.args[0].v);
    auto d = std::get_if<int64_t>(&n.args[1].v);
    const std::optional<TensorType>& t = x ? g_.node(x->node).type : std::nullopt;
    if (!t || !d || *d < -t->rank() || *d >= t->rank()) return;
    Dim size = t->shape[static_cast<size_t>(*d < 0 ? *d + t->rank() : *d)];
    if (!symbols_.proveEqual(sym::fromDim(size), *n.symValue))
      throw InputError(n.loc, "node '" + n.name + "': the annotation says Sym(" + sym::toString(*n.symValue) +
                                  ") but dim " + std::to_string(*d) + " of '" + g_.node(x->node).name + "' is " +
                                  sym::dimToString(size));
  }

  // ---- Python arithmetic on symbolic ints: `floordiv: "Sym((s0//2))" = arg0_1 // 2`
  static bool isArithOp(char c) { return c && std::string_view("+-*/%<>=!").find(c) != std::string_view::npos; }
  bool isSymArithmetic() {
    if (tok_.kind == Tok::Number || isOp('-') || isOp('(')) return true;
    if (tok_.kind != Tok::Name) return false;
    const Token& next = peek();
    return next.kind == Tok::Newline || next.kind == Tok::End || (next.kind == Tok::Op && (isArithOp(next.op) || next.op == ';'));
  }

  // The expression's value is checked against the annotation, which is what
  // the node means from then on. Comparisons (SymBool) are kept unchecked.
  void parseSymArithmetic(Node& n) {
    n.op = "sym.arith";
    std::optional<sym::ExprId> v = symSum(n);
    bool compare = false;
    while (tok_.kind == Tok::Op && (tok_.op == '<' || tok_.op == '>' || tok_.op == '=' || tok_.op == '!')) {
      compare = true;
      advance();
      if (isOp('=')) advance();
      symSum(n);
    }
    if (compare) {
      n.op = "sym.compare";
      return;
    }
    if (v && !symbols_.proveEqual(*v, *n.symValue))
      fail("the annotation says Sym(" + sym::toString(*n.symValue) + ") but the expression computes " +
           sym::toString(*v));
  }
  // nullopt when an operand has no known symbolic value.
  std::optional<sym::ExprId> symSum(Node& n) {
    auto v = symProduct(n);
    for (;;) {
      bool plus = isOp('+');
      if (!plus && !isOp('-')) return v;
      advance();
      auto r = symProduct(n);
      v = v && r ? std::optional(plus ? sym::add(*v, *r) : sym::sub(*v, *r)) : std::nullopt;
    }
  }
  std::optional<sym::ExprId> symProduct(Node& n) {
    auto v = symUnary(n);
    for (;;) {
      char op = tok_.kind == Tok::Op ? tok_.op : 0;
      if (op != '*' && op != '/' && op != '%') return v;
      advance();
      bool floor = op == '/' && isOp('/');
      if (floor) advance();
      if (op == '/' && !floor) fail("true division of symbolic integers is not supported");
      auto r = symUnary(n);
      std::optional<sym::ExprId> out;
      if (v && r) {
        auto k = sym::constantValue(*r);
        if (op == '*') out = sym::mul(*v, *r);
        else if (k && floor) out = sym::floorDiv(*v, *k);
        else if (k) out = sym::mod(*v, *k);
      }
      v = out;
    }
  }
  std::optional<sym::ExprId> symUnary(Node& n) {
    if (isOp('-')) {
      advance();
      auto v = symUnary(n);
      return v ? std::optional(sym::neg(*v)) : std::nullopt;
    }
    if (isOp('(')) {
      advance();
      auto v = symSum(n);
      expectOp(')', "closing the parenthesis");
      return v;
    }
    if (tok_.kind == Tok::Number) {
      Value num = parseNumber(tok_.text, false);
      advance();
      auto i = std::get_if<int64_t>(&num.v);
      if (!i) fail("expected an integer in symbolic arithmetic");
      n.args.push_back(*i);
      return sym::constant(*i);
    }
    if (tok_.kind != Tok::Name) expected("an operand of symbolic arithmetic");
    NodeId id = resolve(tok_.text);
    advance();
    n.args.emplace_back(TensorRef{id});
    return g_.node(id).symValue;
  }

  // `(a, b, k = v)`; kwargs == nullptr when keyword arguments are not expected.
  void parseCallArgs(std::vector<Value>& args, std::vector<std::pair<std::string, Value>>* kwargs) {
    expectOp('(', "opening the arguments");
    if (!isOp(')')) args.reserve(4);
    while (!isOp(')')) {
      if (tok_.kind == Tok::Name && peek().kind == Tok::Op && peek().op == '=') {
        std::string key(tok_.text);
        advance();
        advance();
        Value v = parseValue();
        if (kwargs) kwargs->emplace_back(std::move(key), std::move(v));
      } else {
        args.push_back(parseValue());
      }
      if (isOp(',')) advance();
      else if (!isOp(')')) expected("',' or ')' between the arguments");
    }
    advance();
  }

  // `;  a = b = None` clean-up statements emitted by print_readable.
  void parseCleanup() {
    while (isOp(';')) {
      advance();
      if (atLineEnd()) return;
      int targets = 0;
      for (;;) {
        if (isName("None") && targets > 0) {
          advance();
          break;
        }
        expectName("a name in the '= None' clean-up statement");
        ++targets;
        expectOp('=', "in the '= None' clean-up statement");
      }
    }
  }

  NodeId resolve(std::string_view name) {
    std::optional<NodeId> id = g_.find(name);
    if (!id) {
      std::string who = stmtNode_.empty() ? std::string("the output") : "node '" + stmtNode_ + "'";
      failRaw(who + " uses '" + std::string(name) + "', which is not defined by an earlier node");
    }
    return *id;
  }

  Value parseNumber(std::string_view text, bool negative) {
    bool isFloat = false;
    for (char c : text)
      if (c == '.' || c == 'e' || c == 'E') isFloat = true;
    if (text.size() > 1 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X' || text[1] == 'b' || text[1] == 'o'))
      isFloat = false;
    const char* b = text.data();
    const char* e = b + text.size();
    if (isFloat) {
      double d = 0;
      auto [ptr, ec] = std::from_chars(b, e, d);
      if (ec != std::errc() || ptr != e) fail("malformed number '" + std::string(text) + "'");
      return negative ? -d : d;
    }
    uint64_t mag = 0;
    auto [ptr, ec] = std::from_chars(b, e, mag);
    if (ec != std::errc() || ptr != e) fail("malformed or out-of-range integer '" + std::string(text) + "'");
    constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    if (mag > kMax + (negative ? 1 : 0)) fail("integer '" + std::string(text) + "' does not fit in 64 bits");
    if (negative) return mag == kMax + 1 ? std::numeric_limits<int64_t>::min() : -static_cast<int64_t>(mag);
    return static_cast<int64_t>(mag);
  }

  Value parseSequence(char close) {
    advance();  // '[' or '('
    ValueList items;
    while (!isOp(close)) {
      items.push_back(parseValue());
      if (isOp(',')) advance();
      else if (!isOp(close)) expected(std::string("',' or '") + close + "' in a list");
    }
    advance();
    return items;
  }

  Value parseValue() {
    // Bounded recursion: hostile input must not overflow the stack.
    struct DepthGuard {
      int& d;
      explicit DepthGuard(int& depth) : d(++depth) {}
      ~DepthGuard() { --d; }
    } guard(valueDepth_);
    if (valueDepth_ > kMaxNesting) fail("arguments nested more than " + std::to_string(kMaxNesting) + " levels deep");
    switch (tok_.kind) {
      case Tok::Number: {
        Value v = parseNumber(tok_.text, false);
        advance();
        return v;
      }
      case Tok::String: {
        Value v = unquote(tok_.text);
        advance();
        return v;
      }
      case Tok::Op:
        if (tok_.op == '[') return parseSequence(']');
        if (tok_.op == '(') {
          // `(x)` is x; `(x,)`, `(x, y)` and `()` are tuples.
          advance();
          if (isOp(')')) {
            advance();
            return ValueList{};
          }
          Value first = parseValue();
          if (isOp(')')) {
            advance();
            return first;
          }
          expectOp(',', "or ')' in a tuple");
          ValueList items{std::move(first)};
          while (!isOp(')')) {
            items.push_back(parseValue());
            if (isOp(',')) advance();
            else if (!isOp(')')) expected("',' or ')' in a tuple");
          }
          advance();
          return items;
        }
        if (tok_.op == '-') {
          advance();
          if (tok_.kind == Tok::Number) {
            Value v = parseNumber(tok_.text, true);
            advance();
            return v;
          }
          if (isName("inf")) {
            advance();
            return -std::numeric_limits<double>::infinity();
          }
          expected("a number after '-'");
        }
        expected("an argument value");
      case Tok::Name:
        return parseNameValue();
      default:
        expected("an argument value");
    }
  }

  Value parseNameValue() {
    std::string_view t = tok_.text;
    if (t == "True" || t == "False" || t == "None" || t == "inf" || t == "nan") {
      advance();
      if (t == "True") return true;
      if (t == "False") return false;
      if (t == "None") return NoneValue{};
      if (t == "inf") return std::numeric_limits<double>::infinity();
      return std::numeric_limits<double>::quiet_NaN();
    }
    // A bare name (the common case: a tensor argument) is resolved from the source text.
    if (const Token& next = peek(); next.kind != Tok::Op || (next.op != '.' && next.op != '(')) {
      advance();
      return TensorRef{resolve(t)};
    }
    size_t begin = tok_.begin;
    std::string name = dottedName();
    if (isOp('(')) {
      // Constructors of non-tensor values, kept verbatim as a Symbol.
      if (name != "device" && name != "torch.device" && name != "slice")
        fail("unsupported call '" + name + "(...)' inside the arguments");
      std::vector<Value> ignored;
      std::vector<std::pair<std::string, Value>> ignoredKw;
      parseCallArgs(ignored, &ignoredKw);
      return Symbol{std::string(sourceText(begin))};
    }
    if (name.find('.') == std::string::npos) return TensorRef{resolve(name)};
    constexpr std::string_view kOps = "torch.ops.";
    if (name.compare(0, kOps.size(), kOps) == 0) return Symbol{name.substr(kOps.size())};
    if (name.compare(0, 6, "torch.") == 0) {
      DType d = parseDType(name);
      if (d != DType::Unknown) return d;
    }
    return Symbol{std::move(name)};
  }

  // Source text from `begin` to the end of the token just consumed.
  std::string_view sourceText(size_t begin) const { return lastEnd_ > begin ? text_.substr(begin, lastEnd_ - begin) : ""; }

  // ---- `return (a, b, None)` / `return [a, b]` / `return pytree.tree_unflatten([...], self._out_spec)`
  void parseReturn() {
    advance();
    materializePlaceholders();
    Value result;
    if (!atLineEnd()) {
      if (isName("pytree") || isName("fx_pytree")) {
        std::string callee = dottedName();
        if (callee != "pytree.tree_unflatten" && callee != "fx_pytree.tree_unflatten")
          fail("unsupported return value '" + callee + "'");
        std::vector<Value> args;
        parseCallArgs(args, nullptr);
        if (args.empty()) fail("expected the returned values as the first argument of " + callee);
        result = std::move(args[0]);
      } else {
        result = parseValue();
        if (isOp(',')) {  // `return a, b`
          ValueList items{std::move(result)};
          while (isOp(',')) {
            advance();
            if (atLineEnd()) break;
            items.push_back(parseValue());
          }
          result = std::move(items);
        }
      }
    }
    expectLineEnd();
    flattenOutputs(result);
    // Only blank lines and comments may follow.
    while (tok_.kind == Tok::Newline || tok_.kind == Tok::Comment) advance();
    if (tok_.kind != Tok::End) {
      startStatement();
      expected("end of file after the 'return' statement");
    }
  }

  void flattenOutputs(Value& v) {
    if (auto* list = std::get_if<ValueList>(&v.v)) {
      for (Value& e : *list) flattenOutputs(e);
    } else if (!std::holds_alternative<NoneValue>(v.v)) {
      g_.outputs.push_back(std::move(v));
    }
  }

 private:
  std::string_view text_;
  size_t lastEnd_ = 0;  // end offset of the last consumed token (for verbatim Symbols)
  const std::string& path_;
  Lexer lex_;
  Token tok_, peek_;
  bool hasPeek_ = false;
  Graph g_;
  // The annotations' symbolic values are checked on their own, with no facts:
  // the graph's symbols are qualified ("S.s0") and facts about them are
  // learnt only after import (src/driver).
  sym::Context symbols_;
  int stmtLine_ = 1;
  std::string stmtNode_;
  std::string source_;
  std::vector<Param> params_;    // def forward(self, ...) parameters
  std::vector<Param> declared_;  // `x: "f32[4]";` declarations
  bool placeholdersDone_ = false;
  static constexpr int kMaxNesting = 200;
  int valueDepth_ = 0;
};

}  // namespace

Graph importFxText(std::string_view text, const std::string& path) {
  FxParser parser(text, path);
  return parser.run();
}

Graph importFxFile(const std::string& path) {
  std::string text = readTextFile(path);
  return importFxText(text, path);
}

}  // namespace tangle
