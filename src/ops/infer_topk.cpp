// Type rule of topk (mixture-of-experts routers).
#include "ops/infer.h"

namespace tangle::ops::detail {

// topk[d, k, largest] x -> (values, i64 indices), both x's shape with dim d of size k.
Data inferTopk(const eg::EGraph& g, const eg::ENode& n) {
  const TensorType* x = childTensor(g, n, 0);
  const auto& a = eg::attrs(n.attrs);
  auto d = attrInt(a, 0);
  auto k = attrInt(a, 1);
  if (!x || n.children.size() != 1 || a.size() != 3 || !k || !d || *d < 0 || *d >= x->rank()) return std::nullopt;
  if (isSymbolic(x->shape[*d]) || *k < 0 || *k > x->shape[*d]) return std::nullopt;
  Shape s = x->shape;
  s[*d] = *k;
  eg::ClassData out;
  out.tuple = true;
  out.types = {TensorType{x->dtype, s}, TensorType{DType::I64, s}};
  return out;
}

}  // namespace tangle::ops::detail
