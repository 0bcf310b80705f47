// Internal to src/interp: index and broadcasting helpers of the kernels.
#pragma once

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "egraph/attrs.h"
#include "interp/interp.h"

namespace tangle::interp::detail {


// The tensors of `in` when there are exactly `n` (n < 0: at least one) and all are tensors.
std::optional<std::vector<const Tensor*>> tensors(const Inputs& in, int n);

// Offsets of the elements of a strided view of `shape` (row-major order of the view).
std::vector<int64_t> viewOffsets(const Shape& shape, const std::vector<int64_t>& strides, int64_t base);
// Strides that read a tensor of shape `from` broadcast (aligned right) to `to`;
// nullopt when `from` does not broadcast to `to`.
std::optional<std::vector<int64_t>> broadcastStrides(const Shape& from, const Shape& to);
// Numpy broadcast of two shapes.
std::optional<Shape> broadcast(const Shape& a, const Shape& b);
// Calls f(i, offsets) for every element i (row-major) of `shape`, where offsets[k] is the
// element's offset in operand k, read with strides[k] (one per dim of `shape`) from base[k].
// The same order as viewOffsets, without materializing the offsets: the innermost dim is a
// plain loop, the outer dims an odometer.
template <size_t N, class F>
void stridedLoop(const Shape& shape, const std::array<std::vector<int64_t>, N>& strides,
                 const std::array<int64_t, N>& base, F&& f) {
  int64_t n = numelOf(shape);
  if (n <= 0) return;
  std::array<int64_t, N> off = base;
  if (shape.empty()) {
    f(int64_t(0), off);
    return;
  }
  size_t last = shape.size() - 1;
  int64_t inner = shape[last];
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t i = 0; i < n;) {
    std::array<int64_t, N> o = off;
    for (int64_t j = 0; j < inner; ++j, ++i) {
      f(i, o);
      for (size_t k = 0; k < N; ++k) o[k] += strides[k][last];
    }
    for (size_t d = last; d-- > 0;) {  // odometer over the outer dims
      if (++idx[d] < shape[d]) {
        for (size_t k = 0; k < N; ++k) off[k] += strides[k][d];
        break;
      }
      for (size_t k = 0; k < N; ++k) off[k] -= strides[k][d] * (shape[d] - 1);
      idx[d] = 0;
    }
  }
}

// f applied elementwise to x and y broadcast together; nullopt when they do not broadcast.
template <class F>
std::optional<Tensor> zipBroadcast(const Tensor& x, const Tensor& y, F f) {
  Tensor out;
  if (x.shape == y.shape) {  // the common case: no broadcasting
    out.shape = x.shape;
    out.data.resize(x.data.size());
    for (size_t i = 0; i < out.data.size(); ++i) out.data[i] = f(x.data[i], y.data[i]);
    return out;
  }
  auto shape = broadcast(x.shape, y.shape);
  if (!shape) return std::nullopt;
  out.shape = *shape;
  out.data.resize(static_cast<size_t>(numelOf(*shape)));
  std::array<std::vector<int64_t>, 2> st{*broadcastStrides(x.shape, *shape), *broadcastStrides(y.shape, *shape)};
  stridedLoop<2>(*shape, st, {0, 0}, [&](int64_t i, const std::array<int64_t, 2>& o) {
    out.data[static_cast<size_t>(i)] = f(x.data[static_cast<size_t>(o[0])], y.data[static_cast<size_t>(o[1])]);
  });
  return out;
}

}  // namespace tangle::interp::detail
