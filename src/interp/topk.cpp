// topk[d, k, largest] x -> (values, indices): the k largest (or smallest)
// entries along d in order, ties broken by the lower index (a deterministic
// choice; ATen leaves tie order unspecified, the lemmas never depend on it).
#include <algorithm>
#include <numeric>

#include "interp/detail.h"
#include "support/dims.h"

namespace tangle::interp::kernels {

Result topk(const eg::AttrList& a, const Inputs& in) {
  auto xs = detail::tensors(in, 1);
  auto dim = eg::attrInt(a, 0);
  auto k = eg::attrInt(a, 1);
  auto largest = eg::attrBool(a, 2);
  if (!xs || a.size() != 3 || !k || !dim || !largest) return std::nullopt;
  const Tensor& x = *(*xs)[0];
  auto d = normDim(*dim, x.rank());
  if (!d || *k < 0 || *k > x.shape[*d]) return std::nullopt;
  int64_t len = x.shape[*d];
  int64_t inner = numelOf(Shape(x.shape.begin() + *d + 1, x.shape.end()));
  int64_t outer = len == 0 || inner == 0 ? 0 : x.numel() / (len * inner);
  Shape s = x.shape;
  s[*d] = *k;
  Tensor vals = Tensor::filled(s, 0), idxs = Tensor::filled(s, 0);
  std::vector<int64_t> order(static_cast<size_t>(len));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t base = o * len * inner + i;
      auto at = [&](int64_t j) { return x.data[static_cast<size_t>(base + j * inner)]; };
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t p, int64_t q) { return *largest ? at(p) > at(q) : at(p) < at(q); });
      for (int64_t j = 0; j < *k; ++j) {
        size_t out = static_cast<size_t>(o * *k * inner + j * inner + i);
        vals.data[out] = at(order[static_cast<size_t>(j)]);
        idxs.data[out] = static_cast<double>(order[static_cast<size_t>(j)]);
      }
    }
  return Value::tupleOf(std::move(vals), std::move(idxs));
}

}  // namespace tangle::interp::kernels
