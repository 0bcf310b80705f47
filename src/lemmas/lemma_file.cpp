// Lemma files: parsing, the rules they give, and custom-op type inference.
#include "lemmas/lemma_file.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>
#include <unordered_map>

#include "ops/ops.h"
#include "sym/context.h"

namespace tangle::lemmas {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

struct Statement {
  std::string text;
  int line = 0;
};

// Comments stripped (outside strings); a statement continues while its
// parentheses/brackets are open or when the next line starts with `=>` or `if`.
std::vector<Statement> splitStatements(const std::string& text) {
  std::vector<Statement> out;
  std::istringstream in(text);
  std::string raw;
  int lineNo = 0, depth = 0;
  while (std::getline(in, raw)) {
    ++lineNo;
    std::string line;
    bool quoted = false;
    for (char c : raw) {
      if (c == '"') quoted = !quoted;
      if (c == '#' && !quoted) break;
      line += c;
    }
    std::string_view t = trim(line);
    if (t.empty()) continue;
    bool continues = !out.empty() && (depth > 0 || t.rfind("=>", 0) == 0 || t.rfind("if ", 0) == 0);
    if (continues) out.back().text += " " + std::string(t);
    else out.push_back({std::string(t), lineNo});
    depth = 0;
    quoted = false;
    for (char c : out.back().text) {
      if (c == '"') quoted = !quoted;
      if (quoted) continue;
      if (c == '(' || c == '[') ++depth;
      if (c == ')' || c == ']') --depth;
    }
  }
  return out;
}

// Position of `token` at parenthesis depth 0 outside strings, from `from`.
size_t findTopLevel(std::string_view s, std::string_view token, size_t from = 0) {
  int depth = 0;
  bool quoted = false;
  for (size_t i = from; i < s.size(); ++i) {
    char c = s[i];
    if (c == '"') quoted = !quoted;
    if (quoted) continue;
    if (c == '(' || c == '[') ++depth;
    else if (c == ')' || c == ']') --depth;
    else if (depth == 0 && s.substr(i, token.size()) == token) return i;
  }
  return std::string_view::npos;
}

// The variables and operators a pattern text mentions.
struct PatternNames {
  std::set<std::string> classes, attrs, lists, ops;
};

PatternNames namesOf(std::string_view p) {
  PatternNames out;
  int brackets = 0;
  bool quoted = false;
  auto isName = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t i = 0; i < p.size(); ++i) {
    char c = p[i];
    if (c == '"') quoted = !quoted;
    if (quoted) continue;
    if (c == '[') ++brackets;
    else if (c == ']') --brackets;
    else if (c == '(') {
      size_t j = i + 1;
      while (j < p.size() && std::isspace(static_cast<unsigned char>(p[j]))) ++j;
      size_t k = j;
      while (k < p.size() && !std::isspace(static_cast<unsigned char>(p[k])) && p[k] != '(' && p[k] != ')' &&
             p[k] != '[' && p[k] != ']')
        ++k;
      out.ops.insert(std::string(p.substr(j, k - j)));
    } else if (c == '?') {
      size_t j = i + 1;
      while (j < p.size() && isName(p[j])) ++j;
      std::string name(p.substr(i + 1, j - i - 1));
      if (p.substr(j, 3) == "...") out.lists.insert(name);
      else if (brackets > 0) out.attrs.insert(name);
      else out.classes.insert(name);
      i = j - 1;
    }
  }
  return out;
}

bool isLemmaNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'; }

