// Scaled-dot-product attention as ATen's CPU flash-attention op computes it
// (measured against torch 2.13 in float64, tests/ops/kernels_test.cpp):
//   s[b,h,i,j] = scale * q[b,h,i] . k[b,h/G,j] + mask[b,h,i,j], -inf where
//                causal and j > i (top-left aligned), G = Hq / Hkv;
//   lse[b,h,i] = logsumexp_j s, out[b,h,i] = sum_j exp(s - lse) v[b,h/G,j];
//   a row with every score -inf gives out 0 and lse 0.
// The backward takes out and lse as given (it does not recompute them):
//   P = exp(s - lse), dV = P^T dO, dS = P * (dO V^T - rowsum(dO * out)),
//   dQ = scale * dS K, dK = scale * dS^T Q; dK, dV summed over a kv head's queries.
#include <cmath>

#include "interp/detail.h"

namespace tangle::interp::kernels {

namespace {

struct Dims {
  int64_t B, Hq, Hkv, L, S, E;
  std::vector<int64_t> maskAt;  // offset into the mask of score [b,h,i,j]
  double scale;
  bool causal;
  size_t q(int64_t b, int64_t h, int64_t i) const { return static_cast<size_t>(((b * Hq + h) * L + i) * E); }
  size_t kv(int64_t b, int64_t h, int64_t j) const {
    return static_cast<size_t>(((b * Hkv + h / (Hq / Hkv)) * S + j) * E);
  }
  size_t row(int64_t b, int64_t h, int64_t i) const { return static_cast<size_t>((b * Hq + h) * L + i); }
};

// Shapes and attributes of (q, k, v, mask) at in[first..]; nullopt when they do not fit.
std::optional<Dims> dimsOf(const eg::AttrList& a, const std::vector<const Tensor*>& xs, size_t first) {
  auto causal = eg::attrBool(a, 0);
  auto scale = eg::attrNumber(a, 1);
  if (a.size() != 2 || !causal || !scale) return std::nullopt;
  const Tensor &q = *xs[first], &k = *xs[first + 1], &v = *xs[first + 2], &m = *xs.back();
  if (q.rank() != 4 || k.rank() != 4 || k.shape != v.shape || m.rank() > 4) return std::nullopt;
  Dims d{q.shape[0], q.shape[1], k.shape[1], q.shape[2], k.shape[2], q.shape[3], {}, *scale, *causal};
  if (k.shape[0] != d.B || k.shape[3] != d.E || d.Hkv <= 0 || d.Hq % d.Hkv) return std::nullopt;
  Shape scores = {d.B, d.Hq, d.L, d.S};
  auto strides = detail::broadcastStrides(m.shape, scores);
  if (!strides) return std::nullopt;
  d.maskAt = detail::viewOffsets(scores, *strides, 0);
  return d;
}

// The scores of row (b, h, i) into s; returns their maximum.
double scores(const Dims& d, const Tensor& q, const Tensor& k, const Tensor& m, int64_t b, int64_t h, int64_t i,
              std::vector<double>& s) {
  double mx = -INFINITY;
  for (int64_t j = 0; j < d.S; ++j) {
    double dot = 0;
    for (int64_t e = 0; e < d.E; ++e) dot += q.data[d.q(b, h, i) + e] * k.data[d.kv(b, h, j) + e];
    s[j] = d.causal && j > i ? -INFINITY : d.scale * dot + m.data[d.maskAt[d.row(b, h, i) * d.S + j]];
    mx = std::max(mx, s[j]);
  }
  return mx;
}

}  // namespace

// sdpa[causal, scale](q, k, v, mask) -> (out, lse)
Result sdpa(const eg::AttrList& a, const Inputs& in) {
  auto xs = detail::tensors(in, 4);
  if (!xs) return std::nullopt;
  auto d = dimsOf(a, *xs, 0);
  if (!d) return std::nullopt;
  const Tensor &q = *(*xs)[0], &k = *(*xs)[1], &v = *(*xs)[2], &m = *(*xs)[3];
  Tensor out = Tensor::filled(q.shape, 0), lse = Tensor::filled({d->B, d->Hq, d->L}, 0);
  std::vector<double> s(static_cast<size_t>(d->S));
  for (int64_t b = 0; b < d->B; ++b)
    for (int64_t h = 0; h < d->Hq; ++h)
      for (int64_t i = 0; i < d->L; ++i) {
        double mx = scores(*d, q, k, m, b, h, i, s);
        if (mx == -INFINITY) continue;  // fully masked row: 0, 0
        double z = 0;
        for (double x : s) z += std::exp(x - mx);
        double l = mx + std::log(z);
        lse.data[d->row(b, h, i)] = l;
        for (int64_t j = 0; j < d->S; ++j) {
          double p = std::exp(s[j] - l);
          for (int64_t e = 0; e < d->E; ++e) out.data[d->q(b, h, i) + e] += p * v.data[d->kv(b, h, j) + e];
        }
      }
  return Value::tupleOf(std::move(out), std::move(lse));
}

// sdpa_backward[causal, scale](dO, q, k, v, out, lse, mask) -> (dq, dk, dv)
Result sdpaBackward(const eg::AttrList& a, const Inputs& in) {
  auto xs = detail::tensors(in, 7);
  if (!xs) return std::nullopt;
  auto d = dimsOf(a, *xs, 1);
  if (!d) return std::nullopt;
  const Tensor &go = *(*xs)[0], &q = *(*xs)[1], &k = *(*xs)[2], &v = *(*xs)[3], &o = *(*xs)[4], &lse = *(*xs)[5],
               &m = *(*xs)[6];
  if (go.shape != q.shape || o.shape != q.shape || lse.shape != Shape{d->B, d->Hq, d->L}) return std::nullopt;
  Tensor dq = Tensor::filled(q.shape, 0), dk = Tensor::filled(k.shape, 0), dv = Tensor::filled(v.shape, 0);
  std::vector<double> s(static_cast<size_t>(d->S));
  for (int64_t b = 0; b < d->B; ++b)
    for (int64_t h = 0; h < d->Hq; ++h)
      for (int64_t i = 0; i < d->L; ++i) {
        scores(*d, q, k, m, b, h, i, s);
        size_t qi = d->q(b, h, i);
        double rowDot = 0;
        for (int64_t e = 0; e < d->E; ++e) rowDot += go.data[qi + e] * o.data[qi + e];
        for (int64_t j = 0; j < d->S; ++j) {
          double p = std::exp(s[j] - lse.data[d->row(b, h, i)]);
          size_t kj = d->kv(b, h, j);
          double dp = 0;
          for (int64_t e = 0; e < d->E; ++e) {
            dp += go.data[qi + e] * v.data[kj + e];
            dv.data[kj + e] += p * go.data[qi + e];
          }
          double ds = p * (dp - rowDot) * d->scale;
          for (int64_t e = 0; e < d->E; ++e) {
            dq.data[qi + e] += ds * k.data[kj + e];
            dk.data[kj + e] += ds * q.data[qi + e];
          }
        }
      }
  return Value::tupleOf(std::move(dq), std::move(dk), std::move(dv));
}

}  // namespace tangle::interp::kernels
