// Reductions (sum_dim, mean_dim, amax), softmax, layer norms.
#include <algorithm>
#include <cmath>
#include <limits>

#include "interp/detail.h"
#include "support/dims.h"

namespace tangle::interp::detail {

namespace {

// red[[dims], keepdim] x; [] = every dim.
Result reduce(const std::string& op, const eg::AttrList& a, const Inputs& in) {
  auto xs = tensors(in, 1);
  const auto* dims = eg::attrInts(a, 0);
  auto keep = eg::attrBool(a, 1);
  if (!xs || a.size() != 2 || !dims || !keep) return std::nullopt;
  const Tensor& x = *(*xs)[0];
  auto red = reducedDims(*dims, x.rank());
  if (!red) return std::nullopt;
  Shape kept = x.shape;  // the result with keepdim
  int64_t count = 1;
  for (int64_t d : *red) {
    count *= x.shape[d];
    kept[d] = 1;
  }
  // Each input element lands at the offset of its kept index.
  auto st = broadcastStrides(kept, x.shape);
  bool isMax = op == "amax";
  if (isMax && count == 0) return std::nullopt;  // amax of an empty dim is an error in ATen
  Tensor out = Tensor::filled(kept, isMax ? -std::numeric_limits<double>::infinity() : 0.0);
  std::array<std::vector<int64_t>, 1> dest{*st};
  stridedLoop<1>(x.shape, dest, {0}, [&](int64_t i, const std::array<int64_t, 1>& at) {
    double& o = out.data[static_cast<size_t>(at[0])];
    double v = x.data[static_cast<size_t>(i)];
    o = isMax ? std::max(o, v) : o + v;
  });
  if (op == "mean_dim")
    for (double& v : out.data) v /= static_cast<double>(count);  // 0/0 = nan, as ATen
  if (!*keep) {
    Shape s;
    for (int64_t d = 0; d < x.rank(); ++d)
      if (!std::binary_search(red->begin(), red->end(), d)) s.push_back(x.shape[d]);
    out.shape = s;
  }
  return Value::of(std::move(out));
}

// softmax[dim, half_to_float] x; `safe`: a row that is all -inf gives zeros
// (ATen's _safe_softmax, the math path of scaled-dot-product attention) where
// softmax gives NaN.
Result softmaxOf(const eg::AttrList& a, const Inputs& in, bool safe) {
  auto xs = tensors(in, 1);
  auto dim = eg::attrInt(a, 0);
  if (!xs || a.size() != 2 || !dim || !eg::attrBool(a, 1)) return std::nullopt;
  const Tensor& x = *(*xs)[0];
  if (x.rank() == 0) return (*dim == 0 || *dim == -1) ? Result(Value::of(Tensor::scalar(1.0))) : std::nullopt;
  auto d = normDim(*dim, x.rank());
  if (!d) return std::nullopt;
  int64_t len = x.shape[*d];
  int64_t inner = numelOf(Shape(x.shape.begin() + *d + 1, x.shape.end()));
  int64_t outer = len * inner == 0 ? 0 : x.numel() / (len * inner);
  Tensor out = x;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t base = o * len * inner + i;
      double mx = -std::numeric_limits<double>::infinity(), sum = 0;
      for (int64_t k = 0; k < len; ++k) mx = std::max(mx, x.data[base + k * inner]);
      if (safe && mx == -std::numeric_limits<double>::infinity()) {
        for (int64_t k = 0; k < len; ++k) out.data[base + k * inner] = 0;
        continue;
      }
      for (int64_t k = 0; k < len; ++k) sum += (out.data[base + k * inner] = std::exp(x.data[base + k * inner] - mx));
      for (int64_t k = 0; k < len; ++k) out.data[base + k * inner] /= sum;
    }
  return Value::of(std::move(out));
}

// native_layer_norm[[ns], eps] x w b -> (out, mean, rstd), statistics of
// shape leading dims + ones; apex_layer_norm: statistics of shape [n1].
// w and b have shape ns, or are 0-d (None: 1 and 0).
Result layerNorm(bool apex, const eg::AttrList& a, const Inputs& in) {
  auto xs = tensors(in, 3);
  const auto* ns = eg::attrInts(a, 0);
  auto eps = eg::attrNumber(a, 1);
  if (!xs || a.size() != 2 || !ns || !eps) return std::nullopt;
  const Tensor &x = *(*xs)[0], &w = *(*xs)[1], &b = *(*xs)[2];
  int64_t k = static_cast<int64_t>(ns->size());
  if (k == 0 || k > x.rank()) return std::nullopt;
  int64_t axis = x.rank() - k;
  if (!std::equal(ns->begin(), ns->end(), x.shape.begin() + axis)) return std::nullopt;
  for (const Tensor* p : {&w, &b})
    if (!p->shape.empty() && p->shape != *ns) return std::nullopt;
  int64_t n2 = numelOf(*ns);
  int64_t n1 = n2 == 0 ? 0 : x.numel() / n2;
  Tensor out = x;
  Shape stat(x.shape.begin(), x.shape.begin() + axis);
  if (apex) stat = {n1};
  else stat.resize(x.shape.size(), 1);
  Tensor mean = Tensor::filled(stat, 0), rstd = Tensor::filled(stat, 0);
  for (int64_t r = 0; r < n1; ++r) {
    const double* row = x.data.data() + r * n2;
    double mu = 0, var = 0;
    for (int64_t i = 0; i < n2; ++i) mu += row[i];
    mu /= static_cast<double>(n2);
    for (int64_t i = 0; i < n2; ++i) var += (row[i] - mu) * (row[i] - mu);
    var /= static_cast<double>(n2);  // biased, as ATen
    double rs = 1.0 / std::sqrt(var + *eps);
    mean.data[r] = mu;
    rstd.data[r] = rs;
    for (int64_t i = 0; i < n2; ++i) {
      double wi = w.shape.empty() ? w.data[0] : w.data[i];
      double bi = b.shape.empty() ? b.data[0] : b.data[i];
      out.data[r * n2 + i] = (row[i] - mu) * rs * wi + bi;
    }
  }
  return Value::tupleOf(std::move(out), std::move(mean), std::move(rstd));
}

}  // namespace

}  // namespace tangle::interp::detail

namespace tangle::interp::kernels {

Result sumDim(const eg::AttrList& a, const Inputs& in) { return detail::reduce("sum_dim", a, in); }
Result meanDim(const eg::AttrList& a, const Inputs& in) { return detail::reduce("mean_dim", a, in); }
Result amax(const eg::AttrList& a, const Inputs& in) { return detail::reduce("amax", a, in); }
Result softmax(const eg::AttrList& a, const Inputs& in) { return detail::softmaxOf(a, in, false); }
Result safeSoftmax(const eg::AttrList& a, const Inputs& in) { return detail::softmaxOf(a, in, true); }
Result layerNorm(const eg::AttrList& a, const Inputs& in) { return detail::layerNorm(false, a, in); }
Result apexLayerNorm(const eg::AttrList& a, const Inputs& in) { return detail::layerNorm(true, a, in); }

}  // namespace tangle::interp::kernels
