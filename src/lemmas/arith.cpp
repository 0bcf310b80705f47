// Scalar arithmetic that gradient accumulation and loss scaling produce:
// means as scaled sums, folded constant divisors, and regrouping a running
// sum of micro-batch losses.
#include "lemmas/lemma_util.h"

namespace tangle::lemmas::detail {

namespace {

// mean_dim[dims, keep](x) = div(sum_dim[dims, keep](x), n), n = number of reduced elements
std::optional<Id> meanAsSum(EGraph& g, const Match& m) {
  Id x = m.subst.cls("x");
  const TensorType* xt = typeOf(g, x);
  const Attr& dims = m.subst.attr("dims");
  if (!xt || dims.kind != Attr::Kind::IntList) return std::nullopt;
  auto red = ops::reducedDims(dims.list, xt->rank());
  if (!red) return std::nullopt;
  int64_t n = 1;
  for (int64_t d : *red) {
    if (xt->shape[d] <= 0) return std::nullopt;  // symbolic or empty: refuse
    n *= xt->shape[d];
  }
  auto s = make(g, op().sumDim, {dims, m.subst.attr("keep")}, {x});
  if (!s) return std::nullopt;
  Id count = makeConstant(g, static_cast<double>(n));
  return make(g, op().div, {}, {*s, count});
}

// div(div(x, a), b) = div(x, a * b) for nonzero 0-d constants a, b
std::optional<Id> foldDivisors(EGraph& g, const Match& m) {
  auto a = scalarConstant(g, m.subst.cls("a")), b = scalarConstant(g, m.subst.cls("b"));
  if (!a || !b || *a == 0 || *b == 0) return std::nullopt;
  Id ab = makeConstant(g, *a * *b);
  return make(g, op().div, {}, {m.subst.cls("x"), ab});
}

}  // namespace

void addArithLemmas(std::vector<Lemma>& out) {
  out.push_back(applier("mean-as-sum", "mean_dim[dims](x) = div(sum_dim[dims](x), n), n the number of reduced elements",
                        "(mean_dim[?dims, ?keep] ?x)", meanAsSum));
  out.push_back(applier("div-div-constants", "div(div(x, a), b) = div(x, a*b) for nonzero scalar constants a, b",
                        "(div (div ?x ?a) ?b)", foldDivisors));
  // sum is elementwise addition of same-shape tensors, so a running add regroups.
  // (No add -> sum rule: that would make any addition of two implementation
  // tensors "clean", while clean sums are meant to combine ranks.)
  out.push_back(rewrite("add-sum-regroup", "add(a, sum(b, c)) = add(add(a, b), c)", "(add ?a (sum ?b ?c))",
                        "(add (add ?a ?b) ?c)"));
}

}  // namespace tangle::lemmas::detail
