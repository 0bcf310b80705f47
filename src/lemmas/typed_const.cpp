// Typed scalar constants meet python literals. Lowering writes a 0-d tensor
// computed as a constant (zeros([]), scalar_tensor, a declared constant) as
// cast[dtype](const c), while lemmas and python scalars use the bare,
// dtype-less const c. Merging the two classes would give the literal a dtype
// (every `x + 0` in the graph would change type), so instead the operator
// reading the typed constant gets a second form reading the literal:
//   op(.., cast[dt](const c), ..) = op(.., const c, ..)
// when dt holds c exactly (the cast does not round it) and the result keeps
// its type (both are weak scalars in type promotion; checked, not assumed).
#include <cmath>
#include <limits>

#include "lemmas/lemma_util.h"

namespace tangle::lemmas::detail {

bool holdsExactly(DType t, double c) {
  if (!std::isfinite(c)) return false;
  auto integral = [&](double lo, double hi) { return std::nearbyint(c) == c && c >= lo && c <= hi; };
  // A binary float of p significant bits, largest finite `max`, smallest subnormal 2^minExp.
  auto binary = [&](int p, double max, int minExp) {
    if (c == 0) return true;
    if (std::fabs(c) > max) return false;
    if (std::fmod(std::ldexp(c, -minExp), 1.0) != 0) return false;  // below the subnormal grid
    int e;
    std::frexp(c, &e);                                      // |c| in [2^(e-1), 2^e)
    return std::fmod(std::ldexp(c, p - e), 1.0) == 0;       // p bits from the leading one
  };
  switch (t) {
    case DType::F64: return true;
    case DType::F32: return binary(24, std::numeric_limits<float>::max(), -149);
    case DType::F16: return binary(11, 65504.0, -24);
    case DType::BF16: return binary(8, 3.3895313892515355e38, -133);
    case DType::I64: return integral(-9007199254740992.0, 9007199254740992.0);  // doubles past 2^53 are not exact
    case DType::I32: return integral(-2147483648.0, 2147483647.0);
    case DType::I16: return integral(-32768.0, 32767.0);
    case DType::I8: return integral(-128.0, 127.0);
    case DType::U8: return integral(0.0, 255.0);
    case DType::Bool: return c == 0 || c == 1;
    default: return false;
  }
}

namespace {

// The literal c for the matched cast[dt](k), k a scalar constant c that dt holds exactly.
std::optional<Id> literalOf(EGraph& g, const Match& m) {
  const Attr& a = m.subst.attr("dt");
  if (a.kind != Attr::Kind::Str) return std::nullopt;
  DType dt = parseDType(eg::symbolName(static_cast<eg::Symbol>(a.i)));
  auto c = scalarConstant(g, m.subst.cls("k"));
  if (!c || dt == DType::Unknown || !holdsExactly(dt, *c)) return std::nullopt;
  return makeConstant(g, *c);
}

// The matched node rebuilt with child `pos` (class var "k") read as a literal.
Apply untype(eg::Symbol sym, size_t arity, size_t pos) {
  return [sym, arity, pos](EGraph& g, const Match& m) -> std::optional<Id> {
    auto lit = literalOf(g, m);
    if (!lit) return std::nullopt;
    static const char* kVars[] = {"a", "b", "c"};
    std::vector<Id> children;
    for (size_t i = 0; i < arity; ++i) children.push_back(i == pos ? *lit : m.subst.cls(kVars[i]));
    auto r = make(g, sym, {}, children);
    const TensorType *rt = r ? typeOf(g, *r) : nullptr, *out = typeOf(g, m.eclass);
    if (!rt || !out || rt->dtype != out->dtype || rt->shape != out->shape) return std::nullopt;
    return r;
  };
}

}  // namespace

void addTypedConstLemmas(std::vector<Lemma>& out) {
  struct Op {
    const char* name;
    eg::Symbol sym;
    size_t arity;
    std::vector<size_t> positions;  // operands that may be the typed constant
    std::vector<const char*> sides;
  };
  const ops::Syms& o = op();
  const Op ops[] = {{"where", o.where, 3, {1, 2}, {"then", "else"}}, {"add", o.add, 2, {0, 1}, {"lhs", "rhs"}},
                    {"sub", o.sub, 2, {0, 1}, {"lhs", "rhs"}},       {"mul", o.mul, 2, {0, 1}, {"lhs", "rhs"}},
                    {"div", o.div, 2, {0, 1}, {"lhs", "rhs"}}};
  static const char* kVars[] = {"?a", "?b", "?c"};
  for (const Op& p : ops)
    for (size_t j = 0; j < p.positions.size(); ++j) {
      size_t pos = p.positions[j];
      std::string lhs = std::string("(") + p.name;
      for (size_t i = 0; i < p.arity; ++i) lhs += i == pos ? " (cast[?dt] ?k)" : std::string(" ") + kVars[i];
      lhs += ")";
      std::string name = std::string(p.name) + "-untype-const-" + p.sides[j];
      out.push_back(applier(name,
                            std::string(p.name) + " reading cast[dt](const c) as its " + p.sides[j] +
                                " operand = the same reading the literal c, when dt holds c exactly and the result "
                                "keeps its type",
                            lhs, untype(p.sym, p.arity, pos)));
    }
}

}  // namespace tangle::lemmas::detail
