// Model-level ops: dropout, where, comparisons and masks, index lookups, max_dim.
#include <algorithm>
#include <bit>
#include <cmath>

#include "interp/detail.h"
#include "support/dims.h"

namespace tangle::interp::detail {

namespace {

// dropout[p, train] x -> (out, keep mask). Modelled as a deterministic
// elementwise function of the value (the spec and the implementation draw the
// same mask for the same element, the lemmas' assumption): an element is kept
// when a hash of its (rounded) bits is >= p; kept elements are scaled by 1 / (1 - p).
// Not training: (x, ones).
Result dropout(const eg::AttrList& a, const Inputs& in) {
  auto xs = tensors(in, 1);
  auto p = eg::attrNumber(a, 0);
  auto train = eg::attrBool(a, 1);
  if (!xs || a.size() != 2 || !p || !train || *p < 0 || *p > 1) return std::nullopt;
  Tensor out = *(*xs)[0], mask = Tensor::filled(out.shape, 1);
  if (!*train) return Value::tupleOf(std::move(out), std::move(mask));
  // Without branches: keep is a coin flip per element, and its mispredicted branch cost more than
  // the division done for every element. Same values as `keep ? x / (1 - p) : 0` (+0.0; p = 1
  // keeps none, since u < 1).
  const double prob = *p, scale = 1 - prob;
  for (size_t i = 0; i < out.data.size(); ++i) {
    // Rounded to 20 mantissa bits first: the spec and an implementation that
    // sums in another order differ in the last bits, and must draw the same mask.
    uint64_t bits = (std::bit_cast<uint64_t>(out.data[i]) + (uint64_t(1) << 31)) & ~((uint64_t(1) << 32) - 1);
    uint64_t h = bits * 0x9e3779b97f4a7c15ULL;
    h ^= h >> 29;
    double u = static_cast<double>(h >> 11) / 9007199254740992.0;  // [0, 1)
    uint64_t keep = u >= prob;
    mask.data[i] = static_cast<double>(keep);
    out.data[i] = std::bit_cast<double>(std::bit_cast<uint64_t>(out.data[i] / scale) & (0 - keep));
  }
  return Value::tupleOf(std::move(out), std::move(mask));
}

// where(c, a, b) = c != 0 ? a : b, the three broadcast together.
Result where(const Inputs& in) {
  auto xs = tensors(in, 3);
  if (!xs) return std::nullopt;
  const Tensor &c = *(*xs)[0], &a = *(*xs)[1], &b = *(*xs)[2];
  auto ab = broadcast(a.shape, b.shape);
  auto shape = ab ? broadcast(c.shape, *ab) : std::nullopt;
  if (!shape) return std::nullopt;
  Tensor out = Tensor::filled(*shape, 0);
  std::array<std::vector<int64_t>, 3> st{*broadcastStrides(c.shape, *shape), *broadcastStrides(a.shape, *shape),
                                         *broadcastStrides(b.shape, *shape)};
  stridedLoop<3>(*shape, st, {0, 0, 0}, [&](int64_t i, const std::array<int64_t, 3>& o) {
    out.data[static_cast<size_t>(i)] = c.data[static_cast<size_t>(o[0])] != 0 ? a.data[static_cast<size_t>(o[1])]
                                                                                : b.data[static_cast<size_t>(o[2])];
  });
  return Value::of(std::move(out));
}

// Comparisons and logical and/or: broadcasting, f gives 1.0 or 0.0.
template <class F>
Result compare(const Inputs& in, F f) {
  auto xs = tensors(in, 2);
  if (!xs) return std::nullopt;
  auto out = zipBroadcast(*(*xs)[0], *(*xs)[1], f);
  if (!out) return std::nullopt;
  return Value::of(std::move(*out));
}

// An index value: integral and in [0, n) (PyTorch raises otherwise).
std::optional<int64_t> indexIn(double v, int64_t n) {
  if (v != std::floor(v) || v < 0 || v >= static_cast<double>(n)) return std::nullopt;
  return static_cast<int64_t>(v);
}

// index_rows(w, idx) = w[idx]: idx.shape + w.shape[1:].
Result indexRows(const Inputs& in) {
  auto xs = tensors(in, 2);
  if (!xs || (*xs)[0]->rank() < 1) return std::nullopt;
  const Tensor &w = *(*xs)[0], &idx = *(*xs)[1];
  int64_t row = w.shape[0] == 0 ? 0 : w.numel() / w.shape[0];
  Shape s = idx.shape;
  s.insert(s.end(), w.shape.begin() + 1, w.shape.end());
  Tensor out = Tensor::filled(s, 0);
  for (size_t i = 0; i < idx.data.size(); ++i) {
    auto r = indexIn(idx.data[i], w.shape[0]);
    if (!r) return std::nullopt;
    std::copy_n(w.data.begin() + *r * row, row, out.data.begin() + static_cast<int64_t>(i) * row);
  }
  return Value::of(std::move(out));
}

// gather_rows(x [N, V], idx [N]) = x[arange(N), idx] -> [N].
Result gatherRows(const Inputs& in) {
  auto xs = tensors(in, 2);
  if (!xs) return std::nullopt;
  const Tensor &x = *(*xs)[0], &idx = *(*xs)[1];
  if (x.rank() != 2 || idx.rank() != 1 || idx.shape[0] != x.shape[0]) return std::nullopt;
  Tensor out = Tensor::filled({x.shape[0]}, 0);
  for (int64_t n = 0; n < x.shape[0]; ++n) {
    auto c = indexIn(idx.data[n], x.shape[1]);
    if (!c) return std::nullopt;
    out.data[n] = x.data[n * x.shape[1] + *c];
  }
  return Value::of(std::move(out));
}

// one_hot[C](idx) -> [..., C]: 1 at each index, 0 elsewhere (an index outside [0, C): PyTorch raises).
Result oneHot(const eg::AttrList& a, const Inputs& in) {
  auto xs = tensors(in, 1);
  auto classes = eg::attrInt(a, 0);
  if (!xs || a.size() != 1 || !classes || *classes < 1) return std::nullopt;
  const Tensor& idx = *(*xs)[0];
  Shape s = idx.shape;
  s.push_back(*classes);
  Tensor out = Tensor::filled(s, 0);
  for (size_t i = 0; i < idx.data.size(); ++i) {
    auto c = indexIn(idx.data[i], *classes);
    if (!c) return std::nullopt;
    out.data[i * static_cast<size_t>(*classes) + static_cast<size_t>(*c)] = 1;
  }
  return Value::of(std::move(out));
}

// max_dim[d, keep] x -> (values, indices of the first maximum).
Result maxDim(const eg::AttrList& a, const Inputs& in) {
  auto xs = tensors(in, 1);
  auto dim = eg::attrInt(a, 0);
  auto keep = eg::attrBool(a, 1);
  if (!xs || a.size() != 2 || !dim || !keep) return std::nullopt;
  const Tensor& x = *(*xs)[0];
  auto d = normDim(*dim, x.rank());
  if (!d || x.shape[*d] == 0) return std::nullopt;
  int64_t len = x.shape[*d], inner = numelOf(Shape(x.shape.begin() + *d + 1, x.shape.end()));
  int64_t outer = x.numel() / (len * std::max<int64_t>(inner, 1));
  Shape s = x.shape;
  if (*keep) s[*d] = 1;
  else s.erase(s.begin() + *d);
  Tensor vals = Tensor::filled(s, 0), idxs = Tensor::filled(s, 0);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t base = o * len * inner + i, best = 0;
      for (int64_t k = 1; k < len; ++k)
        if (x.data[base + k * inner] > x.data[base + best * inner] || std::isnan(x.data[base + k * inner])) {
          best = k;
          if (std::isnan(x.data[base + k * inner])) break;  // NaN propagates, as ATen
        }
      vals.data[o * inner + i] = x.data[base + best * inner];
      idxs.data[o * inner + i] = static_cast<double>(best);
    }
  return Value::tupleOf(std::move(vals), std::move(idxs));
}

// gelu_backward[approx](grad, x) = grad * gelu'(x), broadcasting; ATen's formulas.
Result geluBackward(const eg::AttrList& a, const Inputs& in) {
  auto xs = tensors(in, 2);
  std::string approx = "none";
  if (a.size() == 1 && a[0].kind == eg::Attr::Kind::Str) approx = eg::symbolName(static_cast<eg::Symbol>(a[0].i));
  else if (!a.empty()) return std::nullopt;
  if (!xs || (approx != "none" && approx != "tanh")) return std::nullopt;
  const Tensor &g = *(*xs)[0], &x = *(*xs)[1];
  auto shape = broadcast(g.shape, x.shape);
  if (!shape) return std::nullopt;
  auto og = viewOffsets(*shape, *broadcastStrides(g.shape, *shape), 0);
  auto ox = viewOffsets(*shape, *broadcastStrides(x.shape, *shape), 0);
  Tensor out = Tensor::filled(*shape, 0);
  for (size_t i = 0; i < out.data.size(); ++i) {
    double v = x.data[ox[i]], d;
    if (approx == "none") {
      double cdf = 0.5 * (1 + std::erf(v / std::sqrt(2.0)));
      double pdf = std::exp(-0.5 * v * v) / std::sqrt(2 * M_PI);
      d = cdf + v * pdf;
    } else {
      const double beta = std::sqrt(2.0 / M_PI), kappa = 0.044715;
      double t = std::tanh(beta * (v + kappa * v * v * v));
      d = 0.5 * (1 + t) + 0.5 * v * (1 - t * t) * beta * (1 + 3 * kappa * v * v);
    }
    out.data[i] = g.data[og[i]] * d;
  }
  return Value::of(std::move(out));
}

// apex_layer_norm_bwd[[ns], eps](grad, mean, invvar, x, w, b) -> (dx, dw, db):
// rows of n2 = prod(ns) elements, mean/invvar one value per row (as saved by
// the forward); xhat = (x - mean) * invvar,
//   dx = invvar / n2 * (n2 * dxhat - sum(dxhat) - xhat * sum(dxhat * xhat)), dxhat = grad * w,
//   dw = sum over rows of grad * xhat, db = sum over rows of grad.
// w (and b) have shape ns or are 0-d (then dw, db are total sums).
Result layerNormBwd(const eg::AttrList& a, const Inputs& in) {
  auto xs = tensors(in, 6);
  const auto* ns = eg::attrInts(a, 0);
  if (!xs || a.size() != 2 || !ns || ns->empty() || !eg::attrNumber(a, 1)) return std::nullopt;
  const Tensor &g = *(*xs)[0], &mean = *(*xs)[1], &inv = *(*xs)[2], &x = *(*xs)[3], &w = *(*xs)[4], &b = *(*xs)[5];
  int64_t k = static_cast<int64_t>(ns->size()), axis = x.rank() - k;
  if (g.shape != x.shape || axis < 0 || !std::equal(ns->begin(), ns->end(), x.shape.begin() + axis)) return std::nullopt;
  for (const Tensor* p : {&w, &b})
    if (!p->shape.empty() && p->shape != *ns) return std::nullopt;
  int64_t n2 = numelOf(*ns), n1 = n2 == 0 ? 0 : x.numel() / n2;
  if (mean.numel() != n1 || inv.numel() != n1) return std::nullopt;
  Tensor dx = Tensor::filled(x.shape, 0), dw = Tensor::filled(w.shape, 0), db = Tensor::filled(b.shape, 0);
  std::vector<double> xhat(static_cast<size_t>(n2)), dxhat(static_cast<size_t>(n2));
  for (int64_t r = 0; r < n1; ++r) {
    double s1 = 0, s2 = 0;
    for (int64_t i = 0; i < n2; ++i) {
      int64_t e = r * n2 + i;
      xhat[i] = (x.data[e] - mean.data[r]) * inv.data[r];
      dxhat[i] = g.data[e] * (w.shape.empty() ? w.data[0] : w.data[i]);
      s1 += dxhat[i];
      s2 += dxhat[i] * xhat[i];
      dw.data[w.shape.empty() ? 0 : i] += g.data[e] * xhat[i];
      db.data[b.shape.empty() ? 0 : i] += g.data[e];
    }
    for (int64_t i = 0; i < n2; ++i)
      dx.data[r * n2 + i] = inv.data[r] / static_cast<double>(n2) * (static_cast<double>(n2) * dxhat[i] - s1 - xhat[i] * s2);
  }
  return Value::tupleOf(std::move(dx), std::move(dw), std::move(db));
}

}  // namespace

