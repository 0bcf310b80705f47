// In-place ops in eagerly traced graphs (make_fx of a training step).
//
// `add_(a, b)` computes a + b and stores it in a's storage. Its result is the
// functional `add(a, b)` as long as nobody reads the old value of that
// storage afterwards (through `a`, a view of it, or another `self.<attr>`
// read). This pass checks that for every write (the in-place arithmetic of
// storage.h, and c10d's recv_ into a `self.<attr>` buffer) and rewrites the
// arithmetic to its functional op; a read of overwritten data is an
// InputError at the reading node.
#pragma once

#include "graph/graph.h"

namespace tangle {

void functionalizeInplace(Graph& g);

}  // namespace tangle
