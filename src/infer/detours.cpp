// Detours (beyond Listing 3). When the T_rel exploration ends with no clean
// expression of the output, it is resumed once from every related tensor,
// now also admitting an implementation node that computes the same
// (non-clean) operator as the spec, with some of its inputs unrelated, along
// with the definitions behind those inputs, a few levels deep: the
// implementation may reach the same value by a detour the spec does not take
// (e.g. writing rotated heads back into a fused buffer and splitting it
// again). This affects completeness only: what is added is still the
// implementation's own definitions.
#include "infer/operator_search.h"

namespace tangle {

namespace {

constexpr int kBackfillDepth = 6;      // definitions followed behind a detour's input
constexpr size_t kBackfillBudget = 32;  // definitions added per detour node

// Adds the definitions behind an unrelated implementation tensor to `batch`.
void backfill(InferState& st, int d, int depth, size_t& budget, std::vector<int>& batch) {
  d = st.impl.resolve(d);
  if (depth == 0 || budget == 0 || inRel(st, d) || st.marks.isExplored(d)) return;
  const LNode& n = st.impl.nodes[d];
  if (n.isInput || n.def.nodes.empty()) return;
  st.marks.markExplored(d);
  --budget;
  for (int o : n.operands) backfill(st, o, depth - 1, budget, batch);
  batch.push_back(d);  // after its operands: their types must be known when it is added
}

}  // namespace

// The spec operator's root op when it is not clean (a detour can only
// repeat a computation), else 0: no detours.
eg::Symbol detourOperator(const InferState& st, const SpecOp& op) {
  const auto& def = st.spec.nodes[op.node].def.nodes;
  eg::Symbol specRoot = def.empty() ? 0 : def.back().op;
  const ops::OpDef* info = specRoot ? ops::find(specRoot) : nullptr;
  return info && !info->clean ? specRoot : 0;
}

// Implementation node `u` computes the detour operator.
bool isDetour(const InferState& st, int u, eg::Symbol detourOp) {
  const auto& def = st.impl.nodes[u].def.nodes;
  return !def.empty() && def.back().op == detourOp;
}

// Adds detour node `u` to `batch`, after the definitions behind its inputs.
void addDetour(InferState& st, int u, std::vector<int>& batch) {
  st.marks.markExplored(u);
  size_t budget = kBackfillBudget;
  for (int o : st.impl.nodes[u].operands) backfill(st, o, kBackfillDepth, budget, batch);
  batch.push_back(u);
}

// Nothing clean yet: look once more, from every related tensor, allowing detours.
std::vector<int> startDetours(InferState& st, OperatorSearch& s) {
  s.detours = true;
  s.frontier = s.related;
  return nextBatch(st, s, false);
}

}  // namespace tangle
