// Elementwise ops over concat, slice, rearrangements and sums.
#include "lemmas/lemma_util.h"
#include "sym/context.h"

namespace tangle::lemmas::detail {

namespace {

struct Unary {
  const char* name;
  size_t nAttrs;  // gelu["tanh"], pow_scalar[2.0], cast["f32"]
};
constexpr Unary kUnary[] = {{"neg", 0},  {"exp", 0},     {"log", 0},   {"gelu", 1},
                            {"silu", 0}, {"relu", 0},    {"tanh", 0},  {"sigmoid", 0},
                            {"rsqrt", 0}, {"sqrt", 0},   {"pow_scalar", 1}, {"cast", 1},
                            {"abs", 0},  {"cos", 0},     {"sin", 0}};

// f(concat[d](xs)) = concat[d](f(x_i))
Apply unaryOverConcat(eg::Symbol sym, size_t nAttrs) {
  return [sym, nAttrs](EGraph& g, const Match& m) -> std::optional<Id> {
    AttrList a = boundAttrs(m.subst, nAttrs);
    auto parts = mapPieces(m.subst.list("xs"), [&](Id x) { return make(g, sym, a, {x}); });
    if (!parts) return std::nullopt;
    return makeConcat(g, m.subst.integer("d"), *parts);
  };
}

// op(concat[d](x1..xn), y) (or op(y, concat)) = concat[D](op(x_i, y_i)), D
// the concat dim in the broadcast result; see distributeOverConcat.
Apply binaryOverConcat(eg::Symbol sym, bool concatOnLeft) {
  return [sym, concatOnLeft](EGraph& g, const Match& m) -> std::optional<Id> {
    // The patterns name the other operand ?y on either side.
    Id y = m.subst.cls("y");
    if (isIdentityOperand(g, sym, y, !concatOnLeft) || isZeroTermOperand(g, sym, y, !concatOnLeft)) return std::nullopt;
    return concatOnLeft ? distributeOverConcat(g, m, sym, {}, {"xs", "y"}, 0)
                        : distributeOverConcat(g, m, sym, {}, {"y", "xs"}, 1);
  };
}

// op(slice[d, s, e](a), slice[d', s, e](b)) = slice[D, s, e](op(a, b)) when d
// and d' are the same dim D of the broadcast result and a, b agree in size
// there (elementwise: slicing both operands alike slices the result).
Apply binaryOfSlices(eg::Symbol sym) {
  return [sym](EGraph& g, const Match& m) -> std::optional<Id> {
    Id a = m.subst.cls("a"), b = m.subst.cls("b");
    const TensorType *at = typeOf(g, a), *bt = typeOf(g, b), *out = typeOf(g, m.eclass);
    if (!at || !bt || !out) return std::nullopt;
    for (int side = 0; side < 2; ++side) {  // the operands themselves: slice[da](a), slice[db](b)
      ENode n{op().slice, eg::internAttrs({Attr::integer(side ? m.subst.integer("db") : m.subst.integer("da")),
                                           m.subst.attr("s"), m.subst.attr("e"), Attr::integer(1)}),
              {side ? b : a}};
      auto c = g.lookup(n);
      if (c && isZeroTermOperand(g, sym, *c, side == 0)) return std::nullopt;
    }
    int64_t R = out->rank(), da = m.subst.integer("da"), db = m.subst.integer("db");
    int64_t D = da + (R - at->rank());
    if (D != db + (R - bt->rank()) || D < 0 || D >= R) return std::nullopt;
    if (!sym::dimEqual(g.symbols(), at->shape[da], bt->shape[db])) return std::nullopt;
    auto whole = make(g, sym, {}, {a, b});
    if (!whole) return std::nullopt;
    return make(g, op().slice, {Attr::integer(D), m.subst.attr("s"), m.subst.attr("e"), Attr::integer(1)}, {*whole});
  };
}

// op(sum(xs), y) = sum(op(x_i, y)) (or op(y, sum(xs)) = sum(op(y, x_i))).
Apply overSum(eg::Symbol sym, bool sumOnLeft) {
  return [sym, sumOnLeft](EGraph& g, const Match& m) -> std::optional<Id> {
    Id y = m.subst.cls("y");
    auto parts = mapPieces(m.subst.list("xs"), [&](Id x) {
      return sumOnLeft ? make(g, sym, {}, {x, y}) : make(g, sym, {}, {y, x});
    });
    if (!parts) return std::nullopt;
    return makeSum(g, *parts);
  };
}

// op(sum(a1..an), sum(b1..bn)) = sum(op(a_i, b_i)) for op in add, sub.
Apply pairedSums(eg::Symbol sym) {
  return [sym](EGraph& g, const Match& m) { return zipSum(g, sym, m.subst.list("as"), m.subst.list("bs")); };
}

// A cast between float dtypes: the identity on values (tangle proves equality over the reals; only
// the rounding differs, which the report notes). False for a cast to or from an integer or bool
// (truncation, or a test against 0) and when a type is unknown.
bool floatToFloat(const EGraph& g, const Attr& to, const std::vector<Id>& from) {
  if (to.kind != Attr::Kind::Str || !isFloating(parseDType(eg::symbolName(static_cast<eg::Symbol>(to.i))))) return false;
  for (Id x : from) {
    const TensorType* t = typeOf(g, x);
    if (!t || !isFloating(t->dtype)) return false;
  }
  return true;
}

// cast[dt](sum(xs)) = sum(cast[dt](x_i)), float dtypes only.
std::optional<Id> castOverSum(EGraph& g, const Match& m) {
  AttrList a = boundAttrs(m.subst, 1);
  const std::vector<Id>& xs = m.subst.list("xs");
  if (!floatToFloat(g, a[0], xs)) return std::nullopt;
  auto parts = mapPieces(xs, [&](Id x) { return make(g, op().cast, a, {x}); });
  if (!parts) return std::nullopt;
  return makeSum(g, *parts);
}

// cast[dt](op(a, b)) = op(cast[dt](a), cast[dt](b)) for op in add, sub, mul, div; float dtypes only.
Apply castOverBinary(eg::Symbol sym) {
  return [sym](EGraph& g, const Match& m) -> std::optional<Id> {
    AttrList a = boundAttrs(m.subst, 1);
    std::optional<Id> xs[2] = {m.subst.cls("a"), m.subst.cls("b")};
    for (auto& x : xs) {
      // a scalar constant (the loss's 1/n, an average's divisor) is the same number at any float dtype
      const eg::ClassData& d = g.data(*x);
      if (d.constant && d.tensor() && d.tensor()->shape.empty() && floatToFloat(g, a[0], {})) continue;
      if (!floatToFloat(g, a[0], {*x})) return std::nullopt;
      x = make(g, op().cast, a, {*x});
      if (!x) return std::nullopt;
    }
    if (xs[0] == m.subst.cls("a") && xs[1] == m.subst.cls("b")) return std::nullopt;
    return make(g, sym, {}, {*xs[0], *xs[1]});
  };
}

// cast[dt](cast[e](x)) = cast[dt](x), or x itself when it already has dtype dt; dt, e and x float
// (an integer or bool step in between truncates, so it stays).
std::optional<Id> castOfCast(EGraph& g, const Match& m) {
  AttrList a = boundAttrs(m.subst, 1);
  Id x = m.subst.cls("x");
  if (!floatToFloat(g, a[0], {x}) || !floatToFloat(g, m.subst.attr("e"), {x})) return std::nullopt;
  const TensorType* t = typeOf(g, x);
  if (t->dtype == parseDType(eg::symbolName(static_cast<eg::Symbol>(a[0].i)))) return x;
  return make(g, op().cast, a, {x});
}

}  // namespace

void addElementwiseLemmas(std::vector<Lemma>& out) {
  const ops::Syms& o = op();
  for (const Unary& u : kUnary) {
    std::string f = u.name;
    eg::Symbol sym = eg::intern(f);
    std::string fx = opPattern(f, u.nAttrs, "?x");
    out.push_back(readsOnlyMatch(applier(f + "-concat", f + "(concat[d](xs)) = concat[d](" + f + "(x_i))",
                          opPattern(f, u.nAttrs, "(concat[?d] ?xs...)"), unaryOverConcat(sym, u.nAttrs))));
    out.push_back(rewrite(f + "-slice", f + "(slice[..](x)) = slice[..](" + f + "(x))",
                          opPattern(f, u.nAttrs, "(slice[?d, ?s, ?e, ?st] ?x)"), "(slice[?d, ?s, ?e, ?st] " + fx + ")"));
    out.push_back(rewrite(f + "-transpose", f + "(transpose[a,b](x)) = transpose[a,b](" + f + "(x))",
                          opPattern(f, u.nAttrs, "(transpose[?p, ?q] ?x)"), "(transpose[?p, ?q] " + fx + ")"));
    out.push_back(rewrite(f + "-permute", f + "(permute[p](x)) = permute[p](" + f + "(x))",
                          opPattern(f, u.nAttrs, "(permute[?p] ?x)"), "(permute[?p] " + fx + ")"));
    out.push_back(rewrite(f + "-reshape", f + "(reshape[s](x)) = reshape[s](" + f + "(x))",
                          opPattern(f, u.nAttrs, "(reshape[?p] ?x)"), "(reshape[?p] " + fx + ")"));
  }
  out.push_back(applier("neg-sum", "neg(sum(xs)) = sum(neg(x_i))", "(neg (sum ?xs...))",
                        [](EGraph& g, const Match& m) -> std::optional<Id> {
                          auto parts = mapPieces(m.subst.list("xs"), [&](Id x) { return make(g, op().neg, {}, {x}); });
                          if (!parts) return std::nullopt;
                          return makeSum(g, *parts);
                        }));

  out.push_back(applier("cast-sum", "cast[dt](sum(xs)) = sum(cast[dt](x_i)), dt and every x_i float (exact over the reals)",
                        opPattern("cast", 1, "(sum ?xs...)"), castOverSum));
  out.push_back(applier("cast-cast", "cast[dt](cast[e](x)) = cast[dt](x) (= x when x is dt), dt, e and x float",
                        opPattern("cast", 1, "(cast[?e] ?x)"), castOfCast));

  struct Binary {
    const char* name;
    eg::Symbol sym;
  };
  for (const Binary& b : {Binary{"add", o.add}, Binary{"sub", o.sub}, Binary{"mul", o.mul}, Binary{"div", o.div}}) {
    std::string f = b.name;
    out.push_back(applier(f + "-concat-lhs",
                          f + "(concat[d](x1..xn), y) = concat[d](" + f + "(x_i, y_i)), y_i = y if y broadcasts "
                              "along d, else y's pieces of the same split",
                          "(" + f + " (concat[?d] ?xs...) ?y)", binaryOverConcat(b.sym, true)));
    out.push_back(applier(f + "-slices", f + "(slice[d](a), slice[d'](b)) = slice[D](" + f + "(a, b)), same range on one broadcast dim",
                          "(" + f + " (slice[?da, ?s, ?e, 1] ?a) (slice[?db, ?s, ?e, 1] ?b))", binaryOfSlices(b.sym)));
    out.push_back(applier("cast-" + f, "cast[dt](" + f + "(a, b)) = " + f + "(cast[dt](a), cast[dt](b)), dt, a and b float",
                          opPattern("cast", 1, "(" + f + " ?a ?b)"), castOverBinary(b.sym)));
    out.push_back(applier(f + "-concat-rhs", f + "(y, concat[d](x1..xn)) = concat[d](" + f + "(y_i, x_i)), as -lhs",
                          "(" + f + " ?y (concat[?d] ?xs...))", binaryOverConcat(b.sym, false)));
  }
  out.push_back(applier("mul-sum-lhs", "mul(sum(xs), y) = sum(mul(x_i, y))", "(mul (sum ?xs...) ?y)", overSum(o.mul, true)));
  out.push_back(applier("mul-sum-rhs", "mul(y, sum(xs)) = sum(mul(y, x_i))", "(mul ?y (sum ?xs...))", overSum(o.mul, false)));
  out.push_back(applier("div-sum", "div(sum(xs), y) = sum(div(x_i, y))", "(div (sum ?xs...) ?y)", overSum(o.div, true)));
  // add(sum(xs), y) alone is NOT distributive (y would be counted n times).
  out.push_back(applier("add-sum-sum", "add(sum(a1..an), sum(b1..bn)) = sum(add(a_i, b_i))", "(add (sum ?as...) (sum ?bs...))",
                        pairedSums(o.add)));
  out.push_back(applier("sub-sum-sum", "sub(sum(a1..an), sum(b1..bn)) = sum(sub(a_i, b_i))", "(sub (sum ?as...) (sum ?bs...))",
                        pairedSums(o.sub)));
}

}  // namespace tangle::lemmas::detail
