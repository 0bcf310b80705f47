// Internal to src/infer: what the inference knows across spec operators.
//
// The paper's relation inference (ASPLOS'26 §4, Listing 1) walks the spec
// graph G_s in topological order and grows R, the relations of spec tensors
// over implementation tensors. InferState holds the problem, the clean input
// relation it starts from, and R as found so far; the per-operator search is
// in operator_search.h.
#pragma once

#include <algorithm>
#include <chrono>
#include <span>
#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "infer/infer.h"
#include "support/stamp_marks.h"

namespace tangle {

using Clock = std::chrono::steady_clock;
inline double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
// CPU seconds of the calling thread / of the whole process. The search's
// budgets are CPU time, so that a verdict does not turn inconclusive because
// the machine is busy (a 256-rank check got 18% of a core beside builds).
double threadCpuSeconds();
double processCpuSeconds();

// One step of the walk over G_s: the spec tensor whose relation is computed
// and the tensors its expression reads: its operands, except that a getitem
// reads through its (unprocessed) tuple producer's operands.
struct SpecOp {
  int node;           // the tensor whose relation is computed
  int reported;       // the operator named on failure (tuple producer for getitem)
  std::vector<int> reads;
};

// Per implementation node: in T_rel / explored, for the current operator.
// Reused across operators: a new epoch clears every mark at once.
struct ImplMarks {
  std::vector<uint32_t> related, explored;
  uint32_t epoch = 0;

  void nextOperator() { ++epoch; }
  bool isRelated(int d) const { return related[d] == epoch; }
  void markRelated(int d) { related[d] = epoch; }
  bool isExplored(int d) const { return explored[d] == epoch; }
  void markExplored(int d) { explored[d] = epoch; }
};

// What one search read of the walk's mutable state (search_ahead.h): the
// spec tensors whose relations or deferred state it read, and the
// implementation tensors it looked up in implEqual. Null: not recorded.
struct SearchReads {
  std::vector<int> spec, implEqual;
};

// Implementation tensor -> the tensors found equal to it, indexed by node (a
// hash map's lookups were cache misses on every reuse at 256 ranks). A
// tensor with none has an empty list, which find reports as absent.
class ImplEqual {
 public:
  const std::vector<int>* find(int a) const {
    return static_cast<size_t>(a) < lists_.size() && !lists_[static_cast<size_t>(a)].empty() ? &lists_[static_cast<size_t>(a)]
                                                                                             : nullptr;
  }
  std::vector<int>& operator[](int a) {
    if (static_cast<size_t>(a) >= lists_.size()) lists_.resize(static_cast<size_t>(a) + 1);
    return lists_[static_cast<size_t>(a)];
  }

 private:
  std::vector<std::vector<int>> lists_;
};

// This thread's marks over implementation nodes (support/stamp_marks.h).
StampMarks& nodeMarks();

// An implementation node as operator reuse compares it (node_ids.cpp): what
// it reads of the lowered node, in one cache line, ids for its type and
// definition.
struct FlatNode {
  uint32_t def = 0;   // equal for two nodes exactly when their definitions are equal but for which
                      // tensors the operands are (operators, attributes, locals, scalars bitwise)
  uint32_t data = 0;  // equal exactly when their ClassData are
  int32_t graph = 0;
  int32_t aliasOf = -1;
  uint32_t refStart = 0, refCount = 0;    // its operand references in order, alias-resolved
  uint32_t userStart = 0, userCount = 0;  // LGraph::users
  uint32_t operandCount = 0;              // LNode::operands.size()
  bool isInput = false;
  bool specOwned = false;
};
struct FlatNodes {
  std::vector<FlatNode> nodes;
  std::vector<int> refs, users;
  // Per node: a hash of the multiset of its users' root operators with their attributes (the
  // completeness guard of reuse compares these; a collision weakens only that guard).
  std::vector<uint64_t> userOps;
  const FlatNode& operator[](int n) const { return nodes[static_cast<size_t>(n)]; }
  std::span<const int> refsOf(int n) const { return {refs.data() + nodes[static_cast<size_t>(n)].refStart, nodes[static_cast<size_t>(n)].refCount}; }
  std::span<const int> usersOf(int n) const { return {users.data() + nodes[static_cast<size_t>(n)].userStart, nodes[static_cast<size_t>(n)].userCount}; }
};

struct InferState {
  InferState(const Problem& p, const std::vector<eg::Rule>& lemmas, const InferOptions& o);
  void markInputFree();  // implInputFree and implTable, from implConsts as it is now

