// The soundness gate of operator reuse (reuse.cpp has the argument): a
// renaming phi from an earlier operator's footprint onto a new operator is
// accepted only if it maps every fact the earlier e-graph was built from
// onto a fact of the new operator's tensors. Nothing here trusts how phi was
// built (reuse_match.cpp).
#include <algorithm>
#include <functional>
#include <cstring>

#include "infer/leaf_names.h"
#include "infer/reuse.h"

namespace tangle {

namespace {

// A tensor leaf of a term: (is spec, lowered node), or nullopt.
std::optional<std::pair<bool, int>> termLeaf(const InferState& st, const eg::Term::Node& n) {
  return leaves::leafOf(st.spec, st.impl, n.op, n.attrs);
}

// A relation-language tensor's lowered node (resolved), or -1.
int relLeaf(const InferState& st, const TensorName& t) {
  const LGraph& g = t.side == TensorName::Side::Spec ? st.spec : st.impl;
  auto id = g.find(t.toString());
  return id ? g.resolve(*id) : -1;
}

bool pairUnder(Renaming& phi, bool spec, int from, int to, bool bind) {
  if (bind) return spec ? phi.bindSpec(from, to) : phi.bindImpl(from, to);
  const int* mapped = spec ? phi.specOf(from) : phi.implOf(from);
  return mapped && *mapped == to;
}

// A definition (CanonTerm) of graph g, operands mapped by `mapped`.
template <class Map>
bool sameDef(const LGraph& g, const LNode& a, const LNode& b, Map mapped) {
  if (a.def.nodes.size() != b.def.nodes.size() || a.def.aliasOf.has_value() != b.def.aliasOf.has_value()) return false;
  for (size_t i = 0; i < a.def.nodes.size(); ++i) {
    const auto &x = a.def.nodes[i], &y = b.def.nodes[i];
    if (x.op != y.op || x.attrs != y.attrs || x.children.size() != y.children.size()) return false;
    for (size_t c = 0; c < x.children.size(); ++c) {
      const auto &rx = x.children[c], &ry = y.children[c];
      if (rx.kind != ry.kind) return false;
      switch (rx.kind) {
        case CanonTerm::Ref::Kind::Operand: {
          const int* m = mapped(g.resolve(rx.operand));
          if (!m || *m != g.resolve(ry.operand)) return false;
          break;
        }
        case CanonTerm::Ref::Kind::Local:
          if (rx.local != ry.local) return false;
          break;
        case CanonTerm::Ref::Kind::Scalar:  // bitwise: NaN and -0.0 included
          if (std::memcmp(&rx.scalar, &ry.scalar, sizeof(double)) != 0) return false;
          break;
      }
    }
  }
  return true;
}

bool sameSpecDef(const InferState& st, const Renaming& phi, int a, int b) {
  const LNode &x = st.spec.nodes[a], &y = st.spec.nodes[b];
  return st.specDataId[a] == st.specDataId[b] && sameDef(st.spec, x, y, [&](int n) { return phi.specOf(n); });
}

template <class K, class V>
bool sameConstant(const std::unordered_map<K, V>& m, int a, int b) {
  auto x = m.find(a), y = m.find(b);
  if ((x == m.end()) != (y == m.end())) return false;
  return x == m.end() || std::memcmp(&x->second, &y->second, sizeof(V)) == 0;
}

// (a): a spec tensor's type and everything addSpecTensor seeds it with.
bool sameSpecFacts(const InferState& st, Renaming& phi, int a, int b) {
  const LNode &x = st.spec.nodes[a], &y = st.spec.nodes[b];
  if (st.specDataId[a] != st.specDataId[b] || x.isInput != y.isInput || st.deferredDepth[a] != st.deferredDepth[b]) return false;
  if (!sameConstant(st.specConsts, a, b)) return false;
  if (st.rels[a].size() != st.rels[b].size() || st.inputRels[a].size() != st.inputRels[b].size()) return false;
  for (size_t i = 0; i < st.rels[a].size(); ++i)
    if (!sameTermUnder(st, phi, st.rels[a][i], st.rels[b][i], false)) return false;
  for (size_t i = 0; i < st.inputRels[a].size(); ++i)
    if (!sameRelExprUnder(st, phi, *st.inputRels[a][i], *st.inputRels[b][i], false)) return false;
  return true;
}

// The zero regions the relation declares in a (zero EXPR), renamed, are b's.
bool sameZeros(const InferState& st, Renaming& phi, int a, int b) {
  auto x = st.implZeros.find(a), y = st.implZeros.find(b);
  if ((x == st.implZeros.end()) != (y == st.implZeros.end())) return false;
  if (x == st.implZeros.end()) return true;
  if (x->second.size() != y->second.size()) return false;
  for (size_t i = 0; i < x->second.size(); ++i)
    if (!sameRelExprUnder(st, phi, *x->second[i], *y->second[i], false)) return false;
  return true;
}

}  // namespace

// (c): an implementation tensor's type, constant, zero regions and, if
// explored, definition. Its rank may differ (see rankBijection).
bool sameImplFacts(const InferState& st, Renaming& phi, int a, int b, bool explored) {
  const FlatNode &x = st.implFlat[a], &y = st.implFlat[b];
  if (x.specOwned || y.specOwned || x.data != y.data || x.isInput != y.isInput || (x.refCount == 0) != (y.refCount == 0))
    return false;
  if (!sameConstant(st.implConsts, a, b) || !sameZeros(st, phi, a, b)) return false;
  if (!explored) return true;
  // sameDef over the flat records: the same definition up to its operands, and those mapped.
  if (x.def != y.def) return false;
  std::span<const int> p = st.implFlat.refsOf(a), q = st.implFlat.refsOf(b);
  for (size_t k = 0; k < p.size(); ++k) {
    const int* m = phi.implOf(p[k]);
    if (!m || *m != q[k]) return false;
  }
  return true;
}

namespace {

// phi moves the footprint's implementation tensors between ranks by one
// bijection. Soundness does not need it: no fact names a rank (collectives
// are lowered to definitions over each member rank's operand, and a rank's
// own position, e.g. its reduce-scatter chunk, is an attribute compared
// above). It keeps the renamed relations one rank's per rank, as searched.
bool rankBijection(const InferState& st, const Footprint& f, const Renaming& phi) {
  IntMap to, from;
  for (int d : f.impl) {
    const int* m = phi.implOf(d);
    if (!m) return false;
    int a = st.impl.nodes[d].graph, b = st.impl.nodes[*m].graph;
    if (to.emplace(a, b).first != b || from.emplace(b, a).first != a) return false;
  }
  return true;
}

}  // namespace

bool sameTermUnder(const InferState& st, Renaming& phi, const eg::Term& a, const eg::Term& b, bool bind) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const auto &x = a.nodes[i], &y = b.nodes[i];
    if (x.op != y.op || x.children != y.children) return false;
    auto lx = termLeaf(st, x), ly = termLeaf(st, y);
    if (lx.has_value() != ly.has_value()) return false;
    if (!lx) {
      if (x.attrs != y.attrs) return false;
      continue;
    }
    if (lx->first != ly->first || !pairUnder(phi, lx->first, lx->second, ly->second, bind)) return false;
  }
  return true;
}

