// The ops of HF's attention-mask construction (a replicated computation on
// positions): arange, cumsum and x[i_0, ..., i_{k-1}] with broadcast index
// tensors. Integer results are exact in float64 at mask sizes.
#include <cmath>

#include "interp/detail.h"
#include "interp/interp.h"

namespace tangle::interp::kernels {

// arange[start, end, step]: no inputs, [ceil((end - start) / step)] values.
Result arange(const eg::AttrList& a, const Inputs& in) {
  auto start = eg::attrInt(a, 0), end = eg::attrInt(a, 1), step = eg::attrInt(a, 2);
  if (!in.empty() || a.size() != 3 || !start || !end || !step || *step == 0) return std::nullopt;
  int64_t n = std::max<int64_t>(0, (*end - *start + *step + (*step > 0 ? -1 : 1)) / *step);
  Tensor out = Tensor::filled({n}, 0);
  for (int64_t i = 0; i < n; ++i) out.data[static_cast<size_t>(i)] = static_cast<double>(*start + i * *step);
  return Value::of(std::move(out));
}

// cumsum[dim] x: running sums along dim.
Result cumsum(const eg::AttrList& a, const Inputs& in) {
  auto xs = detail::tensors(in, 1);
  auto d = eg::attrInt(a, 0);
  if (!xs || a.size() != 1 || !d || *d < 0 || *d >= (*xs)[0]->rank()) return std::nullopt;
  Tensor out = *(*xs)[0];
  int64_t len = out.shape[static_cast<size_t>(*d)], inner = 1;
  for (size_t i = static_cast<size_t>(*d) + 1; i < out.shape.size(); ++i) inner *= out.shape[i];
  for (int64_t base = 0; base < out.numel(); base += len * inner)
    for (int64_t j = 0; j < inner; ++j)
      for (int64_t i = 1; i < len; ++i)
        out.data[static_cast<size_t>(base + i * inner + j)] += out.data[static_cast<size_t>(base + (i - 1) * inner + j)];
  return Value::of(std::move(out));
}

// index_nd x i_0 .. i_{k-1}: x[i_0, ..., i_{k-1}] (ATen's index.Tensor with k
// index tensors and no None): the indices broadcast to B; the result is
// B + x.shape[k:]. Indices must be integers in [0, size).
Result indexNd(const eg::AttrList& a, const Inputs& in) {
  auto xs = detail::tensors(in, -1);
  if (!xs || !a.empty() || xs->size() < 2) return std::nullopt;
  const Tensor& x = *(*xs)[0];
  size_t k = xs->size() - 1;
  if (k > x.shape.size()) return std::nullopt;
  Shape b = (*xs)[1]->shape;
  for (size_t i = 2; i <= k; ++i) {
    auto s = detail::broadcast(b, (*xs)[i]->shape);
    if (!s) return std::nullopt;
    b = *s;
  }
  std::vector<std::vector<int64_t>> offs;  // each index tensor read broadcast to b
  for (size_t i = 1; i <= k; ++i) {
    auto st = detail::broadcastStrides((*xs)[i]->shape, b);
    if (!st) return std::nullopt;
    offs.push_back(detail::viewOffsets(b, *st, 0));
  }
  int64_t row = 1;
  for (size_t i = k; i < x.shape.size(); ++i) row *= x.shape[i];
  Shape s = b;
  s.insert(s.end(), x.shape.begin() + static_cast<int64_t>(k), x.shape.end());
  Tensor out = Tensor::filled(s, 0);
  int64_t count = 1;
  for (auto d : b) count *= d;
  for (int64_t e = 0; e < count; ++e) {
    int64_t flat = 0;
    for (size_t i = 0; i < k; ++i) {
      double v = (*xs)[i + 1]->data[static_cast<size_t>(offs[i][static_cast<size_t>(e)])];
      if (v != std::floor(v) || v < 0 || v >= static_cast<double>(x.shape[i])) return std::nullopt;
      flat = flat * x.shape[i] + static_cast<int64_t>(v);
    }
    std::copy_n(x.data.begin() + flat * row, row, out.data.begin() + e * row);
  }
  return Value::of(std::move(out));
}

}  // namespace tangle::interp::kernels
