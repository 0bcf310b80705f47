// Lowering: from imported graphs to the form inference works on.
//
// The spec graph and the N rank graphs of the implementation become two
// LGraphs whose tensors are named "S.<node>" and "D<r>.<node>". Each defined
// tensor carries its canonical definition (a small term over other tensors of
// the same LGraph). Collectives are lowered to cross-rank expressions:
//   all_reduce(x, 'sum')        -> sum(D_q.x  for q in group)
//   all_gather_into_tensor(x)   -> concat[0](D_q.x for q in group)
//   reduce_scatter_tensor(x)    -> slice[0, i*c, (i+1)*c, 1](sum(D_q.x ...)), i = position of r in group
//   broadcast(x, src)           -> D_src.x
//   all_to_all_single(x, ...)   -> concat[0](slice[0, ...](D_q.x) for q in group)  (all_to_all.h)
//   wait_tensor(x)              -> x
// The k-th collective of a group on one rank is matched with the k-th of the
// same group on every other member rank (program order), as NCCL requires.
// Identity ops (clone, wait_tensor, ...) become aliases and are resolved, so
// a tensor and its aliases share one leaf.
#pragma once

#include <functional>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "egraph/egraph.h"
#include "graph/graph.h"
#include "lower/canon.h"
#include "relation/relation.h"
#include "sym/context.h"

namespace tangle {

struct LNode {
  std::string name;        // "S.mm", "D1.wait_tensor"
  eg::Symbol symbol = 0;   // `name`, interned
  int graph = 0;           // index into LGraph::graphs (the rank for the impl; 0 for the spec)
  Owner owner;             // the spec, or the implementation rank
  NodeId origin = -1;      // node in that graph
  bool isInput = false;    // placeholder, get_attr, or a declared cut point: no definition
  int aliasOf = -1;        // identity op: same value as that LNode (resolved to the root)
  // Definition: a term whose Operand refs are LNode indices (not graph NodeIds).
  CanonTerm def;
  std::vector<int> operands;  // LNode indices read by def (deduplicated, alias-resolved)
  eg::ClassData data;         // type(s) of the value; tuple for tuple-valued nodes
  // Name of the e-graph leaf of this value (roots only): the name of an alias
  // that the graph returns if there is one (wait_tensor rather than all_reduce),
  // else `name`.
  std::string_view leafName;  // the interned symbol's text (eg::symbolName: valid forever)
  // The interned attributes of that leaf (ops::tensorAttrs(leafName, owner)),
  // set with leafName: adding a leaf is then a hash lookup, not a string intern.
  eg::AttrsId leafAttrs = eg::kNoAttrs;
  bool isOutput = false;      // the value (or an alias of it) is returned by its graph
  bool tuple() const { return data.tuple; }
};

// AttrsId -> lowered node, for leaf attributes: AttrsIds are dense
// (interned in order), so an array indexed by them, -1 where none. The first
// node set for an id stays (as unordered_map::emplace).
class LeafIndex {
 public:
  void emplace(eg::AttrsId a, int node) {
    if (a >= nodes_.size()) nodes_.resize(static_cast<size_t>(a) + 1, -1);
    if (nodes_[a] < 0) nodes_[a] = node;
  }
  const int* find(eg::AttrsId a) const { return a < nodes_.size() && nodes_[a] >= 0 ? &nodes_[a] : nullptr; }

 private:
  std::vector<int> nodes_;
};

// An interned id (a Symbol, an AttrsId) -> LNode index. The first node given
// an id keeps it. Ids are handed out in order, so a graph's node names are
// almost one dense range of ids: an array over that range holds them (a hash
// table scattered 415k names at 256 ranks, a cache miss per insert), and the
// few ids far from it (a name interned long before) sit in a hash map.
class IdIndex {
 public:
  void reserve(size_t n) { reserved_ = n; }
  bool emplace(uint32_t id, int node);  // false (and nothing changes) when `id` is there
  std::optional<int> find(uint32_t id) const;
  size_t size() const { return size_; }