// rms_norm[eps](x, w) over the last dim.
Result rmsNorm(const eg::AttrList& a, const Inputs& in) {
  auto xs = tensors(in, 2);
  if (!xs || a.size() != 1) return std::nullopt;
  double eps = a[0].kind == eg::Attr::Kind::Float ? a[0].f : static_cast<double>(a[0].i);
  const Tensor &x = *(*xs)[0], &w = *(*xs)[1];
  if (x.rank() < 1 || w.shape != std::vector<int64_t>{x.shape.back()}) return std::nullopt;
  int64_t d = x.shape.back();
  Tensor out = Tensor::filled(x.shape, 0);
  for (size_t row = 0; d > 0 && row < x.data.size() / static_cast<size_t>(d); ++row) {
    double ss = 0;
    for (int64_t j = 0; j < d; ++j) ss += x.data[row * d + j] * x.data[row * d + j];
    double r = 1 / std::sqrt(ss / static_cast<double>(d) + eps);
    for (int64_t j = 0; j < d; ++j) out.data[row * d + j] = x.data[row * d + j] * r * w.data[j];
  }
  return Value::of(std::move(out));
}

// rotary[hs, neox](positions, x [T, H*hs], cache [P, rot]): vLLM's rotary
// embedding. cache[p] = [cos(rot/2) | sin(rot/2)]; within each head the first
// rot dims rotate, in halves (neox) or in interleaved pairs (GPT-J).
Result rotary(const eg::AttrList& a, const Inputs& in) {
  auto xs = tensors(in, 3);
  if (!xs || a.size() != 2 || a[0].kind != eg::Attr::Kind::Int) return std::nullopt;
  const Tensor &pos = *(*xs)[0], &x = *(*xs)[1], &cache = *(*xs)[2];
  int64_t hs = a[0].i;
  bool neox = a[1].i != 0;
  if (pos.rank() != 1 || x.rank() != 2 || cache.rank() != 2 || hs <= 0 || x.shape[1] % hs) return std::nullopt;
  int64_t T = x.shape[0], W = x.shape[1], rot = cache.shape[1], half = rot / 2;
  if (pos.shape[0] != T || rot > hs || rot % 2) return std::nullopt;
  Tensor out = x;
  for (int64_t t = 0; t < T; ++t) {
    auto p = indexIn(pos.data[t], cache.shape[0]);
    if (!p) return std::nullopt;
    const double* cs = &cache.data[*p * rot];
    for (int64_t h = 0; h < W / hs; ++h) {
      double* o = &out.data[t * W + h * hs];
      const double* v = &x.data[t * W + h * hs];
      for (int64_t i = 0; i < half; ++i) {
        int64_t i1 = neox ? i : 2 * i, i2 = neox ? i + half : 2 * i + 1;
        o[i1] = v[i1] * cs[i] - v[i2] * cs[half + i];
        o[i2] = v[i2] * cs[i] + v[i1] * cs[half + i];
      }
    }
  }
  return Value::of(std::move(out));
}

