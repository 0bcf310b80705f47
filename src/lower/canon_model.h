// Canonicalization of indexing/masking/comparison ATen calls (canon_model.cpp).
#pragma once

#include <string_view>

#include "lower/canon.h"

namespace tangle {

// Fills `out` and returns true when the call has a canonical form here.
bool canonicalizeModelOp(const Graph& g, NodeId id, std::string_view base, std::string_view overload, CanonTerm& out);

}  // namespace tangle
