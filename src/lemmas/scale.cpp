// Division by a scalar constant moved out of the operators that are linear
// in one operand. Data parallelism makes these: each rank seeds its backward
// with 1/(local batch elements) where the spec has 1/(global ones), so each
// rank's gradients equal the spec's only up to a constant factor until the
// reduction divides by the world size. Pulling the divisions outward lets
// `div-div-constants` and `div-sum` meet the spec's single division.
// Each rule is an identity for every input: op is linear in that operand and
// k is a nonzero 0-d constant (so it broadcasts over anything).
#include "lemmas/lemma_util.h"

namespace tangle::lemmas::detail {

namespace {

bool nonzeroScalar(const EGraph& g, Subst& s) {
  auto k = scalarConstant(g, s.cls("k"));
  return k && *k != 0;
}

struct Linear {
  const char* name;   // lemma name stem
  const char* lhs;    // pattern with (div ?a ?k) in the linear operand
  const char* rhs;    // the same op on ?a, divided by ?k
};

constexpr Linear kLinear[] = {
    {"mul-lhs", "(mul (div ?a ?k) ?b)", "(div (mul ?a ?b) ?k)"},
    {"mul-rhs", "(mul ?b (div ?a ?k))", "(div (mul ?b ?a) ?k)"},
    {"mm-lhs", "(mm (div ?a ?k) ?b)", "(div (mm ?a ?b) ?k)"},
    {"mm-rhs", "(mm ?b (div ?a ?k))", "(div (mm ?b ?a) ?k)"},
    {"transpose", "(transpose[?p, ?q] (div ?a ?k))", "(div (transpose[?p, ?q] ?a) ?k)"},
    {"permute", "(permute[?p] (div ?a ?k))", "(div (permute[?p] ?a) ?k)"},
    {"reshape", "(reshape[?p] (div ?a ?k))", "(div (reshape[?p] ?a) ?k)"},
    {"slice", "(slice[?d, ?s, ?e, ?st] (div ?a ?k))", "(div (slice[?d, ?s, ?e, ?st] ?a) ?k)"},
    {"sum_dim", "(sum_dim[?d, ?keep] (div ?a ?k))", "(div (sum_dim[?d, ?keep] ?a) ?k)"},
    {"expand", "(expand[?s] (div ?a ?k))", "(div (expand[?s] ?a) ?k)"},
    {"gelu_backward", "(gelu_backward[?ap] (div ?a ?k) ?x)", "(div (gelu_backward[?ap] ?a ?x) ?k)"},
};

// The constant divisor of every child's div(x_i, k) node, when one k is common to all (the x_i in `xs`).
std::optional<double> commonDivisor(const EGraph& g, const std::vector<Id>& children, std::vector<Id>& xs) {
  std::optional<double> k;
  for (Id c : children) {
    std::optional<Id> x;
    for (const eg::ENode& n : g.eclass(c).nodes) {
      if (n.op != op().div || n.children.size() != 2) continue;
      auto d = scalarConstant(g, n.children[1]);
      if (!d || *d == 0 || (k && *d != *k)) continue;
      k = d;
      x = n.children[0];
      break;
    }
    if (!x) return std::nullopt;
    xs.push_back(*x);
  }
  return k;
}

// sum(div(x_1, k), .., div(x_n, k)) = div(sum(x_i), k): the ranks' gradients, each still scaled by
// the local-mean loss's 1/k, reduced by an all-reduce or reduce-scatter.
std::optional<Id> sumOfScaled(EGraph& g, const Match& m) {
  std::vector<Id> xs;
  auto k = commonDivisor(g, m.subst.list("xs"), xs);
  if (!k) return std::nullopt;
  auto sum = makeSum(g, xs);
  if (!sum) return std::nullopt;
  return make(g, op().div, {}, {*sum, makeConstant(g, *k)});
}

// concat[d](div(x_1, k), zeros, ..) = div(concat[d](x_1, zeros, ..), k): each piece scaled by one k,
// or a zero splat (0 / k = 0, kept as it is). slice_backward pads a scaled gradient so.
std::optional<Id> concatOfScaled(EGraph& g, const Match& m) {
  std::vector<Id> pieces = m.subst.list("xs"), scaled, xs;
  std::vector<bool> zero;
  for (Id c : pieces) {
    const eg::ClassData& d = g.data(c);
    zero.push_back(d.tensor() && d.constant && *d.constant == 0.0);
    if (!zero.back()) scaled.push_back(c);
  }
  if (scaled.empty() || m.subst.attr("d").kind != eg::Attr::Kind::Int) return std::nullopt;
  auto k = commonDivisor(g, scaled, xs);
  if (!k) return std::nullopt;
  std::vector<Id> inner;
  for (size_t i = 0, j = 0; i < pieces.size(); ++i) inner.push_back(zero[i] ? pieces[i] : xs[j++]);
  auto cat = makeConcat(g, m.subst.attr("d").i, inner);
  if (!cat) return std::nullopt;
  return make(g, op().div, {}, {*cat, makeConstant(g, *k)});
}

// div(x, a) = div(div(x, b), a/b) where div(x, b) is in the e-graph and a/b is an integer > 1: the
// spec divides by the global element count a, a rank by its local count b (the local-mean loss).
// Only integral ratios above 1, so a divisor is never split twice into the same pair, nor endlessly.
std::optional<Id> splitDivisor(EGraph& g, const Match& m) {
  Id x = m.subst.cls("x");
  auto a = scalarConstant(g, m.subst.cls("a"));
  if (!a || *a == 0) return std::nullopt;
  std::vector<std::pair<Id, double>> found;  // collected first: adding nodes may move x's parents
  for (const auto& [parent, cls] : g.eclass(x).parents) {
    if (parent.op != op().div || parent.children.size() != 2 || g.find(parent.children[0]) != g.find(x)) continue;
    auto b = scalarConstant(g, parent.children[1]);
    if (!b || *b == 0) continue;
    double ratio = *a / *b;
    if (ratio > 1 && ratio == static_cast<double>(static_cast<int64_t>(ratio)) && *b * ratio == *a)
      found.push_back({cls, ratio});
  }
  if (found.empty()) return std::nullopt;  // (one divisor is enough: the spec's meets one rank's)
  return make(g, op().div, {}, {found.front().first, makeConstant(g, found.front().second)});
}

}  // namespace

void addScaleLemmas(std::vector<Lemma>& out) {
  out.push_back(rewrite("scale-div-add", "div(add(a, b), k) = add(div(a, k), div(b, k)) for a nonzero scalar constant k",
                        "(div (add ?a ?b) ?k)", "(add (div ?a ?k) (div ?b ?k))", nonzeroScalar));
  // the other direction for add and sub (two scaled operands), so a scaled difference is one scaled term
  out.push_back(rewrite("scale-out-add", "add(div(a, k), div(b, k)) = div(add(a, b), k) for a nonzero scalar constant k",
                        "(add (div ?a ?k) (div ?b ?k))", "(div (add ?a ?b) ?k)", nonzeroScalar));
  out.push_back(rewrite("scale-out-sub", "sub(div(a, k), div(b, k)) = div(sub(a, b), k) for a nonzero scalar constant k",
                        "(sub (div ?a ?k) (div ?b ?k))", "(div (sub ?a ?b) ?k)", nonzeroScalar));
  out.push_back(applier("scale-out-sum", "sum(div(x_i, k)) = div(sum(x_i), k) for a nonzero scalar constant k",
                        "(sum ?xs...)", sumOfScaled));
  out.push_back(applier("scale-out-concat",
                        "concat[d](div(x_i, k) or zeros) = div(concat[d](x_i or zeros), k) for a nonzero scalar constant k",
                        "(concat[?d] ?xs...)", concatOfScaled));
  out.push_back(applier("div-split-constant",
                        "div(x, a) = div(div(x, b), a/b) for nonzero scalar constants with div(x, b) present and a/b "
                        "an integer > 1",
                        "(div ?x ?a)", splitDivisor));
  for (const Linear& l : kLinear) {
    std::string name = std::string("scale-out-") + l.name;
    out.push_back(rewrite(name, std::string(l.lhs) + " = " + l.rhs + " for a nonzero scalar constant k (linear operand)",
                          l.lhs, l.rhs, nonzeroScalar));
  }
}

}  // namespace tangle::lemmas::detail