bool sameRelExprUnder(const InferState& st, Renaming& phi, const RelExpr& a, const RelExpr& b, bool bind) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case RelExpr::Kind::Tensor: {
      if (a.tensor.side != b.tensor.side) return false;
      int x = relLeaf(st, a.tensor), y = relLeaf(st, b.tensor);
      return x >= 0 && y >= 0 && pairUnder(phi, a.tensor.side == TensorName::Side::Spec, x, y, bind);
    }
    case RelExpr::Kind::Int: return a.i == b.i;
    case RelExpr::Kind::Float: return std::memcmp(&a.f, &b.f, sizeof(double)) == 0;
    case RelExpr::Kind::IntList: return a.ints == b.ints;
    case RelExpr::Kind::Call: break;
  }
  if (a.op != b.op || a.args.size() != b.args.size() || a.kwargs.size() != b.kwargs.size()) return false;
  for (size_t i = 0; i < a.args.size(); ++i)
    if (!sameRelExprUnder(st, phi, a.args[i], b.args[i], bind)) return false;
  for (size_t i = 0; i < a.kwargs.size(); ++i)
    if (a.kwargs[i].first != b.kwargs[i].first || !sameRelExprUnder(st, phi, a.kwargs[i].second, b.kwargs[i].second, bind))
      return false;
  return true;
}

bool preservesMergedEqualities(const InferState& st, const Footprint& f, const Renaming& phi) {
  return holdRenamed(st, f.mergedEqual, [&](int d) { return phi.implOf(d); });
}

