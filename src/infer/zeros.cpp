// Zero padding declared with `zero` statements: the region of an
// implementation input equals zeros (expand of the constant 0), and the input
// is the concat of its parts before, at and after the region, so lemmas see
// the zeros wherever the input is taken apart (a product over padded rows).
#include "infer/infer_state.h"
#include <algorithm>

#include "lower/lower.h"
#include "ops/ops.h"

namespace tangle {

namespace {

std::optional<eg::Id> zerosOf(eg::EGraph& g, const TensorType& t) {
  std::vector<int64_t> shape;
  for (Dim d : t.shape) {
    if (isSymbolic(d)) return std::nullopt;
    shape.push_back(d);
  }
  return g.tryAdd(eg::ENode{ops::syms().expand, eg::internAttrs({eg::Attr::ints(shape)}), {constNode(g, 0)}});
}

eg::Id sliceOf(eg::EGraph& g, eg::Id x, int64_t dim, int64_t start, int64_t end) {
  return g.add(eg::ENode{ops::syms().slice,
                         eg::internAttrs({eg::Attr::integer(dim), eg::Attr::dim(start), eg::Attr::dim(end),
                                          eg::Attr::integer(1)}),
                         {x}});
}

// x = concat(x[.., 0:a], zeros, x[.., b:n]) for the region slice(x, dim, a, b).
void addTiling(const InferState& st, eg::EGraph& g, const RelExpr& region, eg::Id zeros) {
  if (region.kind != RelExpr::Kind::Call || region.op != "slice" || region.args.size() != 1 ||
      region.args[0].kind != RelExpr::Kind::Tensor)
    return;
  const RelExpr *dimE = region.kwarg("dim"), *startE = region.kwarg("start"), *endE = region.kwarg("end"),
                 *stepE = region.kwarg("step");
  if (!dimE || !startE || !endE || (stepE && stepE->i != 1)) return;
  eg::Id x = addRelExpr(g, region.args[0], st.spec, st.impl);
  const TensorType* t = g.data(x).tensor();
  if (!t) return;
  int64_t rank = static_cast<int64_t>(t->rank()), dim = dimE->i < 0 ? dimE->i + rank : dimE->i;
  if (dim < 0 || dim >= rank || isSymbolic(t->shape[dim])) return;
  int64_t n = t->shape[dim], a = std::clamp<int64_t>(startE->i < 0 ? startE->i + n : startE->i, 0, n),
          b = std::clamp<int64_t>(endE->i < 0 ? endE->i + n : endE->i, 0, n);
  if (a >= b) return;
  std::vector<eg::Id> parts;
  if (a > 0) parts.push_back(sliceOf(g, x, dim, 0, a));
  parts.push_back(zeros);
  if (b < n) parts.push_back(sliceOf(g, x, dim, b, n));
  if (parts.size() < 2) return;
  if (auto c = g.tryAdd(eg::ENode{ops::syms().concat, eg::internAttrs({eg::Attr::integer(dim)}), parts}))
    g.merge(x, *c);
}

}  // namespace

void mergeZeroFacts(const InferState& st, eg::EGraph& g, int d) {
  auto it = st.implZeros.find(d);
  if (it == st.implZeros.end()) return;
  for (const RelExpr* region : it->second) {
    eg::Id r = addRelExpr(g, *region, st.spec, st.impl);
    g.rebuild();
    const TensorType* t = g.data(r).tensor();
    auto zeros = t ? zerosOf(g, *t) : std::nullopt;
    if (!zeros) continue;
    g.merge(r, *zeros);
    addTiling(st, g, *region, *zeros);
  }
  g.rebuild();
}

}  // namespace tangle
