// Point-to-point communication between rank graphs (pipeline stages).
//
// A traced `c10d.send([x], group, dst, tag)` on rank s and
// `c10d.recv_([buf], group, src, tag)` on rank d are matched like MPI
// messages: on each channel (s, d, tag) the k-th tensor rank s sends is the
// k-th tensor rank d receives (messages between two ranks do not overtake).
// The peer is a global rank (the capture translates group ranks). After
// matching, every read of the receive buffer written by the k-th receive is
// the sender's tensor: lowering makes those nodes aliases of it, so a stage's
// inputs are the previous stage's outputs in one cross-rank program. A send
// or receive without its partner, or with another shape, is an InputError
// (the real program would hang or fail).
#pragma once

#include <map>
#include <set>
#include <utility>
#include <vector>

#include "graph/graph.h"

namespace tangle {

bool isSendOp(const std::string& op);

struct P2PLinks {
  // [graph] node -> (graph, node) whose value it holds: received data, and
  // repeated `self.<attr>` reads of one (never written) attribute.
  std::vector<std::map<NodeId, std::pair<int, NodeId>>> alias;
  // [graph] send/recv_ nodes: effects without a tensor value.
  std::vector<std::set<NodeId>> effects;
};

// graphs[i] is rank i (or the spec alone). Graphs must have passed
// functionalizeInplace (reads of overwritten buffers are refused there).
P2PLinks linkPointToPoint(const std::vector<const Graph*>& graphs);

}  // namespace tangle