 private:
  const int* inRange(uint32_t id) const {
    return id >= base_ && id - base_ < dense_.size() ? &dense_[id - base_] : nullptr;
  }
  uint32_t base_ = 0;
  std::vector<int> dense_;                 // id - base_ -> node, -1: none
  std::unordered_map<uint32_t, int> far_;  // ids outside the range when they came
  size_t size_ = 0, reserved_ = 0;
};

struct LGraph {
  std::vector<const Graph*> graphs;  // spec: 1; impl: one per rank
  std::vector<LNode> nodes;
  IdIndex byName;  // node and tag names (interned)
  // Each node's leafAttrs -> the node its leaf names (resolved), as
  // find(leafName) would give: e-graph leaves are resolved without hashing a string.
  LeafIndex byLeafAttrs;
  std::vector<std::vector<int>> users;  // LNode -> LNodes whose operands include it

  std::optional<int> find(const std::string& name) const;
  std::optional<int> find(eg::Symbol name) const { return byName.find(name); }
  int resolve(int id) const { return nodes[id].aliasOf >= 0 ? nodes[id].aliasOf : id; }
  const LNode& node(int id) const { return nodes[id]; }
  // Source location and "# File:" comment of a node, for reports.
  const Node& origin(int id) const { return graphs[nodes[id].graph]->node(nodes[id].origin); }
};

struct LowerOptions {
  std::map<std::string, std::vector<int>> groups;  // group name -> ranks (default: all ranks)
  std::vector<std::string> cutSpec;                // spec tensors treated as inputs
  std::vector<std::pair<int, std::string>> cutImpl;  // (rank, tensor) treated as inputs
  bool fold = true;  // implementation: rearrangement folding (fold_rearrange.h); `option fold = 0` turns it off
  size_t jobs = 1;   // threads for the ranks' definitions (--jobs)
};

// `symbols` learns the facts lowering finds: the inputs of one collective
// have equal sizes on every member rank.
LGraph lowerSpec(const Graph& spec, const LowerOptions& opts, sym::Context& symbols);
LGraph lowerImpl(const std::vector<Graph>& ranks, const LowerOptions& opts, sym::Context& symbols);

// Each node's operands (alias-resolved, deduplicated) from its definition, and
// the users lists from them, after definitions changed.
void reindexOperands(LGraph& lg);

// Checks every definition against the graph's annotations: a node whose
// operator, applied to its operands' annotated shapes, gives another shape
// than the node is annotated with is an InputError at its line. (dtypes are not
// compared: dtype promotion is modelled loosely.) Symbolic sizes are compared
// under `symbols`.
void checkAnnotatedShapes(const LGraph& lg, const sym::Context& symbols);

// Rewrites every symbolic size of the LGraph (types and the size attributes of
// slice/reshape/expand) into its normal form under `symbols`, once the
// facts of the check are known.
void canonicalizeSymbols(LGraph& lg, const sym::Context& symbols);

// Adds the leaf of an LGraph tensor (alias-resolved) to the e-graph, with its type.
eg::Id addLeaf(eg::EGraph& g, const LGraph& lg, int id);
// Adds `def` of node `id` over the leaves of its operands; returns its root class.
// Returns nullopt when the definition is ill-typed for the e-graph's inference.
std::optional<eg::Id> addDefinition(eg::EGraph& g, const LGraph& lg, int id);
// The same over given classes: operand k of the definition (an LGraph node) is operandClass(k).
std::optional<eg::Id> addDefinitionOver(eg::EGraph& g, const LGraph& lg, int id,
                                        const std::function<eg::Id(int operand)>& operandClass);

// Translates a relation-language expression (after expand) into an e-graph
// term over leaves of `spec`/`impl` tensors. Throws InputError (file:line,
// tensor) for unknown tensors or ill-typed expressions (shape mismatch).
eg::Id addRelExpr(eg::EGraph& g, const RelExpr& e, const LGraph& spec, const LGraph& impl);

}  // namespace tangle
