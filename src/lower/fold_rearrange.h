// Rearrangement folding (implementation side of lowering).
//
// FSDP keeps every parameter as a shard in a flat buffer: a rank flattens its
// shards into one buffer, all-gathers the buffers, views the result as
// [ranks, buffer], slices one parameter's columns and views them back as the
// parameter. The chain only moves elements, yet every step of it is a tensor
// the search explores and the e-graph splits (8 ranks x 4 parameters made a
// 2-layer MLP's e-graphs grow to 37k e-nodes). Folding computes, for a tensor
// defined by rearrangements of rearrangements through a multi-piece concat,
// where each of its elements comes from (run-length, exactly), and when that
// is a concat along dim 0 of pieces of other tensors, redefines it as that
// concat. The chain's intermediate tensors, read by nothing live afterwards,
// leave the users lists, so the search never reaches them.
//
// Second, a rearrangement that ends a chain is lifted over the elementwise ops
// below it (FSDP's gradient shard: a view of this rank's slice of a sum over
// ranks of packed buffers, scaled and cast): when its map reaches the same rows
// of same-shaped tensors through every operand, it is redefined as those rows
// of the elementwise ops over the whole tensors, accepted only when the normal
// forms of the old and new definitions (rearrangements pushed down to
// tensors) are equal.
#pragma once

#include "lower/lower.h"

namespace tangle {

// Rewrites definitions in place and re-indexes operands and users. Returns the
// number of tensors redefined.
int foldRearrangements(LGraph& lg);

}  // namespace tangle
