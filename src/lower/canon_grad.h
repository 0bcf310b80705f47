// Canonicalization of the ATen calls of training (backward) graphs (canon_grad.cpp).
#pragma once

#include <optional>
#include <string_view>

#include "lower/canon.h"

namespace tangle {

// Fills `out` and returns true when the call has a canonical form here.
bool canonicalizeGradOp(const Graph& g, NodeId id, std::string_view base, std::string_view overload, CanonTerm& out);

// getitem[k] of a tuple-valued call handled here (nll_loss_forward: loss, total weight;
// native_layer_norm_backward: grad input, weight, bias).
std::optional<CanonTerm> canonicalizeGradTuple(const Graph& g, NodeId tuple, int64_t k);

}  // namespace tangle
