// Type rules of the mask-construction ops (interp/mask_ops.cpp).
#include "ops/infer.h"

namespace tangle::ops::detail {

// arange[start, end, step]: i64 [ceil((end - start) / step)], no children.
Data inferArange(const eg::EGraph&, const eg::ENode& n) {
  const auto& a = eg::attrs(n.attrs);
  auto start = attrInt(a, 0), end = attrInt(a, 1), step = attrInt(a, 2);
  if (!n.children.empty() || a.size() != 3 || !start || !end || !step || *step == 0) return std::nullopt;
  int64_t len = std::max<int64_t>(0, (*end - *start + *step + (*step > 0 ? -1 : 1)) / *step);
  return tensorData(DType::I64, {len});
}

// cumsum[dim] x: x's shape; floats keep their dtype, integers and bools sum to i64.
Data inferCumsum(const eg::EGraph& g, const eg::ENode& n) {
  const TensorType* x = childTensor(g, n, 0);
  auto d = attrInt(eg::attrs(n.attrs), 0);
  if (!x || n.children.size() != 1 || eg::attrs(n.attrs).size() != 1 || !d || *d < 0 || *d >= x->rank())
    return std::nullopt;
  return tensorData(isFloating(x->dtype) ? x->dtype : DType::I64, x->shape);
}

// index_nd x i_0 .. i_{k-1}: integer (not bool) indices broadcast to B; B + x.shape[k:].
Data inferIndexNd(const eg::EGraph& g, const eg::ENode& n) {
  const TensorType* x = childTensor(g, n, 0);
  if (!x || n.children.size() < 2 || !eg::attrs(n.attrs).empty()) return std::nullopt;
  size_t k = n.children.size() - 1;
  if (k > static_cast<size_t>(x->rank())) return std::nullopt;
  std::optional<Shape> b;
  for (size_t i = 1; i <= k; ++i) {
    const TensorType* t = childTensor(g, n, i);
    if (!t || isFloating(t->dtype) || t->dtype == DType::Bool || t->dtype == DType::Unknown) return std::nullopt;
    b = b ? broadcastShapes(g.symbols(), *b, t->shape) : std::optional<Shape>(t->shape);
    if (!b) return std::nullopt;
  }
  Shape s = *b;
  s.insert(s.end(), x->shape.begin() + static_cast<int64_t>(k), x->shape.end());
  return tensorData(x->dtype, std::move(s));
}

}  // namespace tangle::ops::detail
