// Deferred carrying (beyond the paper; InferOptions::maxDeferred). A spec
// intermediate with no clean relation (e.g. a mask over the full vocabulary
// that no rank computes) is carried as one non-clean expression over
// implementation tensors for a few consecutive operators, waiting for a
// consumer that is clean again (e.g. the masked lookup the mask feeds; the
// carried tensor's spec definition is inlined into that consumer's e-graph,
// see addSpecTensor). Outputs of interest are never carried. When the chain
// ends without a clean relation, the blame goes to the operator that started
// it, not to the one where the search gave up.
#include <algorithm>
#include <cmath>

#include "infer/leaf_names.h"
#include "infer/operator_search.h"

namespace tangle {

// The longest carried chain among the operator's inputs, and the earliest
// operator starting such a chain.
namespace {

// True when term node i and all below it are clean (impl tensors, rearrangements, reductions).
bool cleanSubterm(const eg::Term& t, uint32_t i) {
  const eg::Term::Node& n = t.nodes[i];
  if (!ops::isCleanNode(eg::ENode{n.op, n.attrs, {}})) return false;
  for (uint32_t c : n.children)
    if (!cleanSubterm(t, c)) return false;
  return true;
}

// div(c, k) with c clean and k a constant leaf: the form carryDeferred stores a scaled clean relation in.
bool isScaledCleanTerm(const eg::Term& t) {
  if (t.nodes.empty()) return false;
  const eg::Term::Node& root = t.nodes[t.root()];
  if (root.op != ops::syms().div || root.children.size() != 2) return false;
  const eg::Term::Node& k = t.nodes[root.children[1]];
  return k.op == ops::syms().constant && k.children.empty() && cleanSubterm(t, root.children[0]);
}

}  // namespace

bool carriedScaled(const InferState& st, int s) {
  return st.deferredDepth[s] > 0 && !st.rels[s].empty() &&
         std::all_of(st.rels[s].begin(), st.rels[s].end(), isScaledCleanTerm);
}

DeferredChain deferredChain(const InferState& st, const SpecOp& op) {
  DeferredChain chain;
  chain.origin = op.reported;
  bool allScaled = true;
  for (int s : op.reads) {
    int r = st.spec.resolve(s);
    st.noteSpecRead(r);
    if (st.deferredDepth[r] > chain.depth) chain.depth = st.deferredDepth[r];
    if (st.deferredDepth[r] > 0 && (chain.origin == op.reported || st.deferredOrigin[r] < chain.origin))
      chain.origin = st.deferredOrigin[r];
    if (st.deferredDepth[r] > 0) allScaled = allScaled && carriedScaled(st, r);
  }
  chain.scaled = chain.depth > 0 && allScaled;
  return chain;
}

namespace {

// True when the class holds div(c, k): c with a clean expression, k a nonzero scalar constant.
// A rank seeding its backward with 1/(local elements) where the spec has 1/(global ones) (a
// local-mean loss, its gradients averaged over the ranks) is related to the spec this way through
// the whole backward, until the average's division makes it clean: a relation up to a constant,
// which does not grow from one operator to the next as other carried expressions do.
// Returns that relation as terms div(c, k), one per top-level alternative of c's clean terms (at
// most `limit`; each rank's copy of a replicated value, as for a clean relation).
std::vector<eg::Term> scaledClean(const eg::EGraph& g, eg::Id root, size_t limit = 1) {
  eg::Extractor clean(g, [](const eg::EGraph&, const eg::ENode& n) { return ops::isCleanNode(n); });
  eg::Extractor constant(g, [](const eg::EGraph&, const eg::ENode& n) { return n.op == ops::syms().constant; });
  // The smallest divisor: the ranks' own scaled values (a rank's 1/(local count) seed is the spec's
  // 1/(global count) times 2), whose computations the next operators' searches then follow.
  const eg::ENode* best = nullptr;
  double bestK = 0;
  for (const eg::ENode& n : g.eclass(root).nodes) {
    if (n.op != ops::syms().div || n.children.size() != 2) continue;
    const eg::ClassData& k = g.data(n.children[1]);
    if (!k.constant || *k.constant == 0 || !k.tensor() || !k.tensor()->shape.empty()) continue;
    if (!clean.cost(n.children[0])) continue;
    auto kt = constant.best(n.children[1]);
    if (!kt || kt->size() != 1) continue;
    if (!best || std::abs(*k.constant) < std::abs(bestK)) best = &n, bestK = *k.constant;
  }
  if (!best) return {};
  eg::Term::Node kNode = constant.best(best->children[1])->nodes.front();
  std::vector<eg::Term> out = clean.alternatives(best->children[0], limit);
  for (eg::Term& t : out) {
    uint32_t cRoot = t.root();
    t.nodes.push_back(kNode);
    t.nodes.push_back(eg::Term::Node{best->op, best->attrs, {cRoot, cRoot + 1}});
  }
  return out;
}

}  // namespace

bool hasScaledClean(const eg::EGraph& g, eg::Id root) { return !scaledClean(g, root).empty(); }

// With no clean expression found: carries the operator's output as its
// smallest expression free of spec tensors, if the chain may grow (a scaled
// clean relation, see scaledClean, does not lengthen it). True if carried.
bool carryDeferred(InferState& st, OperatorSearch& s, const DeferredChain& chain) {
  int node = s.op.node;
  if (s.limitHit || st.isTarget[node] || chain.depth >= st.opts.maxDeferred) return false;
  eg::Extractor any(s.g, [](const eg::EGraph&, const eg::ENode& n) { return !leaves::isSpecLeaf(n); });
  auto t = any.best(s.root);
  if (!t) return false;
  std::vector<eg::Term> scaled = scaledClean(s.g, s.root, st.opts.maxRelationsPerTensor);
  bool isScaled = !scaled.empty();
  st.rels[node] = isScaled ? std::move(scaled) : std::vector<eg::Term>{*t};
  st.deferredDepth[node] = isScaled ? std::max<size_t>(chain.depth, 1) : chain.depth + 1;
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