// attention[layer](q [T, Hq, D], k [T, Hkv, D], v): causal softmax(q k^T / sqrt(D)) v
// per head, query head h reading kv head h / (Hq / Hkv) (grouped-query attention).
Result attention(const eg::AttrList& a, const Inputs& in) {
  auto xs = tensors(in, 3);
  if (!xs || a.size() != 1) return std::nullopt;
  const Tensor &q = *(*xs)[0], &k = *(*xs)[1], &v = *(*xs)[2];
  if (q.rank() != 3 || k.rank() != 3 || k.shape != v.shape) return std::nullopt;
  int64_t T = q.shape[0], Hq = q.shape[1], D = q.shape[2], Hkv = k.shape[1];
  if (k.shape[0] != T || k.shape[2] != D || Hkv <= 0 || Hq % Hkv) return std::nullopt;
  Tensor out = Tensor::filled(q.shape, 0);
  std::vector<double> w(static_cast<size_t>(T));
  for (int64_t h = 0; h < Hq; ++h) {
    int64_t kh = h / (Hq / Hkv);
    for (int64_t i = 0; i < T; ++i) {
      double mx = -INFINITY;
      for (int64_t j = 0; j <= i; ++j) {
        double s = 0;
        for (int64_t d = 0; d < D; ++d) s += q.data[(i * Hq + h) * D + d] * k.data[(j * Hkv + kh) * D + d];
        w[j] = s / std::sqrt(static_cast<double>(D));
        mx = std::max(mx, w[j]);
      }
      double z = 0;
      for (int64_t j = 0; j <= i; ++j) z += (w[j] = std::exp(w[j] - mx));
      for (int64_t j = 0; j <= i; ++j)
        for (int64_t d = 0; d < D; ++d) out.data[(i * Hq + h) * D + d] += w[j] / z * v.data[(j * Hkv + kh) * D + d];
    }
  }
  return Value::of(std::move(out));
}

}  // namespace tangle::interp::detail

