// Storage sharing inside one graph, for passes that reason about mutation.
//
// A make_fx trace of eager code (torch.distributed.pipelining's schedules)
// keeps in-place ops (grad accumulation `add_`, `div_`) and c10d's in-place
// `recv_`. A value is only well defined at a node if no write to its storage
// happened between its definition and that read; these helpers find which
// nodes share storage (views, repeated `self.<attr>` reads) and where a
// node's data is actually read (through chains of views).
#pragma once

#include <string>
#include <vector>

#include "graph/graph.h"

namespace tangle {

// True for ops whose result shares its input's storage (views, detach, ...).
bool isViewLikeOp(const std::string& op);

// The in-place ops that inplace.cpp turns into their functional form
// (aten.add_/sub_/mul_/div_/copy_): their result shares the first operand's storage.
bool isFunctionalizedInplace(const std::string& op);

// c10d's in-place receive (`c10d.recv_([buf], group, src, tag)`) and the
// buffers it writes (defined in inplace.cpp).
bool isRecvOp(const std::string& op);
// The tensors of a send's or recv_'s first argument (a tensor or a list of them):
// what it sends, or the buffers it writes.
std::vector<NodeId> firstArgTensors(const Node& n);

// The storage key of a node: "attr:<target>" for a get_attr, else "node:<id>"
// after following view-like and in-place ops back to their base.
std::string storageKey(const Graph& g, NodeId id);

// Positions (node ids; g.size() for the graph's output) where the data of
// `id` is read: its non-view readers, found through chains of view-like
// readers. Readers in `skip` (writers such as recv_) are ignored.
std::vector<NodeId> readPositions(const Graph& g, NodeId id, const std::vector<std::vector<NodeId>>& users,
                                  const std::vector<NodeId>& skip = {});

// users[id]: nodes that read node id, in graph order.
std::vector<std::vector<NodeId>> graphUsers(const Graph& g);

}  // namespace tangle
