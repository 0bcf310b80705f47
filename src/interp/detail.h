// Internal to src/interp: index and broadcasting helpers of the kernels.
#pragma once

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
// f applied elementwise to x and y broadcast together; nullopt when they do not broadcast.
std::optional<Tensor> zipBroadcast(const Tensor& x, const Tensor& y, const std::function<double(double, double)>& f);

}  // namespace tangle::interp::detail
