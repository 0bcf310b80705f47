// The walk over the spec graph G_s (Listing 1): the clean input relation it
// starts from, the outputs of interest, and the spec operators they need, in
// topological order.
#include <algorithm>

#include "infer/infer_state.h"
#include "infer/leaf_names.h"
#include "ops/ops.h"
#include "ops/shape.h"

namespace tangle {

int specNode(const InferState& st, const TensorName& t, const SourceLoc& loc) {
  auto id = st.spec.find(t.toString());
  if (!id) throw InputError(loc, "tensor '" + t.toString() + "' does not exist in the spec graph");
  return st.spec.resolve(*id);
}

int implNode(const InferState& st, const TensorName& t, const SourceLoc& loc) {
  auto id = st.impl.find(t.toString());
  if (!id)
    throw InputError(loc, "tensor '" + t.toString() + "' does not exist in rank " + std::to_string(t.rank) +
                              " of the implementation");
  return st.impl.resolve(*id);
}

size_t countOps(const LGraph& g) {
  size_t n = 0;
  for (auto& ln : g.nodes) n += (!ln.isInput && ln.aliasOf < 0) ? 1 : 0;
  return n;
}

// A `zero` region: of an implementation input, indexed by that input.
static void loadZeroRegion(InferState& st, const ZeroRegion& z) {
  const RelExpr* base = &z.region;
  while (base->kind == RelExpr::Kind::Call && !base->args.empty()) base = &base->args[0];
  int d = st.impl.resolve(implNode(st, base->tensor, z.loc));
  if (!st.impl.nodes[d].isInput)
    throw InputError(z.loc, "zero names " + base->tensor.toString() +
                                ", which its graph computes: zero padding is declared on inputs only");
  eg::EGraph scratch(ops::inferData, st.symbols);
  eg::Id id = addRelExpr(scratch, z.region, st.spec, st.impl);
  if (!scratch.data(id).tensor()) throw InputError(z.loc, "zero region '" + z.region.toString() + "' is ill-typed");
  st.implZeros[d].push_back(&z.region);
}

// Validates each user relation once (names, shapes) and indexes it.
void loadInputRelations(InferState& st) {
  for (auto& c : st.rel.constants) {
    if (c.tensor.side == TensorName::Side::Spec) st.specConsts[specNode(st, c.tensor, c.loc)] = c.value;
    else st.implConsts[implNode(st, c.tensor, c.loc)] = c.value;
  }
  // The constructor marked input-free tensors before any constant was known.
  if (!st.implConsts.empty()) st.markInputFree();
  for (auto& z : st.rel.zeros) loadZeroRegion(st, z);
  markImplZeros(st);
  for (auto& r : st.rel.relations) {
    int s = specNode(st, r.lhs, r.loc);
    eg::EGraph scratch(ops::inferData, st.symbols);
    eg::Id rhs = addRelExpr(scratch, r.rhs, st.spec, st.impl);
    const TensorType* want = st.spec.nodes[s].data.tensor();
    const TensorType* got = scratch.data(rhs).tensor();
    if (want && got && !ops::sameShape(scratch.symbols(), want->shape, got->shape))
      throw InputError(r.loc, "shape mismatch: " + r.lhs.toString() + " is " + toString(*want) + " but '" +
                                  r.rhs.toString() + "' is " + toString(*got));
    st.inputRels[s].push_back(&r.rhs);
  }
}

// The `output` statements' tensors, else the spec graph's outputs; no repeats.
std::vector<int> outputsOfInterest(const InferState& st) {
  std::vector<int> out;
  if (!st.rel.outputs.empty()) {
    for (auto& t : st.rel.outputs) out.push_back(specNode(st, t, {st.rel.path, 0}));
  } else {
    const Graph& g = *st.spec.graphs[0];
    for (NodeId id : g.outputNodes()) out.push_back(st.spec.resolve(*st.spec.find(leaves::specName(g.node(id).name))));
  }
  std::vector<int> uniq;
  for (int t : out)
    if (std::find(uniq.begin(), uniq.end(), t) == uniq.end()) uniq.push_back(t);
  return uniq;
}

void markTargets(InferState& st, const std::vector<int>& targets) {
  for (int t : targets) st.isTarget[t] = 1;
  st.strictOutputs = st.rel.outputs.empty();
}

// Spec tensors the targets and the expectations read, stopping at cut points
// and at tensors related by evaluation.
std::vector<char> neededTensors(const InferState& st, const std::vector<int>& targets) {
  std::vector<char> needed(st.spec.nodes.size(), 0);
  std::vector<int> stack(targets.begin(), targets.end());
  for (auto& e : st.rel.expectations) collectSpecTensors(st, e.lhs, stack);
  while (!stack.empty()) {
    int n = st.spec.resolve(stack.back());
    stack.pop_back();
    if (needed[n]) continue;
    needed[n] = 1;
    if (!st.inputRels[n].empty() || st.byEvaluation[n]) continue;  // given: a cut point, or by evaluation
    for (int o : st.spec.nodes[n].operands) stack.push_back(o);
  }
  return needed;
}

namespace {

// The step computing spec node `id`; a getitem of a tuple producer reads the producer's operands.
SpecOp specOpFor(const InferState& st, int id) {
  const LNode& n = st.spec.nodes[id];
  SpecOp op{id, id, n.operands};
  if (!n.def.nodes.empty() && n.def.nodes.back().op == ops::syms().getitem && n.operands.size() == 1) {
    const LNode& producer = st.spec.nodes[n.operands[0]];
    if (producer.tuple() && !producer.isInput) {
      op.reported = n.operands[0];
      op.reads = producer.operands;
    }
  }
  return op;
}

}  // namespace

// Spec operators needed for the targets and the expectations, in topological order.
std::vector<SpecOp> specOrder(const InferState& st, const std::vector<int>& targets) {
  std::vector<char> needed = neededTensors(st, targets);
  std::vector<SpecOp> order;
  for (size_t i = 0; i < st.spec.nodes.size(); ++i) {
    const LNode& n = st.spec.nodes[i];
    if (!needed[i] || n.aliasOf >= 0) continue;
    int id = static_cast<int>(i);
    if (n.isInput || !st.inputRels[i].empty()) {  // a relation given for an intermediate makes it an input
      if (st.inputRels[i].empty() && !st.specConsts.count(id))
        throw InputError({st.rel.path, 0}, "spec input '" + n.name + "' is needed but the relation file gives no relation for it");
      continue;
    }
    if (st.byEvaluation[i]) continue;  // related by evaluation: known before the walk
    if (n.tuple()) continue;  // computed as part of each getitem that reads it
    order.push_back(specOpFor(st, id));
  }
  return order;
}

void collectSpecTensors(const InferState& st, const RelExpr& e, std::vector<int>& out) {
  if (e.kind == RelExpr::Kind::Tensor && e.tensor.side == TensorName::Side::Spec)
    out.push_back(specNode(st, e.tensor, e.loc));
  for (auto& a : e.args) collectSpecTensors(st, a, out);
}

}  // namespace tangle