bool holdRenamed(const InferState& st, const std::vector<std::pair<int, int>>& pairs,
                 const std::function<const int*(int)>& image) {
  // Pairs come grouped by their first tensor: a long group stamps the image's partners into this
  // thread's node marks and tests each pair with one load (a find per pair was quadratic in the
  // copies of a weight replicated on 64 ranks).
  StampMarks* mark = nullptr;
  for (size_t i = 0; i < pairs.size();) {
    size_t j = i;
    while (j < pairs.size() && pairs[j].first == pairs[i].first) ++j;
    const int* x = image(pairs[i].first);
    const std::vector<int>* partners = x ? st.implEqual.find(*x) : nullptr;
    if (!partners) return false;
    uint32_t stamp = 0;
    if (j - i > 4) {
      if (!mark) mark = &nodeMarks();
      stamp = mark->next(st.impl.nodes.size());
      for (int p : *partners) mark->at[static_cast<size_t>(p)] = stamp;
    }
    for (; i < j; ++i) {
      const int* y = image(pairs[i].second);
      if (!y) return false;
      if (stamp ? mark->at[static_cast<size_t>(*y)] != stamp
                : std::find(partners->begin(), partners->end(), *y) == partners->end())
        return false;
    }
  }
  return true;
}

bool renameTerm(const InferState& st, const Renaming& phi, const eg::Term& in, eg::Term& out) {
  out = in;
  for (auto& n : out.nodes) {
    auto leaf = termLeaf(st, n);
    if (n.op == ops::syms().tensor && !leaf) return false;
    if (!leaf) continue;
    const int* to = leaf->first ? phi.specOf(leaf->second) : phi.implOf(leaf->second);
    if (!to) return false;
    const LNode& target = (leaf->first ? st.spec : st.impl).nodes[*to];
    n.attrs = target.leafAttrs;
  }
  return true;
}

bool preservesFootprint(const InferState& st, const Footprint& f, const SpecOp& op, const Renaming& constPhi) {
  // The checks below only read phi (bind = false); the cast lets them share
  // the comparison code with reuse_match.cpp.
  Renaming& phi = const_cast<Renaming&>(constPhi);
  const SpecOp& a = f.op;
  if (st.isTarget[a.node] != st.isTarget[op.node] || a.reads.size() != op.reads.size()) return false;
  if ((a.reported != a.node) != (op.reported != op.node)) return false;
  auto maps = [&](int from, int to) { const int* m = phi.specOf(from); return m && *m == to; };
  if (!maps(a.node, op.node) || !maps(a.reported, op.reported)) return false;
  for (size_t i = 0; i < a.reads.size(); ++i)
    if (!maps(st.spec.resolve(a.reads[i]), st.spec.resolve(op.reads[i]))) return false;
  // Completeness guard, not soundness: the related tensors have users of the
  // same operators as before, so the search would not have had other
  // implementation nodes to explore (e.g. a view where there was an add).
  // First: it is what refuses a renaming (an operator whose neighbourhood is
  // not a copy), and all checks must pass.
  for (int d : f.related) {
    const int* t = phi.implOf(d);
    if (!t || st.implFlat.userOps[static_cast<size_t>(d)] != st.implFlat.userOps[static_cast<size_t>(*t)]) return false;
  }
  // (b) the operator's definition (and its tuple producer's), and the inlined ones.
  if (!sameSpecDef(st, phi, a.node, op.node)) return false;
  if (a.reported != a.node && !sameSpecDef(st, phi, a.reported, op.reported)) return false;
  for (int s : f.inlined) {
    const int* t = phi.specOf(s);
    if (!t || !sameSpecDef(st, phi, s, *t)) return false;
  }
  // (a) every spec leaf; the output's own leaf has its type only.
  for (int s : f.spec) {
    const int* t = phi.specOf(s);
    if (!t) return false;
    if (s == a.node ? st.specDataId[s] != st.specDataId[*t] : !sameSpecFacts(st, phi, s, *t)) return false;
  }
  // The reads are always seeded, with or without a leaf of their own.
  for (size_t i = 0; i < a.reads.size(); ++i)
    if (!sameSpecFacts(st, phi, st.spec.resolve(a.reads[i]), st.spec.resolve(op.reads[i]))) return false;
  // (c) every implementation leaf.
  for (size_t i = 0; i < f.impl.size(); ++i) {
    const int* t = phi.implOf(f.impl[i]);
    if (!t || !sameImplFacts(st, phi, f.impl[i], *t, f.implDef[i])) return false;
  }
  if (!rankBijection(st, f, phi)) return false;
  return true;
}

}  // namespace tangle
