// Canonical forms of the ATen calls of optimizer steps and of gradients taken
// with torch.func (canon_optim.cpp).
#pragma once

#include <string_view>

#include "lower/canon.h"

namespace tangle {

// Fills `out` and returns true when the call has a canonical form here.
bool canonicalizeOptimOp(const Graph& g, NodeId id, std::string_view base, std::string_view overload, CanonTerm& out);

}  // namespace tangle