  const LGraph& spec;
  const LGraph& impl;
  const RelationFile& rel;
  const sym::Context* symbols;  // every e-graph's (null: an empty one each)
  const std::vector<eg::Rule>& lemmas;
  const eg::RuleIndex lemmaIndex;  // the runner's view of lemmas, built once for every saturation
  InferOptions opts;

  // For reuse's comparisons (node_ids.cpp): per spec node an id equal exactly
  // when two nodes' ClassData are, and the implementation's flat records.
  std::vector<uint32_t> specDataId;
  FlatNodes implFlat;

  // The clean input relation (the user's), indexed by spec node.
  std::vector<std::vector<const RelExpr*>> inputRels;
  std::unordered_map<int, double> specConsts, implConsts;
  std::vector<int> implSources;  // impl nodes computed from no tensor (arange, zeros, ...)
  // Per impl node: computed from sources and declared constants only (no
  // graph input), e.g. a backward seed 1/n built as ones_like -> div -> expand.
  // Such a value is the same function of nothing on every run: related to
  // everything, like a source (explore.cpp's inRel). Marked with implTable
  // by markInputFree: in the constructor, and again once the relation's
  // constants are loaded (loadInputRelations).
  std::vector<char> implInputFree;
  // Per impl node: an input-free index table, a source (arange, a constant)
  // taken through casts and rearrangements only (vLLM's float positions
  // arange(n).float()[:, None]). Exploring an operand explores such a table's
  // definition down to its source; other input-free chains (a causal mask's
  // arithmetic) stay leaves there: exploring them too blew HF TP checks up.
  std::vector<char> implTable;
  // `zero` statements: impl input -> the regions of it that hold zero padding.
  std::unordered_map<int, std::vector<const RelExpr*>> implZeros;
  // Impl nodes zero by their definitions over inputs declared zero as a whole
  // (a rank holding padding only): a hint for the exploration (zeros.cpp).
  std::vector<char> implZero;
  std::vector<int> implZeroNodes;  // the computed ones

  // Per spec node: related by evaluation (by_evaluation.cpp); its relations
  // are in rels and, like an input relation, it is not searched.
  std::vector<char> byEvaluation;

  // R: clean relations found per spec node.
  std::vector<std::vector<eg::Term>> rels;
  // Graph outputs: relations over implementation outputs only (R_o).
  std::vector<std::vector<eg::Term>> outRels;
  std::vector<char> isTarget;       // an output of interest
  bool strictOutputs = false;       // no `output` statement: outputs are the graph's
  // Deferred carrying (deferred.cpp): > 0 when carried as a non-clean
  // expression, and the first operator of that chain.
  std::vector<size_t> deferredDepth;
  std::vector<int> deferredOrigin;
  // Implementation tensors found equal in a concluded operator's e-graph
  // (impl_equal.cpp), e.g. one replica's all-reduced sum on two DP x TP ranks.
  ImplEqual implEqual;

