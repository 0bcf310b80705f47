// mm, bmm and torch.matmul (1-D operands, batch broadcasting).
#include "interp/detail.h"

namespace tangle::interp::detail {

namespace {

// a [..., n, k] x b [..., k, m] with the batch dims broadcast; both ranks >= 2.
std::optional<Tensor> batched(const Tensor& a, const Tensor& b) {
  size_t ra = a.shape.size(), rb = b.shape.size();
  int64_t n = a.shape[ra - 2], k = a.shape[ra - 1], m = b.shape[rb - 1];
  if (b.shape[rb - 2] != k) return std::nullopt;
  Shape ba(a.shape.begin(), a.shape.end() - 2), bb(b.shape.begin(), b.shape.end() - 2);
  auto batch = broadcast(ba, bb);
  if (!batch) return std::nullopt;
  // Offsets of each operand's matrix for every batch index.
  auto stA = broadcastStrides(ba, *batch), stB = broadcastStrides(bb, *batch);
  // Strides in matrices; rescale to elements.
  for (int64_t& s : *stA) s *= n * k;
  for (int64_t& s : *stB) s *= k * m;
  auto offA = viewOffsets(*batch, *stA, 0), offB = viewOffsets(*batch, *stB, 0);
  Shape outShape = *batch;
  outShape.push_back(n);
  outShape.push_back(m);
  Tensor out = Tensor::filled(outShape, 0);
  for (size_t bi = 0; bi < offA.size(); ++bi) {
    const double* pa = a.data.data() + offA[bi];
    const double* pb = b.data.data() + offB[bi];
    double* po = out.data.data() + bi * n * m;
    // i-t-j order: b is read row by row (contiguous) and every output element still sums its
    // products in t order from 0, so the result is the i-j-t loop's to the bit.
    for (int64_t i = 0; i < n; ++i) {
      double* row = po + i * m;
      for (int64_t t = 0; t < k; ++t) {
        const double at = pa[i * k + t];
        const double* brow = pb + t * m;
        for (int64_t j = 0; j < m; ++j) row[j] += at * brow[j];
      }
    }
  }
  return out;
}

}  // namespace

// mm (rank 2) and bmm (rank 3, equal batch: bmm does not broadcast).
Result product(size_t rank, const eg::AttrList& attrs, const Inputs& in) {
  auto xs = tensors(in, 2);
  if (!xs || !attrs.empty()) return std::nullopt;
  const Tensor &a = *(*xs)[0], &b = *(*xs)[1];
  if (a.shape.size() != rank || b.shape.size() != rank) return std::nullopt;
  if (rank == 3 && a.shape[0] != b.shape[0]) return std::nullopt;
  auto out = batched(a, b);
  if (!out) return std::nullopt;
  return Value::of(std::move(*out));
}

}  // namespace tangle::interp::detail

namespace tangle::interp::kernels {

Result mm(const eg::AttrList& a, const Inputs& in) { return detail::product(2, a, in); }
Result bmm(const eg::AttrList& a, const Inputs& in) { return detail::product(3, a, in); }

Result matmul(const eg::AttrList& attrs, const Inputs& in) {
  auto xs = detail::tensors(in, 2);
  if (!xs || !attrs.empty()) return std::nullopt;
  Tensor a = *(*xs)[0], b = *(*xs)[1];
  if (a.shape.empty() || b.shape.empty()) return std::nullopt;
  bool dropRow = a.shape.size() == 1, dropCol = b.shape.size() == 1;
  if (dropRow) a.shape.insert(a.shape.begin(), 1);
  if (dropCol) b.shape.push_back(1);
  auto out = detail::batched(a, b);
  if (!out) return std::nullopt;
  if (dropCol) out->shape.erase(out->shape.end() - 1);
  if (dropRow) out->shape.erase(out->shape.end() - 1 - (dropCol ? 0 : 1));
  return Value::of(std::move(*out));
}

}  // namespace tangle::interp::kernels
