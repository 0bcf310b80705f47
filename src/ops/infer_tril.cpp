// tril[d] x: the type of x, which must have at least two dims.
#include "ops/infer.h"

namespace tangle::ops::detail {

Data inferTril(const eg::EGraph& g, const eg::ENode& n) {
  const TensorType* x = childTensor(g, n, 0);
  if (!x || n.children.size() != 1 || x->rank() < 2 || eg::attrs(n.attrs).size() != 1) return std::nullopt;
  return tensorData(x->dtype, x->shape);
}

}  // namespace tangle::ops::detail
