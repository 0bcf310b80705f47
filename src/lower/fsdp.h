// FSDP2 (torch.distributed.fsdp.fully_shard) buffer ops in make_fx traces.
//
// FSDP2 moves parameters and gradients through preallocated flat buffers:
//   fsdp.all_gather_copy_in(shards, buf, sizes, n, rank) -> (buf[rank*n:(rank+1)*n] = flat shards, buf)
//   c10d._allgather_base_(out, in, group, ...)            out = all-gather of `in`
//   fsdp.split_with_sizes_copy(x, sizes, dim, out=[views]) each view = its piece of x along dim
//   fsdp.chunk_cat(grads, 0, N, out=view)                 row i = chunk i of every grad, padded, flat
//   c10d._reduce_scatter_base_(out, in, group, op, ...)   out = reduce-scatter of `in`
//   aten.cat.out(chunks, d, out=view)                     Shard(d != 0) copy-out: out = cat along d
//   aten.empty_like(buf)                                   a fresh temporary (buf's value is not read)
//   aten._foreach_copy_(pieces, shards)                    mixed precision: each piece = its shard, cast
// and parameters are views of the buffers (tangle.fsdp writes them as as_strided reads of the
// buffer). This pass rewrites the graph into functional ops (view, slice, cat, constant_pad_nd,
// _c10d_functional collectives): a write sets the buffer's current value, and a later read of the
// buffer (or of a view made after the write) reads that value. A read of a buffer view made before
// a later write (stale), of a buffer never written, or a write to part of a buffer is an
// InputError at the node. A write into a buffer of another float dtype is a cast of the value
// (mixed precision: exact over the reals, see docs/parallelisms.md, "Mixed precision"); a conversion to or from a non-float dtype
// is an InputError.
// The c10d ops must name their group (and reduce op) with strings.
#pragma once

#include "graph/graph.h"

namespace tangle {

// True when the graph has any op this pass rewrites.
bool hasFsdpBufferOps(const Graph& g);

// Rewrites g in place (see above); a graph without FSDP ops is left as it is.
void lowerFsdpBuffers(Graph& g);

}  // namespace tangle
