// Expectations (§4.4) and the verdict. After the walk over G_s, each
// `expect lhs = rhs` is checked in an e-graph: lhs's spec tensors are seeded
// with their relations in R, both sides added, the lemmas run, and the
// expectation holds when the two sides end in one class. Expectations with
// one left side (a gradient expected on every rank) share one e-graph first.
#include <string>
#include <unordered_map>

#include "infer/infer_state.h"
#include "ops/ops.h"

namespace tangle {

namespace {

bool isCleanDefinition(const LNode& n) {
  if (n.def.nodes.empty()) return false;
  const ops::OpDef* info = ops::find(n.def.nodes.back().op);
  return info && info->clean;
}

// The right side names implementation tensors; the relations found name the
// tensors the walk related, which may sit a rearrangement away (an output
// `t(t(mm))` of a related `mm`, explored at an earlier operator). Each named
// tensor is merged with its own definition, down through rearrangements:
// facts of the implementation graph, so no relation is assumed. A named
// tensor's own definition is inlined whatever its op: the walk may relate the
// spec tensor to that op's input once an identity op (Megatron's loss `/ 1`)
// is removed by its lemma, and never explore the named output itself.
void inlineImplRearrangements(const InferState& st, eg::EGraph& g, const RelExpr& rhs) {
  std::vector<int> work;
  collectImplTensors(st, rhs, work);
  std::unordered_set<int> named, seen;
  for (int d : work) named.insert(st.impl.resolve(d));
  while (!work.empty()) {
    int d = st.impl.resolve(work.back());
    work.pop_back();
    if (!seen.insert(d).second) continue;
    if (!isCleanDefinition(st.impl.nodes[d]) && (!named.count(d) || st.impl.nodes[d].def.nodes.empty())) continue;
    eg::Id leaf = addLeaf(g, st.impl, d);
    if (auto def = addDefinition(g, st.impl, d)) g.merge(leaf, *def);
    for (int o : st.impl.nodes[d].operands) work.push_back(o);
  }
}

// One e-graph for expectations sharing their left side (the same gradient
// expected on each rank): the left side seeded once, every right side added.
// Each fact added is true (definitions of the implementation, relations
// found, proved equalities), so an expectation whose sides end in one class
// holds. `stop` receives why the lemmas stopped.
std::vector<char> checkTogether(const InferState& st, std::unordered_set<int>& inlined,
                                const std::vector<const Expectation*>& es, eg::StopReason& stop) {
  eg::EGraph g(ops::inferData, st.symbols);
  std::vector<int> specTensors, ignored;
  collectSpecTensors(st, es.front()->lhs, specTensors);
  for (int s : specTensors) addSpecTensor(st, g, inlined, s, ignored);
  eg::Id lhs = addRelExpr(g, es.front()->lhs, st.spec, st.impl);
  std::vector<eg::Id> rhs;
  std::vector<int> named;
  for (const Expectation* e : es) {
    rhs.push_back(addRelExpr(g, e->rhs, st.spec, st.impl));
    inlineImplRearrangements(st, g, e->rhs);
    collectImplTensors(st, e->rhs, named);
  }
  mergeImplEqualities(st, g, named);
  g.rebuild();
  eg::RunLimits limits;
  limits.maxIterations = st.opts.maxIterations;
  limits.maxNodes = st.opts.maxNodes;
  limits.maxSeconds = st.opts.operatorSeconds;
  stop = eg::run(g, st.lemmas, limits, std::nullopt, &st.lemmaIndex).stop;
  std::vector<char> holds(es.size(), 0);
  for (size_t i = 0; i < es.size(); ++i) holds[i] = g.find(lhs) == g.find(rhs[i]);
  return holds;
}

// Which expectations of a group are one of the relations found for their left
// side, a spec tensor, term for term up to implementation tensors proved
// equal: `S = t` was proved by the walk, so `S = rhs` holds when rhs is t.
// The terms are added to one e-graph with those equalities and no lemma, so two
// land in one class only when they are the same term up to them (congruence).
// A pipeline plan expects each gradient on every rank that holds it, mostly
// exactly as the walk related it; the rest are checked with the lemmas
// (checkTogether).
std::vector<char> foundAsRelated(const InferState& st, const std::vector<const Expectation*>& es) {
  std::vector<char> holds(es.size(), 0);
  const RelExpr& lhs = es.front()->lhs;
  if (lhs.kind != RelExpr::Kind::Tensor || lhs.tensor.side != TensorName::Side::Spec) return holds;
  const std::vector<eg::Term>& found = st.rels[st.spec.resolve(specNode(st, lhs.tensor, lhs.loc))];
  if (found.empty()) return holds;
  eg::EGraph g(ops::inferData, st.symbols);
  std::vector<eg::Id> known;
  for (const eg::Term& t : found) known.push_back(addTerm(st, g, t));
  std::vector<eg::Id> rhs;
  std::vector<int> named;
  for (const Expectation* e : es) {
    rhs.push_back(addRelExpr(g, e->rhs, st.spec, st.impl));
    collectImplTensors(st, e->rhs, named);
  }
  // Implementation tensors the walk proved equal (a gradient all-reduced to every rank of its group),
  // and a concat of one piece is that piece (the lemma concat-single: relation files write a
  // gradient held whole on a rank as such a concat)
  mergeImplEqualities(st, g, named);
  const eg::Symbol concat = ops::syms().concat;
  std::vector<std::pair<eg::Id, eg::Id>> single;
  for (eg::Id c : g.classesWithOp(concat))
    for (const eg::ENode& n : g.eclass(c).nodes)
      if (n.op == concat && n.children.size() == 1) single.emplace_back(c, n.children[0]);
  for (auto [c, piece] : single) g.merge(c, piece);
  g.rebuild();
  if (!g.conflicts().empty()) return holds;  // a term of another type than its twin: leave it to the lemmas
  for (size_t i = 0; i < es.size(); ++i)
    for (eg::Id k : known)
      if (g.find(k) == g.find(rhs[i])) holds[i] = 1;
  return holds;
}

// One expectation in an e-graph of its own: for one that did not hold in its
// group's (a larger e-graph can reach a limit, or a guard can refuse, where
// its own would not).
ExpectationResult checkOne(const InferState& st, std::unordered_set<int>& inlined, const Expectation& e) {
  eg::StopReason stop{};
  ExpectationResult r;
  r.expectation = &e;
  r.holds = checkTogether(st, inlined, {&e}, stop)[0];
  // Not merged, but the lemmas did not run to saturation: unproved, not refuted.
  r.limitReached = !r.holds && stop != eg::StopReason::Saturated;
  return r;
}

}  // namespace

// `inlined`: the spec definitions not to inline again (addSpecTensor). The
// caller passes the set of the last operator's e-graph, and the set grows
// over the expectations: a carried tensor's definition inlined there is not
// added to these e-graphs. (Kept as the inference has always done it; a
// fresh set per expectation would be the cleaner rule.)
// Expectations with the same left side are checked together first
// (checkTogether); the results keep the relation file's order.
void checkExpectations(const InferState& st, std::unordered_set<int>& inlined, InferResult& res) {
  const auto& all = st.rel.expectations;
  std::vector<std::vector<const Expectation*>> groups;
  std::unordered_map<std::string, size_t> groupOf;
  for (const Expectation& e : all) {
    auto [it, fresh] = groupOf.emplace(e.lhs.toString(), groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(&e);
  }
  std::unordered_map<const Expectation*, ExpectationResult> results;
  for (const auto& group : groups) {
    std::vector<char> holds = foundAsRelated(st, group);
    std::vector<const Expectation*> rest;
    for (size_t i = 0; i < group.size(); ++i)
      if (!holds[i]) rest.push_back(group[i]);
    eg::StopReason stop{};
    if (rest.size() > 1) {
      std::vector<char> together = checkTogether(st, inlined, rest, stop);
      for (size_t i = 0, k = 0; i < group.size(); ++i)
        if (!holds[i]) holds[i] = together[k++];
    }
    std::vector<int> specTensors;
    collectSpecTensors(st, group.front()->lhs, specTensors);
    std::vector<eg::Term> known;
    if (!specTensors.empty()) known = relationsOf(st, specTensors[0]).exprs;
    for (size_t i = 0; i < group.size(); ++i) {
      ExpectationResult r;
      if (holds[i]) {
        r.expectation = group[i];
        r.holds = true;
      } else {
        r = checkOne(st, inlined, *group[i]);
      }
      r.known = known;
      results.emplace(group[i], std::move(r));
    }
  }
  for (const Expectation& e : all) res.expectations.push_back(std::move(results.at(&e)));
}

Verdict verdictOf(const InferResult& res) {
  if (res.failure) return res.failure->limitReached ? Verdict::Inconclusive : Verdict::Violation;
  // A refused expectation is a violation only when its search saturated;
  // one cut by a limit leaves the verdict inconclusive (unless another is refused).
  bool cut = false;
  for (auto& e : res.expectations)
    if (!e.holds && !e.limitReached) return Verdict::Violation;
    else if (!e.holds) cut = true;
  if (cut) return Verdict::Inconclusive;
  // Classes of different types were merged (dumps that contradict each
  // other, or a wrong lemma): the relations found cannot be trusted.
  if (!res.stats.conflicts.empty()) return Verdict::Inconclusive;
  return Verdict::Refines;
}

}  // namespace tangle
