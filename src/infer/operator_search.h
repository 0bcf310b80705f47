// Internal to src/infer: the search for one spec operator's relations.
//
// For each spec operator (Listing 1's loop body) the inference runs, over one
// OperatorSearch:
//   seed        (seed.cpp)     its e-graph: the inputs' classes merged with
//                              their known relations, and the operator's
//                              expression over them (the root);
//   saturate    (saturate.cpp) the lemmas, under the search limits;
//   explore     (explore.cpp)  T_rel (Listing 3): implementation nodes whose
//                              inputs are all related join the e-graph, and
//                              what they relate grows T_rel, saturating again;
//   detours     (detours.cpp)  when nothing clean was found: implementation
//                              nodes of the same operator whose inputs are not
//                              (yet) related, with the definitions behind them;
//   conclude    (conclude.cpp) the clean relations of the output, or the
//                              Failure; graph outputs over implementation
//                              outputs only;
//   deferred    (deferred.cpp) an intermediate with no clean relation carried
//                              as a non-clean expression, and the blame of the
//                              chain's origin when it never becomes clean.
#pragma once

#include <optional>
#include <unordered_set>
#include <vector>

#include "infer/infer_state.h"
#include "ops/ops.h"

namespace tangle {

struct OperatorSearch {
  // symbols: the check's facts about symbolic sizes (null: none).
  explicit OperatorSearch(const SpecOp& o, const sym::Context* symbols = nullptr)
      : op(o), start(Clock::now()), cpuStart(threadCpuSeconds()), g(ops::inferData, symbols) {
    g.setIdentityFn(ops::identityChild);
  }

  // The thread's CPU seconds spent on this search: operator_seconds bounds it.
  double cpuSpent() const { return threadCpuSeconds() - cpuStart; }

  const SpecOp& op;
  Clock::time_point start;
  double cpuStart;
  eg::EGraph g;
  eg::Id root = 0;                  // the operator's expression (valid once seeded)
  std::optional<size_t> saturatedAt;  // the last saturation's eg::RunReport::saturatedAt
  std::unordered_set<int> inlined;  // spec definitions already added to g
  std::vector<int> frontier;        // newly related impl nodes whose users are not looked at yet
  std::vector<int> related;         // T_rel, in the order it grew
  std::vector<std::pair<int, int>> mergedEqual;  // implEqual facts seed merged into g (a, b)
  std::vector<int> explored;        // impl nodes added to g, in order (nearbyImpl on failure)
  std::vector<eg::Term> clean;      // clean expressions of root, current after every saturation
  bool limitHit = false;            // a search limit stopped a saturation or the exploration
  bool detours = false;             // the detour phase has started (detours.cpp)
};

// seed.cpp: builds the e-graph; a Failure when the operator's expression is ill-typed.
std::optional<Failure> seed(InferState& st, OperatorSearch& s);
// The facts about implementation tensors seed adds once the inputs are in: declared constants,
// implEqual partners of relTensors (appended to it, recorded in s.mergedEqual), zero regions.
void seedImplFacts(const InferState& st, OperatorSearch& s, std::vector<int>& relTensors);

// saturate.cpp: runs the lemmas under the limits left, then refreshes s.clean.
void saturate(const InferState& st, OperatorSearch& s, InferStats& stats);

// explore.cpp: the T_rel exploration (Listing 3), saturating after each batch.
void exploreRelated(InferState& st, OperatorSearch& s, InferStats& stats);
bool inRel(const InferState& st, int d);
void addToRel(InferState& st, OperatorSearch& s, int d);
std::vector<int> nextBatch(InferState& st, OperatorSearch& s, bool withSources);

// detours.cpp
eg::Symbol detourOperator(const InferState& st, const SpecOp& op);
bool isDetour(const InferState& st, int u, eg::Symbol detourOp);
void addDetour(InferState& st, int u, std::vector<int>& batch);
std::vector<int> startDetours(InferState& st, OperatorSearch& s);

// deferred.cpp
struct DeferredChain {
  size_t depth = 0;  // longest carried chain among the operator's inputs (0: none)
  int origin = -1;   // the earliest operator starting such a chain (else op.reported)
  // every carried input is a scaled clean relation, div(clean, k) (deferred.cpp): the ranks hold
  // the spec's values up to a constant, so its relatives are found as for clean inputs
  bool scaled = false;
};
DeferredChain deferredChain(const InferState& st, const SpecOp& op);
// Spec tensor s is carried as scaled clean relations only, div(clean, k): exact, so its spec
// definition need not be inlined where it is read.
bool carriedScaled(const InferState& st, int s);
bool carryDeferred(InferState& st, OperatorSearch& s, const DeferredChain& chain);
// The class holds div(c, k): c with a clean expression, k a nonzero scalar constant.
bool hasScaledClean(const eg::EGraph& g, eg::Id root);
// An operator (not a graph output) with no clean expression yet but a scaled clean one: it will be
// carried as that, so the search looks no further than for an expressed operator.
bool scaledOnly(const InferState& st, const OperatorSearch& s);
void blameChainOrigin(const InferState& st, const SpecOp& op, const DeferredChain& chain, Failure& f);

// blocks.cpp: the operator searched on one block of many alike (data-parallel replicas,
// microbatches) and assembled; true when that concluded it (its relations are in st.rels), false
// when it does not apply or gave up (search it whole).
// With `reuse`, its footprint is recorded there. `applied` receives, in order, the implEqual
// pairs it applied to st (also when it gave up): a search ahead's mirror replays them.
class OperatorReuse;
bool searchByBlocks(InferState& st, const SpecOp& op, InferStats& stats, std::unordered_set<int>& inlined,
                    OperatorReuse* reuse, std::vector<std::pair<int, int>>& applied);

// conclude.cpp: stats, then R (or R_o) for the operator, or its Failure.
std::optional<Failure> conclude(InferState& st, OperatorSearch& s, InferStats& stats);
// Whether the operator's class has a clean expression over the implementation's
// graph outputs (what a graph output needs under strict outputs, R_o).
bool hasImplOutputExpression(const InferState& st, const OperatorSearch& s);

}  // namespace tangle