// Integer conditions compare numbers; a symbolic size (SymDim) is compared
// by proof under the check's facts (`symbols`, the e-graph's), and an
// unprovable comparison does not hold.
bool holds(const LemmaCondition& c, const eg::Subst& s, const eg::EGraph& g) {
  const sym::Context& symbols = g.symbols();
  auto value = [&](const std::string& v, int dim) -> std::optional<eg::Attr> {
    if (dim >= 0 || dim == kRankDim) {  // ?x:k: the size of dim k of the class bound to ?x; ?x:rank its rank
      auto it = s.classes.find(v);
      if (it == s.classes.end()) return std::nullopt;
      const TensorType* t = g.data(it->second).tensor();
      if (t && dim == kRankDim) return eg::Attr::integer(static_cast<int64_t>(t->shape.size()));
      if (!t || dim >= static_cast<int>(t->shape.size())) return std::nullopt;
      return eg::Attr::dim(t->shape[static_cast<size_t>(dim)]);
    }
    auto it = s.attrs.find(v);
    if (it == s.attrs.end() || (it->second.kind != eg::Attr::Kind::Int && it->second.kind != eg::Attr::Kind::SymDim))
      return std::nullopt;
    return it->second;
  };
  auto a = value(c.lhs, c.lhsDim);
  auto b = c.rhsVar ? value(*c.rhsVar, c.rhsDim) : std::optional<eg::Attr>(eg::Attr::integer(c.rhsInt));
  if (!a || !b) return false;  // not an integer: the condition cannot be checked, refuse
  if (a->kind == eg::Attr::Kind::Int && b->kind == eg::Attr::Kind::Int) {
    switch (c.cmp) {
      case LemmaCondition::Cmp::Eq: return a->i == b->i;
      case LemmaCondition::Cmp::Ne: return a->i != b->i;
      case LemmaCondition::Cmp::Lt: return a->i < b->i;
      case LemmaCondition::Cmp::Le: return a->i <= b->i;
      case LemmaCondition::Cmp::Gt: return a->i > b->i;
      case LemmaCondition::Cmp::Ge: return a->i >= b->i;
    }
    return false;
  }
  auto expr = [](const eg::Attr& x) { return x.kind == eg::Attr::Kind::Int ? sym::constant(x.i) : sym::fromDim(x.i); };
  sym::ExprId x = expr(*a), y = expr(*b);
  const sym::Context& ctx = symbols;
  switch (c.cmp) {
    case LemmaCondition::Cmp::Eq: return ctx.proveEqual(x, y);
    case LemmaCondition::Cmp::Ne: return ctx.proveLT(x, y) || ctx.proveLT(y, x);
    case LemmaCondition::Cmp::Lt: return ctx.proveLT(x, y);
    case LemmaCondition::Cmp::Le: return ctx.proveLE(x, y);
    case LemmaCondition::Cmp::Gt: return ctx.proveLT(y, x);
    case LemmaCondition::Cmp::Ge: return ctx.proveLE(y, x);
  }
  return false;
}

class Parser {
 public:
  explicit Parser(const std::string& path) { out_.path = path; }

  LemmaFile run(const std::string& text) {
    for (const Statement& st : splitStatements(text)) statement(st);
    return std::move(out_);
  }

 private:
  [[noreturn]] void fail(int line, const std::string& msg) const { throw InputError({out_.path, line}, msg); }

  eg::Pattern pattern(std::string_view text, int line, const char* what) const {
    if (trim(text).empty()) fail(line, std::string("missing ") + what);
    try {
      return eg::Pattern::parse(trim(text));
    } catch (const std::invalid_argument& e) {
      fail(line, std::string("bad ") + what + ": " + e.what());  // e.what() quotes the pattern
    }
  }

  void statement(const Statement& st) {
    std::string_view t = st.text;
    size_t sp = 0;
    while (sp < t.size() && !std::isspace(static_cast<unsigned char>(t[sp]))) ++sp;
    std::string_view keyword = t.substr(0, sp), rest = trim(t.substr(sp));
    if (keyword == "lemma") return lemma(rest, st.line);
    if (keyword == "define") return define(rest, st.line);
    if (keyword == "opaque") return opaque(rest, st.line);
    fail(st.line, "unknown statement '" + std::string(keyword) + "' (expected lemma, define or opaque)");
  }

  const CustomOpDef* custom(const std::string& op) const {
    for (const CustomOpDef& d : out_.ops)
      if (d.op == op) return &d;
    return nullptr;
  }

  void declare(const std::string& op, int line) {
    if (op.empty()) fail(line, "missing operator name");
    if (ops::find(eg::intern(op)))
      fail(line, "'" + op + "' is a canonical operator; only custom (opaque ATen) operators can be defined");
    if (const CustomOpDef* d = custom(op))
      fail(line, "operator '" + op + "' declared twice (first on line " + std::to_string(d->loc.line) + ")");
  }

