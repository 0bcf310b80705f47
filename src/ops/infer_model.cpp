// Type inference of the model-level ops that tensor-parallel code wraps:
// dropout, comparisons and masks, and index lookups.
#include "ops/infer.h"

namespace tangle::ops::detail {

// dropout[p, train] x -> (out like x, keep-mask bool like x)
Data inferDropout(const eg::EGraph& g, const eg::ENode& n) {
  const TensorType* x = childTensor(g, n, 0);
  if (!x || n.children.size() != 1) return std::nullopt;
  eg::ClassData d;
  d.tuple = true;
  d.types = {*x, TensorType{DType::Bool, x->shape}};
  return d;
}

// masked_fill[v] x mask: x where mask is false, v where true; mask broadcasts to x.
Data inferMaskedFill(const eg::EGraph& g, const eg::ENode& n) {
  const TensorType* x = childTensor(g, n, 0);
  const TensorType* mask = childTensor(g, n, 1);
  if (!x || !mask || n.children.size() != 2 || eg::attrs(n.attrs).size() != 1) return std::nullopt;
  auto shape = broadcastShapes(x->shape, mask->shape);
  if (!shape || *shape != x->shape) return std::nullopt;
  return tensorData(x->dtype, x->shape);
}

}  // namespace tangle::ops::detail
