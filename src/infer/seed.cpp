// Seeding one operator's e-graph (Listing 1, before saturation): each input
// of the spec operator is one class, merged with every relation known for it
// (all of them at once), and the operator's expression over those classes is
// the root whose clean expressions are searched. The implementation tensors
// in the inputs' relations are the first members of T_rel (Listing 3).
#include "infer/leaf_names.h"
#include "infer/operator_search.h"

namespace tangle {

eg::Id constNode(eg::EGraph& g, double v) {
  return g.add(eg::ENode{ops::syms().constant, eg::internAttrs({eg::Attr::real(v)}), {}});
}

// Typed like the 0-d constants lowering builds: merging the tensor's class
// with the bare literal would give every literal v in the e-graph its dtype.
eg::Id declaredConstNode(eg::EGraph& g, const LNode& n, double v) {
  eg::Id c = constNode(g, v);
  const TensorType* t = n.data.tensor();
  if (!t || !t->shape.empty() || t->dtype == DType::Unknown || n.tuple()) return c;
  return g.add(eg::ENode{ops::syms().cast, eg::internAttrs({eg::Attr::str(dtypeName(t->dtype))}), {c}});
}

// The class of spec tensor `s`, merged with every relation known for it.
// A tensor carried without a clean relation is also given its spec
// definition (over its own inputs, one level further), so that lemmas see
// its structure (e.g. the range mask a vocab-parallel gather is guarded by).
eg::Id addSpecTensor(const InferState& st, eg::EGraph& g, std::unordered_set<int>& inlined, int s,
                     std::vector<int>& relTensors, int inlineDepth) {
  eg::Id leaf = addLeaf(g, st.spec, s);
  st.noteSpecRead(s);
  const LNode& n = st.spec.nodes[s];
  bool inlineDef = (st.deferredDepth[s] > 0 || inlineDepth > 0) && !n.isInput && st.inputRels[s].empty() && !st.byEvaluation[s] &&
                   !n.def.nodes.empty() && !n.tuple() && !carriedScaled(st, s) && inlined.insert(s).second;
  if (inlineDef) {
    int depth = st.deferredDepth[s] > 0 ? 1 : inlineDepth - 1;
    for (int o : n.operands) addSpecTensor(st, g, inlined, st.spec.resolve(o), relTensors, depth);
    if (auto def = addDefinition(g, st.spec, s)) g.merge(leaf, *def);
  }
  for (const RelExpr* e : st.inputRels[s]) {
    g.merge(leaf, addRelExpr(g, *e, st.spec, st.impl));
    collectImplTensors(st, *e, relTensors);
  }
  for (const eg::Term& t : st.rels[s]) {
    g.merge(leaf, addTerm(st, g, t));
    collectImplTensors(st, t, relTensors);
  }
  // A graph output's relations over the implementation's returned tensors
  // (strict outputs): found in the same e-graph as st.rels, and the form an
  // expectation over returned tensors needs when the clean relations name
  // pieces the ranks copied before returning (a load-balanced ring's chunks).
  for (const eg::Term& t : st.outRels[s]) {
    g.merge(leaf, addTerm(st, g, t));
    collectImplTensors(st, t, relTensors);
  }
  if (auto c = st.specConsts.find(s); c != st.specConsts.end()) g.merge(leaf, declaredConstNode(g, n, c->second));
  return leaf;
}

// Adds a clean term, giving its tensor leaves their types from the graphs.
eg::Id addTerm(const InferState& st, eg::EGraph& g, const eg::Term& t) {
  std::vector<eg::Id> ids(t.size());
  for (size_t i = 0; i < t.size(); ++i) {
    const auto& n = t.nodes[i];
    if (n.op == ops::syms().tensor) {
      auto leaf = leaves::leafOf(st.spec, st.impl, n.op, n.attrs);
      ids[i] = addLeaf(g, leaf.value().first ? st.spec : st.impl, leaf->second);
      continue;
    }
    eg::ENode en{n.op, n.attrs, {}};
    for (uint32_t c : n.children) en.children.push_back(ids[c]);
    ids[i] = g.add(std::move(en));
  }
  return ids.back();
}

void collectImplTensors(const InferState& st, const RelExpr& e, std::vector<int>& out) {
  if (e.kind == RelExpr::Kind::Tensor && e.tensor.side == TensorName::Side::Impl)
    out.push_back(implNode(st, e.tensor, e.loc));
  for (auto& a : e.args) collectImplTensors(st, a, out);
  for (auto& [k, v] : e.kwargs) collectImplTensors(st, v, out);
}

void collectImplTensors(const InferState& st, const eg::Term& t, std::vector<int>& out) {
  for (auto& n : t.nodes)
    if (auto leaf = leaves::leafOf(st.spec, st.impl, n.op, n.attrs); leaf && !leaf->first) out.push_back(leaf->second);
}

namespace {

// Implementation inputs given a constant value in the relation file.
void mergeImplConstants(const InferState& st, eg::EGraph& g) {
  for (auto& [d, v] : st.implConsts)
    if (auto leaf = g.lookup(eg::ENode{ops::syms().tensor, st.impl.nodes[d].leafAttrs, {}}))
      g.merge(*leaf, declaredConstNode(g, st.impl.nodes[d], v));
}

// The expression of the operator over its inputs' classes.
std::optional<eg::Id> addSpecOp(const InferState& st, eg::EGraph& g, const SpecOp& op) {
  if (op.reported != op.node) {  // getitem of a tuple producer
    auto tuple = addDefinition(g, st.spec, op.reported);
    if (!tuple) return std::nullopt;
    // Opaque producers get their element types from the graph's annotations.
    g.merge(*tuple, addLeaf(g, st.spec, op.reported));
    g.rebuild();
    const auto& gi = st.spec.nodes[op.node].def.nodes.back();
    return g.tryAdd(eg::ENode{gi.op, eg::internAttrs(gi.attrs), {*tuple}});
  }
  auto root = addDefinition(g, st.spec, op.node);
  // An opaque definition has no type of its own: give it the annotation, so
  // an implementation value of another type merged with it is a conflict.
  if (root && !g.data(*root).tensor() && st.spec.nodes[op.node].data.tensor()) {
    g.merge(*root, addLeaf(g, st.spec, op.node));
    g.rebuild();
  }
  return root;
}

}  // namespace

void seedImplFacts(const InferState& st, OperatorSearch& s, std::vector<int>& relTensors) {
  mergeImplConstants(st, s.g);
  for (int d : mergeImplEqualities(st, s.g, relTensors, &s.mergedEqual)) relTensors.push_back(d);
  for (auto& [d, regions] : st.implZeros)
    if (s.g.lookup(eg::ENode{ops::syms().tensor, st.impl.nodes[d].leafAttrs, {}}))
      mergeZeroFacts(st, s.g, d);
}

std::optional<Failure> seed(InferState& st, OperatorSearch& s) {
  std::vector<int> relTensors;  // impl tensors of the inputs' relations
  for (int r : s.op.reads) addSpecTensor(st, s.g, s.inlined, st.spec.resolve(r), relTensors);
  seedImplFacts(st, s, relTensors);
  auto root = addSpecOp(st, s.g, s.op);
  if (!root) {
    Failure f = failureFor(st, s.op, s.g);
    f.reason = "the operator's expression over its inputs' relations is ill-typed";
    return f;
  }
  s.root = *root;
  for (int d : relTensors) addToRel(st, s, d);
  if (s.op.reads.empty())  // a source operator: compare with the implementation's sources
    for (int d : st.implSources) addToRel(st, s, d);
  return std::nullopt;
}

}  // namespace tangle
