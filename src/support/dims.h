// Dim-index helpers: pure functions over ranks and dim lists, shared by type
// inference (src/ops), the reference kernels (src/interp) and lemma guards.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace tangle {

// Normalizes a possibly negative dim against a rank; nullopt when out of range.
std::optional<int64_t> normDim(int64_t d, int64_t rank);

// Dims reduced by a reduction with attribute dims `dims` on a tensor of rank
// `rank`: sorted, non-negative, unique; an empty list means all dims.
// nullopt when a dim is out of range.
std::optional<std::vector<int64_t>> reducedDims(const std::vector<int64_t>& dims, int64_t rank);

// Permutation of a transpose[d0, d1] on a tensor of `rank`.
std::vector<int64_t> transposePerm(int64_t d0, int64_t d1, int64_t rank);

}  // namespace tangle
