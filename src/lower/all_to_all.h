// all_to_all_single(x, output_split_sizes, input_split_sizes, group): rank r
// sends rows [off_r(q), off_r(q) + in_r[q]) of its x (dim 0) to member q and
// receives the blocks of every member in member order, so on member q
//   out_q = concat[0](slice[0, off_s(q), off_s(q) + in_s[q]](x_s) for s in group)
// Uneven splits are exact: each block is the slice the sender names. A
// rank's output split for source s must equal s's input split for it.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/graph.h"

namespace tangle {

struct AllToAllBlock {
  int source;     // position of the sending member in the group
  int64_t start;  // rows of the sender's input (dim 0)
  int64_t end;
};

// The blocks member `pos` receives, in order (empty blocks left out).
// nodes[i] is the collective on member i; dim0[i] the size of its input's
// dim 0. Malformed or inconsistent split sizes are an InputError naming the
// node (data-dependent split sizes are refused: they must be constants).
// outDim0 is dim 0 of member pos's output (-1 if unknown).
std::vector<AllToAllBlock> allToAllBlocks(const std::vector<const Node*>& nodes, const std::vector<int64_t>& dim0,
                                          int pos, int64_t outDim0);

}  // namespace tangle
