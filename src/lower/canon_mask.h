// Canonical forms of HF's attention-mask construction ops (canon_mask.cpp).
#pragma once

#include <string_view>

#include "lower/canon.h"

namespace tangle {

// Fills `out` and returns true for arange, cumsum, new_ones/new_zeros and index.Tensor forms with reference kernels.
bool canonicalizeMaskOp(const Graph& g, NodeId id, std::string_view base, std::string_view overload, CanonTerm& out);

}  // namespace tangle