namespace tangle::interp::kernels {

namespace {
// A kernel that takes no attributes.
Result plain(Result (*f)(const Inputs&), const eg::AttrList& a, const Inputs& in) {
  return a.empty() ? f(in) : std::nullopt;
}
template <class Cmp>
Result comparison(const eg::AttrList& a, const Inputs& in, Cmp cmp) {
  return a.empty() ? detail::compare(in, [cmp](double u, double v) { return cmp(u, v) ? 1.0 : 0.0; }) : std::nullopt;
}
}  // namespace

Result dropout(const eg::AttrList& a, const Inputs& in) { return detail::dropout(a, in); }
Result where(const eg::AttrList& a, const Inputs& in) { return plain(detail::where, a, in); }
Result lt(const eg::AttrList& a, const Inputs& in) { return comparison(a, in, [](double u, double v) { return u < v; }); }
Result le(const eg::AttrList& a, const Inputs& in) { return comparison(a, in, [](double u, double v) { return u <= v; }); }
Result gt(const eg::AttrList& a, const Inputs& in) { return comparison(a, in, [](double u, double v) { return u > v; }); }
Result ge(const eg::AttrList& a, const Inputs& in) { return comparison(a, in, [](double u, double v) { return u >= v; }); }
Result eq(const eg::AttrList& a, const Inputs& in) { return comparison(a, in, [](double u, double v) { return u == v; }); }
Result ne(const eg::AttrList& a, const Inputs& in) { return comparison(a, in, [](double u, double v) { return u != v; }); }
Result logicalOr(const eg::AttrList& a, const Inputs& in) {
  return comparison(a, in, [](double u, double v) { return u != 0 || v != 0; });
}
Result logicalAnd(const eg::AttrList& a, const Inputs& in) {
  return comparison(a, in, [](double u, double v) { return u != 0 && v != 0; });
}
Result indexRows(const eg::AttrList& a, const Inputs& in) { return plain(detail::indexRows, a, in); }
Result gatherRows(const eg::AttrList& a, const Inputs& in) { return plain(detail::gatherRows, a, in); }
Result maxDim(const eg::AttrList& a, const Inputs& in) { return detail::maxDim(a, in); }
Result oneHot(const eg::AttrList& a, const Inputs& in) { return detail::oneHot(a, in); }
Result geluBackward(const eg::AttrList& a, const Inputs& in) { return detail::geluBackward(a, in); }
Result rmsNorm(const eg::AttrList& a, const Inputs& in) { return detail::rmsNorm(a, in); }
Result rotary(const eg::AttrList& a, const Inputs& in) { return detail::rotary(a, in); }
Result attention(const eg::AttrList& a, const Inputs& in) { return detail::attention(a, in); }
Result apexLayerNormBwd(const eg::AttrList& a, const Inputs& in) { return detail::layerNormBwd(a, in); }

}  // namespace tangle::interp::kernels
