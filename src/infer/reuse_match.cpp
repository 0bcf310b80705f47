// Building the renaming phi of operator reuse (reuse.cpp): from an earlier
// operator's footprint onto a new operator's tensors. The output, its tuple
// producer and the reads map in order; the tensors in the reads' relations
// map by matching those relations term by term; the inlined spec
// definitions map their operands in order; then each explored
// implementation tensor maps to a user of the image of one of its operands
// with the same definition (operands first; sources by rank and definition),
// and a tensor the e-graph held only as an implEqual partner maps to a
// partner of its mate's image.
// This is a heuristic: reuse_verify.cpp decides whether phi may be used.
#include <algorithm>
#include <string>

#include "infer/reuse.h"

namespace tangle {

namespace {

// Binds the operands of two spec definitions in order; false on a mismatch.
bool bindSpecOperands(const LGraph& g, const LNode& a, const LNode& b, Renaming& phi) {
  if (a.def.nodes.size() != b.def.nodes.size()) return false;
  for (size_t i = 0; i < a.def.nodes.size(); ++i) {
    const auto &x = a.def.nodes[i], &y = b.def.nodes[i];
    if (x.op != y.op || x.attrs != y.attrs || x.children.size() != y.children.size()) return false;
    for (size_t c = 0; c < x.children.size(); ++c) {
      const auto &rx = x.children[c], &ry = y.children[c];
      if (rx.kind != ry.kind) return false;
      if (rx.kind != CanonTerm::Ref::Kind::Operand) continue;
      int from = g.resolve(rx.operand), to = g.resolve(ry.operand);
      if (!phi.bindSpec(from, to)) return false;
    }
  }
  return true;
}

// Could implementation node b be the image of a, given phi so far? (Its
// rank is the image of a's, same type and definition; operands already mapped map to b's, the others
// to tensors not yet in phi's image.)
bool mayMapTo(const InferState& st, const Renaming& phi, int a, int b) {
  const FlatNode &x = st.implFlat[a], &y = st.implFlat[b];
  if (x.def != y.def || x.data != y.data || y.aliasOf >= 0 || x.operandCount != y.operandCount ||
      phi.implInv.count(b) || !phi.rankFits(x.graph, y.graph))
    return false;
  std::span<const int> p = st.implFlat.refsOf(a), q = st.implFlat.refsOf(b);
  for (size_t k = 0; k < p.size(); ++k) {
    const int* m = phi.implOf(p[k]);
    if (m ? *m != q[k] : phi.implInv.count(q[k]) > 0) return false;
  }
  return true;
}

// Binds the operands of a and b in order, their definitions of one shape (mayMapTo).
bool bindRefs(const InferState& st, int a, int b, Renaming& phi) {
  std::span<const int> p = st.implFlat.refsOf(a), q = st.implFlat.refsOf(b);
  for (size_t k = 0; k < p.size(); ++k)
    if (!phi.bindImpl(p[k], q[k])) return false;
  return true;
}

}  // namespace

// Maps explored node a to a user of an operand's image (or, for a source, to
// a source of the same rank), binding its operands. False if none fits. The
// operand references are the node's operands in order, repeats included.
bool matchExplored(const InferState& st, Renaming& phi, int a, bool allowSources, bool operandsMapped) {
  std::span<const int> refs = st.implFlat.refsOf(a);
  if (operandsMapped)
    for (int o : refs)
      if (!phi.implOf(o)) return false;
  for (int o : refs) {
    const int* m = phi.implOf(o);
    if (!m) continue;
    for (int u : st.implFlat.usersOf(*m))
      if (mayMapTo(st, phi, a, u)) return phi.bindImpl(a, u) && bindRefs(st, a, u, phi);
    return false;
  }
  if (!refs.empty() || !allowSources) return false;
  for (int u : st.implSources)
    if (mayMapTo(st, phi, a, u)) return phi.bindImpl(a, u);
  return false;
}

namespace {

// Binds the partners of the implEqual facts f's e-graph was seeded with
// (d = e, e a tensor nothing else in the e-graph reached): e maps to the
// partner of phi(d) at e's position among d's partners, else to the first
// free one of the same type on a fitting rank. True if it bound any.
bool matchMergedPartners(const InferState& st, const Footprint& f, Renaming& phi) {
  bool bound = false;
  for (auto [a, b] : f.mergedEqual) {
    const int *x = phi.implOf(a), *y = phi.implOf(b);
    if (!x || y) continue;
    const std::vector<int>*from = st.implEqual.find(a), *to = st.implEqual.find(*x);
    if (!from || !to) continue;
    auto fits = [&](int e) {
      const FlatNode &p = st.implFlat[b], &q = st.implFlat[e];
      return !phi.implInv.count(e) && p.data == q.data && phi.rankFits(p.graph, q.graph);
    };
    size_t k = std::find((*from).begin(), (*from).end(), b) - (*from).begin();
    int pick = -1;
    if (k < (*to).size() && fits((*to)[k])) pick = (*to)[k];
    for (size_t i = 0; pick < 0 && i < (*to).size(); ++i)
      if (fits((*to)[i])) pick = (*to)[i];
    if (pick >= 0 && phi.bindImpl(b, pick)) bound = true;
  }
  return bound;
}

}  // namespace

bool buildRenaming(const InferState& st, const Footprint& f, const SpecOp& op, Renaming& phi, std::string* why) {
  auto fail = [&](const std::string& reason) {
    if (why) *why = reason;
    return false;
  };
  const SpecOp& a = f.op;
  if (a.reads.size() != op.reads.size() || (a.reported != a.node) != (op.reported != op.node)) return fail("other reads");
  if (!phi.bindSpec(a.node, op.node) || !phi.bindSpec(a.reported, op.reported)) return fail("other reads");
  for (size_t i = 0; i < a.reads.size(); ++i)
    if (!phi.bindSpec(st.spec.resolve(a.reads[i]), st.spec.resolve(op.reads[i]))) return fail("other reads");
  // Inlined definitions: their operands in order (parents are bound first, so repeat).
  for (bool progress = true; progress;) {
    progress = false;
    for (int s : f.inlined) {
      const int* t = phi.specOf(s);
      if (!t) continue;
      size_t before = phi.spec.size();
      if (!bindSpecOperands(st.spec, st.spec.nodes[s], st.spec.nodes[*t], phi))
        return fail("inlined definition of " + st.spec.nodes[s].name + " differs");
      progress |= phi.spec.size() != before;
    }
  }
  // The seeded spec tensors' relations name implementation tensors.
  for (int s : f.spec) {
    const int* t = phi.specOf(s);
    if (!t) return fail("seeded " + st.spec.nodes[s].name + " has no image");
    if (s == a.node) continue;
    const auto &ra = st.rels[s], &rb = st.rels[*t];
    const auto &ia = st.inputRels[s], &ib = st.inputRels[*t];
    const std::string differ = "relations of " + st.spec.nodes[s].name + " and " + st.spec.nodes[*t].name + " differ";
    if (ra.size() != rb.size() || ia.size() != ib.size()) return fail(differ);
    for (size_t i = 0; i < ra.size(); ++i)
      if (!sameTermUnder(st, phi, ra[i], rb[i], true)) return fail(differ);
    for (size_t i = 0; i < ia.size(); ++i)
      if (!sameRelExprUnder(st, phi, *ia[i], *ib[i], true)) return fail(differ);
  }
  // Explored implementation tensors, operands first; sources once nothing else moves.
  std::vector<int> pending;
  for (size_t i = 0; i < f.impl.size(); ++i)
    if (f.implDef[i] && !phi.implOf(f.impl[i])) pending.push_back(f.impl[i]);
  bool allowSources = false;
  while (!pending.empty()) {
    std::vector<int> left;
    for (int d : pending)
      if (!phi.implOf(d) && !matchExplored(st, phi, d, allowSources)) left.push_back(d);
    if (left.size() == pending.size() && !matchMergedPartners(st, f, phi)) {
      if (allowSources) return fail("explored " + st.impl.nodes[left.front()].name + " has no image");
      allowSources = true;
    }
    pending = std::move(left);
  }
  while (matchMergedPartners(st, f, phi)) {
  }
  for (int d : f.impl)
    if (!phi.implOf(d)) return fail(st.impl.nodes[d].name + " has no image");
  return true;
}

}  // namespace tangle
