// Canonicalization of XLA HLO instructions (canon_hlo.cpp).
#pragma once

#include "lower/canon.h"

namespace tangle {

// Fills `out` and returns true when HLO node `id` ("hlo.<opcode>") has a
// canonical form; false leaves it to the opaque fallback. Throws InputError
// for malformed attributes.
bool canonicalizeHloOp(const Graph& g, NodeId id, CanonTerm& out);

}  // namespace tangle
