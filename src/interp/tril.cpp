// tril[d] x: x with the elements above the d-th diagonal of its last two dims
// set to 0 (a causal mask is tril(ones(n, n))).
#include "interp/detail.h"
#include "interp/interp.h"

namespace tangle::interp::kernels {

Result tril(const eg::AttrList& a, const Inputs& in) {
  auto xs = detail::tensors(in, 1);
  auto d = eg::attrInt(a, 0);
  if (!xs || a.size() != 1 || !d || (*xs)[0]->rank() < 2) return std::nullopt;
  Tensor out = *(*xs)[0];
  int64_t rows = out.shape[out.shape.size() - 2], cols = out.shape.back();
  for (int64_t base = 0; base < out.numel(); base += rows * cols)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        if (j - i > *d) out.data[base + i * cols + j] = 0;
  return Value::of(std::move(out));
}

}  // namespace tangle::interp::kernels