  void opaque(std::string_view rest, int line) {
    std::string op(rest);
    if (op.find_first_of(" \t()[]") != std::string::npos) fail(line, "opaque takes one operator name, got '" + op + "'");
    declare(op, line);
    CustomOpDef d;
    d.op = op;
    d.opaque = true;
    d.loc = {out_.path, line};
    out_.ops.push_back(std::move(d));
  }

  void define(std::string_view rest, int line) {
    size_t eq = findTopLevel(rest, "=");
    if (eq == std::string_view::npos) fail(line, "missing '=' in define (write: define (op[attrs] ?x ...) = TERM)");
    std::string_view headText = trim(rest.substr(0, eq)), bodyText = trim(rest.substr(eq + 1));
    eg::Pattern head = pattern(headText, line, "define head");
    eg::Pattern body = pattern(bodyText, line, "define body");
    PatternNames hn = namesOf(headText), bn = namesOf(bodyText);
    if (!head.rootOp() || hn.ops.size() != 1 || !hn.lists.empty())
      fail(line, "a define head is one operator over variables: (op[attrs] ?x ?y)");
    std::string op = eg::symbolName(*head.rootOp());
    declare(op, line);
    for (const std::string& v : bn.classes)
      if (!hn.classes.count(v)) fail(line, "variable ?" + v + " of the body is not a parameter of " + op);
    for (const std::string& v : bn.attrs)
      if (!hn.attrs.count(v)) fail(line, "attribute variable ?" + v + " of the body is not bound by the head");
    if (!bn.lists.empty()) fail(line, "a define body cannot use list variables");
    for (const std::string& o : bn.ops) {
      if (o == op) fail(line, "the body of " + op + " uses " + op + " itself");
      if (ops::find(eg::intern(o))) continue;
      const CustomOpDef* d = custom(o);
      if (!d) fail(line, "the body uses '" + o + "', which is neither canonical nor defined above");
      if (d->opaque) fail(line, "the body uses the opaque operator '" + o + "'");
    }
    CustomOpDef d;
    d.op = op;
    d.head = std::move(head);
    d.body = std::move(body);
    d.loc = {out_.path, line};
    out_.ops.push_back(std::move(d));
  }

  void lemma(std::string_view rest, int line) {
    size_t colon = rest.find(':');
    if (colon == std::string_view::npos) fail(line, "missing ':' after the lemma name (write: lemma NAME: LHS => RHS)");
    std::string name(trim(rest.substr(0, colon)));
    if (name.empty() || !std::all_of(name.begin(), name.end(), isLemmaNameChar))
      fail(line, "bad lemma name '" + name + "' (letters, digits, '-', '_', '.')");
    for (const Lemma& l : lemmaTable())
      if (l.rule.name == name) fail(line, "lemma " + name + " clashes with a built-in lemma of that name");
    if (const FileLemma* f = out_.find(name))
      fail(line, "lemma " + name + " defined twice (first on line " + std::to_string(f->loc.line) + ")");
    std::string_view body = trim(rest.substr(colon + 1));
    size_t arrow = findTopLevel(body, "=>");
    if (arrow == std::string_view::npos) fail(line, "missing '=>' in lemma " + name);
    std::string_view lhsText = trim(body.substr(0, arrow)), rhsText = trim(body.substr(arrow + 2)), condText;
    for (size_t at = 0; (at = findTopLevel(rhsText, "if", at)) != std::string_view::npos; ++at) {
      bool wordStart = at == 0 || std::isspace(static_cast<unsigned char>(rhsText[at - 1]));
      bool wordEnd = at + 2 == rhsText.size() || std::isspace(static_cast<unsigned char>(rhsText[at + 2]));
      if (wordStart && wordEnd) {
        condText = trim(rhsText.substr(at + 2));
        rhsText = trim(rhsText.substr(0, at));
        if (condText.empty()) fail(line, "missing condition after 'if' in lemma " + name);
        break;
      }
    }
    FileLemma fl;
    fl.loc = {out_.path, line};
    eg::Pattern lhs = pattern(lhsText, line, "left-hand side");
    eg::Pattern rhs = pattern(rhsText, line, "right-hand side");
    if (!lhs.rootOp()) fail(line, "the left-hand side of lemma " + name + " must be an operator, not a bare variable");
    PatternNames ln = namesOf(lhsText), rn = namesOf(rhsText);
    auto unbound = [&](const std::set<std::string>& used, const std::set<std::string>& bound, const char* kind) {
      for (const std::string& v : used)
        if (!bound.count(v))
          fail(line, std::string("unknown ") + kind + " ?" + v + " on the right-hand side of lemma " + name +
                         " (not bound by the left-hand side)");
    };
    unbound(rn.classes, ln.classes, "variable");
    unbound(rn.attrs, ln.attrs, "attribute variable");
    unbound(rn.lists, ln.lists, "list variable");
    if (!condText.empty()) fl.conditions = conditions(condText, ln, name, line);
    std::set<std::string> allOps = ln.ops;
    allOps.insert(rn.ops.begin(), rn.ops.end());
    for (const std::string& o : allOps) {
      if (ops::find(eg::intern(o))) continue;
      const CustomOpDef* d = custom(o);
      if (!d || d->opaque) fl.opaqueOps.push_back(o);  // undeclared ATen ops are opaque too
    }
    fl.lemma.doc = std::string(lhsText) + " = " + std::string(rhsText);
    fl.lemma.rule.name = name;
    fl.lemma.rule.lhs = std::move(lhs);
    fl.lemma.rule.rhs = std::move(rhs);
    // A custom op, even a defined one, is typed only in its defined form (registerCustomOpTypes).
    for (const std::string& o : rn.ops)
      if (!ops::find(eg::intern(o))) fl.lemma.rule.opaqueRhs = true;
    if (!fl.conditions.empty()) {
      fl.lemma.doc += " if " + std::string(condText);
      fl.lemma.rule.guard = [conds = fl.conditions](const eg::EGraph& g, eg::Subst& s) {
        for (const LemmaCondition& c : conds)
          if (!holds(c, s, g)) return false;
        return true;
      };
    }
    out_.lemmas.push_back(std::move(fl));
  }

