// Value agreement shared by the localizer and its rank-tie rule: two values
// agree when equal, both NaN, or within an absolute tolerance; a tensor's
// tolerance is scaled by its largest finite magnitude.
#pragma once

#include <algorithm>
#include <cmath>

#include "interp/tensor.h"

namespace tangle::replay {

inline double scaleOf(const interp::Tensor& t) {
  double m = 0;
  for (double x : t.data)
    if (std::isfinite(x)) m = std::max(m, std::abs(x));
  return m;
}

inline bool agrees(double a, double b, double tol) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return a == b || std::abs(a - b) <= tol;
}

}  // namespace tangle::replay
