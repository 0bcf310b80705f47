#include "support/dims.h"

#include <algorithm>

namespace tangle {

std::optional<int64_t> normDim(int64_t d, int64_t rank) {
  if (d < 0) d += rank;
  if (d < 0 || d >= rank) return std::nullopt;
  return d;
}

std::optional<std::vector<int64_t>> reducedDims(const std::vector<int64_t>& dims, int64_t rank) {
  std::vector<int64_t> out;
  if (dims.empty()) {
    for (int64_t i = 0; i < rank; ++i) out.push_back(i);
    return out;
  }
  for (int64_t d : dims) {
    auto n = normDim(d, rank);
    if (!n) return std::nullopt;
    out.push_back(*n);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<int64_t> transposePerm(int64_t d0, int64_t d1, int64_t rank) {
  std::vector<int64_t> p(static_cast<size_t>(rank));
  for (int64_t i = 0; i < rank; ++i) p[i] = i;
  if (d0 >= 0 && d1 >= 0 && d0 < rank && d1 < rank) std::swap(p[d0], p[d1]);
  return p;
}

}  // namespace tangle