  std::vector<LemmaCondition> conditions(std::string_view text, const PatternNames& ln, const std::string& name,
                                         int line) {
    std::vector<LemmaCondition> out;
    std::string s(text);
    std::replace(s.begin(), s.end(), ',', ' ');
    std::istringstream words(s);
    std::vector<std::string> w;
    for (std::string x; words >> x;) w.push_back(x);
    int dim = -1;  // set by var() for ?x:k (kRankDim for ?x:rank)
    auto var = [&](const std::string& t) -> std::optional<std::string> {
      if (t.size() < 2 || t[0] != '?') return std::nullopt;
      std::string v = t.substr(1);
      dim = -1;
      if (auto colon = v.find(':'); colon != std::string::npos) {
        std::string k = v.substr(colon + 1);
        v = v.substr(0, colon);
        if (k != "rank" && (k.empty() || k.size() > 2 || !std::all_of(k.begin(), k.end(), ::isdigit)))
          fail(line, "condition of lemma " + name + ": '" + t + "' needs a dim number or 'rank' after ':' (?x:0)");
        dim = k == "rank" ? kRankDim : std::stoi(k);
        if (!ln.classes.count(v))
          fail(line, "condition of lemma " + name + " names ?" + v +
                         ", which is not an e-class variable of the left-hand side");
        return v;
      }
      if (!ln.attrs.count(v))
        fail(line, "condition of lemma " + name + " names ?" + v +
                       ", which is not an attribute variable of the left-hand side");
      return v;
    };
    static const std::pair<const char*, LemmaCondition::Cmp> kCmp[] = {
        {"==", LemmaCondition::Cmp::Eq}, {"!=", LemmaCondition::Cmp::Ne}, {"<", LemmaCondition::Cmp::Lt},
        {"<=", LemmaCondition::Cmp::Le}, {">", LemmaCondition::Cmp::Gt},  {">=", LemmaCondition::Cmp::Ge}};
    if (w.size() % 3 != 0) fail(line, "bad condition '" + std::string(text) + "' (write: ?a != ?b, ?c < 3)");
    for (size_t i = 0; i < w.size(); i += 3) {
      LemmaCondition c;
      auto a = var(w[i]);
      if (!a) fail(line, "a condition starts with an attribute variable, got '" + w[i] + "'");
      c.lhs = *a;
      c.lhsDim = dim;
      auto op = std::find_if(std::begin(kCmp), std::end(kCmp), [&](auto& p) { return w[i + 1] == p.first; });
      if (op == std::end(kCmp)) fail(line, "unknown comparison '" + w[i + 1] + "' (use == != < <= > >=)");
      c.cmp = op->second;
      if (w[i + 2][0] == '?') {
        c.rhsVar = var(w[i + 2]);
        c.rhsDim = dim;
      } else {
        try {
          size_t used = 0;
          c.rhsInt = std::stoll(w[i + 2], &used);
          if (used != w[i + 2].size()) throw std::invalid_argument("");
        } catch (const std::exception&) {
          fail(line, "condition compares with '" + w[i + 2] + "': expected an integer or ?var");
        }
      }
      out.push_back(std::move(c));
    }
    return out;
  }

