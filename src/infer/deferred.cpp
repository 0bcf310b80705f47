// Deferred carrying (beyond the paper; InferOptions::maxDeferred). A spec
// intermediate with no clean relation (e.g. a mask over the full vocabulary
// that no rank computes) is carried as one non-clean expression over
// implementation tensors for a few consecutive operators, waiting for a
// consumer that is clean again (e.g. the masked lookup the mask feeds; the
// carried tensor's spec definition is inlined into that consumer's e-graph,
// see addSpecTensor). Outputs of interest are never carried. When the chain
// ends without a clean relation, the blame goes to the operator that started
// it, not to the one where the search gave up.
#include "infer/leaf_names.h"
#include "infer/operator_search.h"

namespace tangle {

// The longest carried chain among the operator's inputs, and the earliest
// operator starting such a chain.
DeferredChain deferredChain(const InferState& st, const SpecOp& op) {
  DeferredChain chain;
  chain.origin = op.reported;
  for (int s : op.reads) {
    int r = st.spec.resolve(s);
    st.noteSpecRead(r);
    if (st.deferredDepth[r] > chain.depth) chain.depth = st.deferredDepth[r];
    if (st.deferredDepth[r] > 0 && (chain.origin == op.reported || st.deferredOrigin[r] < chain.origin))
      chain.origin = st.deferredOrigin[r];
  }
  return chain;
}

// With no clean expression found: carries the operator's output as its
// smallest expression free of spec tensors, if the chain may grow. True if carried.
bool carryDeferred(InferState& st, OperatorSearch& s, const DeferredChain& chain) {
  int node = s.op.node;
  if (s.limitHit || st.isTarget[node] || chain.depth >= st.opts.maxDeferred) return false;
  eg::Extractor any(s.g, [](const eg::EGraph&, const eg::ENode& n) { return !leaves::isSpecLeaf(n); });
  auto t = any.best(s.root);
  if (!t) return false;
  st.rels[node] = {*t};
  st.deferredDepth[node] = chain.depth + 1;
  st.deferredOrigin[node] = chain.origin;
  return true;
}

// The failure of a carried chain: blames its first operator, with that
// operator's input relations; gaveUpAt names where the search stopped.
void blameChainOrigin(const InferState& st, const SpecOp& op, const DeferredChain& chain, Failure& f) {
  if (chain.depth == 0) return;
  f.gaveUpAt = op.reported;
  f.node = f.tensor = chain.origin;
  f.inputRelations.clear();
  for (int s : st.spec.nodes[chain.origin].operands) f.inputRelations.push_back(relationsOf(st, st.spec.resolve(s)));
}

}  // namespace tangle
