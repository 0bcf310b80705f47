// Type inference of the matrix products.
#include "ops/infer.h"

namespace tangle::ops::detail {

namespace {
std::optional<DType> sameDType(DType a, DType b) {
  if (a == DType::Unknown) return b;
  if (b == DType::Unknown || a == b) return a;
  return std::nullopt;  // ATen products do not promote
}
}  // namespace

// mm a b: [n, k] x [k, m] -> [n, m]
Data inferMm(const eg::EGraph& g, const eg::ENode& n) {
  const TensorType* a = childTensor(g, n, 0);
  const TensorType* b = childTensor(g, n, 1);
  if (!a || !b || n.children.size() != 2 || !eg::attrs(n.attrs).empty()) return std::nullopt;
  if (a->rank() != 2 || b->rank() != 2 || a->shape[1] != b->shape[0]) return std::nullopt;
  auto dt = sameDType(a->dtype, b->dtype);
  if (!dt) return std::nullopt;
  return tensorData(*dt, {a->shape[0], b->shape[1]});
}

// bmm a b: [B, n, k] x [B, k, m] -> [B, n, m]
Data inferBmm(const eg::EGraph& g, const eg::ENode& n) {
  const TensorType* a = childTensor(g, n, 0);
  const TensorType* b = childTensor(g, n, 1);
  if (!a || !b || n.children.size() != 2 || !eg::attrs(n.attrs).empty()) return std::nullopt;
  if (a->rank() != 3 || b->rank() != 3 || a->shape[0] != b->shape[0] || a->shape[2] != b->shape[1])
    return std::nullopt;
  auto dt = sameDType(a->dtype, b->dtype);
  if (!dt) return std::nullopt;
  return tensorData(*dt, {a->shape[0], a->shape[1], b->shape[2]});
}

// matmul a b: torch.matmul semantics (1-D operands, batch broadcasting).
Data inferMatmul(const eg::EGraph& g, const eg::ENode& n) {
  const TensorType* a = childTensor(g, n, 0);
  const TensorType* b = childTensor(g, n, 1);
  if (!a || !b || n.children.size() != 2 || !eg::attrs(n.attrs).empty()) return std::nullopt;
  if (a->rank() == 0 || b->rank() == 0) return std::nullopt;
  auto dt = sameDType(a->dtype, b->dtype);
  if (!dt) return std::nullopt;
  // Promote 1-D operands to matrices, remember which dims to drop.
  Shape sa = a->shape, sb = b->shape;
  bool dropRow = false, dropCol = false;
  if (sa.size() == 1) { sa.insert(sa.begin(), 1); dropRow = true; }
  if (sb.size() == 1) { sb.push_back(1); dropCol = true; }
  if (sa.back() != sb[sb.size() - 2]) return std::nullopt;
  Shape ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
  auto batch = broadcastShapes(g.symbols(), ba, bb);
  if (!batch) return std::nullopt;
  Shape out = *batch;
  if (!dropRow) out.push_back(sa[sa.size() - 2]);
  if (!dropCol) out.push_back(sb.back());
  return tensorData(*dt, std::move(out));
}

}  // namespace tangle::ops::detail