  LemmaFile out_;
};

}  // namespace

std::vector<eg::Rule> LemmaFile::rules() const {
  std::vector<eg::Rule> out;
  out.reserve(lemmas.size());
  for (const FileLemma& l : lemmas) out.push_back(l.lemma.rule);
  return out;
}

const FileLemma* LemmaFile::find(const std::string& name) const {
  for (const FileLemma& l : lemmas)
    if (l.lemma.rule.name == name) return &l;
  return nullptr;
}

LemmaFile parseLemmaText(const std::string& text, const std::string& path) { return Parser(path).run(text); }

LemmaFile parseLemmaFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError({path, 0}, "cannot read the lemma file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parseLemmaText(ss.str(), path);
}

LemmaFile mergeLemmaFiles(std::vector<LemmaFile> files) {
  if (files.size() == 1) return std::move(files[0]);
  LemmaFile out;
  for (LemmaFile& f : files) {
    out.path += (out.path.empty() ? "" : ", ") + f.path;
    for (CustomOpDef& d : f.ops) {
      for (const CustomOpDef& e : out.ops)
        if (e.op == d.op)
          throw InputError(d.loc, "operator '" + d.op + "' already declared at " + e.loc.file + ":" +
                                      std::to_string(e.loc.line));
      out.ops.push_back(std::move(d));
    }
    for (FileLemma& l : f.lemmas) {
      if (const FileLemma* e = out.find(l.lemma.rule.name))
        throw InputError(l.loc, "lemma " + l.lemma.rule.name + " already defined at " + e->loc.file + ":" +
                                    std::to_string(e->loc.line));
      out.lemmas.push_back(std::move(l));
    }
  }
  return out;
}

std::optional<Expansion> expandDefinition(const CustomOpDef& def, const eg::ENode& n,
                                          const std::vector<eg::ClassData>& childData, const sym::Context* symbols) {
  if (def.opaque || !def.head || !def.body) return std::nullopt;
  eg::Symbol self = n.op;
  // The node itself is added untyped (no recursion into its own inference)
  // so that the head can bind the attribute variables by matching.
  Expansion e;
  e.graph = std::make_unique<eg::EGraph>([self](const eg::EGraph& g, const eg::ENode& m) {
    return m.op == self ? std::optional(eg::ClassData{}) : ops::inferData(g, m);
  }, symbols);
  eg::EGraph& g = *e.graph;
  std::vector<eg::Id> leaves;
  for (size_t i = 0; i < childData.size(); ++i) leaves.push_back(g.leaf("$" + std::to_string(i), Owner::spec(), childData[i]));
  eg::Id node = g.add(eg::ENode{n.op, n.attrs, leaves});
  g.rebuild();
  auto matches = def.head->searchClass(g, node, 1);
  if (matches.empty()) return std::nullopt;
  e.root = def.body->instantiate(g, matches[0].subst);
  return e;
}

void registerCustomOpTypes(const LemmaFile& file) {
  for (const CustomOpDef& d : file.ops) {
    if (d.opaque) continue;
    ops::registerCustomOp(eg::intern(d.op), [def = d](const eg::EGraph& g, const eg::ENode& n) -> std::optional<eg::ClassData> {
      std::vector<eg::ClassData> childData;
      childData.reserve(n.children.size());
      for (eg::Id c : n.children) childData.push_back(g.data(c));
      auto e = expandDefinition(def, n, childData, &g.symbols());
      if (!e) return eg::ClassData{};  // not of the defined form: opaque, typed by the lowering
      if (!e->root) return std::nullopt;
      return e->graph->data(*e->root);
    });
  }
}

}  // namespace tangle::lemmas