  ImplMarks marks;
  // Set only on a look-ahead search's copy of the state (search_ahead.h).
  SearchReads* reads = nullptr;
  void noteSpecRead(int s) const {
    if (reads) reads->spec.push_back(s);
  }
};

// --- node_ids.cpp: flat per-node records for operator reuse ------------------

// Per node of g, an id equal for two nodes exactly when their ClassData are.
std::vector<uint32_t> classDataIds(const LGraph& g);
// Per node of g, FlatNode::def.
std::vector<uint32_t> definitionIds(const LGraph& g);
// Per node of g, FlatNodes::userOps.
std::vector<uint64_t> userOperatorHashes(const LGraph& g);
// The records of g's nodes, with FlatNode::data left 0 (classDataIds fills it: InferState's
// constructor computes those beside the rest).
FlatNodes flatNodes(const LGraph& g, const std::vector<uint32_t>& defIds, std::vector<uint64_t> userOps);

// --- spec_order.cpp: the walk over G_s ------------------------------------

int specNode(const InferState& st, const TensorName& t, const SourceLoc& loc);
int implNode(const InferState& st, const TensorName& t, const SourceLoc& loc);
size_t countOps(const LGraph& g);
void loadInputRelations(InferState& st);
std::vector<int> outputsOfInterest(const InferState& st);
void markTargets(InferState& st, const std::vector<int>& targets);
std::vector<SpecOp> specOrder(const InferState& st, const std::vector<int>& targets);
void collectSpecTensors(const InferState& st, const RelExpr& e, std::vector<int>& out);
// Spec tensors the targets and the expectations read, stopping at tensors given a relation.
std::vector<char> neededTensors(const InferState& st, const std::vector<int>& targets);

// --- by_evaluation.cpp: closed constant tensors related by their values -----

// The closed spec tensors the walk would read from a computation on inputs
// (the frontier of each closed region) get every implementation closed
// tensor of equal dtype and values as a relation (closed.h).
void relateClosedByEvaluation(InferState& st, const std::vector<int>& targets, InferResult& res);

// --- seed.cpp: building e-graphs over what is known ------------------------

eg::Id constNode(eg::EGraph& g, double v);
// A relation file's `const T = v` for node n: cast[dtype](const v) when n is a
// 0-d tensor of a known dtype (as lowering types 0-d constants), else const v.
eg::Id declaredConstNode(eg::EGraph& g, const LNode& n, double v);
// zeros.cpp: impl input d's `zero` regions merged with zeros (when d has any).
void mergeZeroFacts(const InferState& st, eg::EGraph& g, int d);
void markImplZeros(InferState& st);
eg::Id addSpecTensor(const InferState& st, eg::EGraph& g, std::unordered_set<int>& inlined, int s,
                     std::vector<int>& relTensors, int inlineDepth = 0);
eg::Id addTerm(const InferState& st, eg::EGraph& g, const eg::Term& t);
void collectImplTensors(const InferState& st, const RelExpr& e, std::vector<int>& out);
void collectImplTensors(const InferState& st, const eg::Term& t, std::vector<int>& out);

// --- conclude.cpp: reading results out --------------------------------------

std::vector<eg::Term> cleanRelations(const InferState& st, const eg::EGraph& g, eg::Id root);
TensorRelations relationsOf(const InferState& st, int s);
Failure failureFor(const InferState& st, const SpecOp& op, const eg::EGraph& g);

// --- expectations.cpp: after the walk (§4.4) --------------------------------

// impl_equal.cpp: records the impl tensors of one class as equal; merges a named tensor's equals.
void recordImplEqualities(InferState& st, const eg::EGraph& g);
// The pairs recordImplEqualities offers, in its order; applying them appends each absent one.
std::vector<std::pair<int, int>> implEqualPairs(const InferState& st, const eg::EGraph& g);
void applyImplEqualPairs(InferState& st, const std::vector<std::pair<int, int>>& pairs);
// Those of them st does not hold yet (a block's e-graph holds every copy of a weight replicated on
// 64 ranks, merged from implEqual: 4032 pairs known already, per block).
std::vector<std::pair<int, int>> newImplEqualPairs(const InferState& st, const eg::EGraph& g);
// `merged`, if given, receives every pair (a, b) merged: the facts g now holds.
std::vector<int> mergeImplEqualities(const InferState& st, eg::EGraph& g, const std::vector<int>& named,
                                     std::vector<std::pair<int, int>>* merged = nullptr);
// Adds the pairs to implEqual; `added` (if given) receives those it did not hold yet.
void applyImplEqualPairs(InferState& st, const std::vector<std::pair<int, int>>& pairs,
                         std::vector<std::pair<int, int>>* added);
// Removes pairs (those `added` reported): undoing an operator the walk rolled back.
void removeImplEqualPairs(InferState& st, const std::vector<std::pair<int, int>>& pairs);
void checkExpectations(const InferState& st, std::unordered_set<int>& inlined, InferResult& res);
Verdict verdictOf(const InferResult& res);

}  // namespace tangle
