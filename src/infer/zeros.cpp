// Zero padding declared with `zero` statements: the region of an
// implementation input equals zeros (expand of the constant 0), and the input
// is the concat of its parts before, at and after the region, so lemmas see
// the zeros wherever the input is taken apart (a product over padded rows).
#include "infer/infer_state.h"
#include <algorithm>

#include "lower/lower.h"
#include "ops/ops.h"

namespace tangle {

namespace {

std::optional<eg::Id> zerosOf(eg::EGraph& g, const TensorType& t) {
  std::vector<int64_t> shape;
  for (Dim d : t.shape) {
    if (isSymbolic(d)) return std::nullopt;
    shape.push_back(d);
  }
  return ops::addSplat(g, t.dtype, shape, 0);  // of the region's dtype
}

eg::Id sliceOf(eg::EGraph& g, eg::Id x, int64_t dim, int64_t start, int64_t end) {
  return g.add(eg::ENode{ops::syms().slice,
                         eg::internAttrs({eg::Attr::integer(dim), eg::Attr::dim(start), eg::Attr::dim(end),
                                          eg::Attr::integer(1)}),
                         {x}});
}

// x = concat(x[.., 0:a], zeros, x[.., b:n]) for the region slice(x, dim, a, b).
void addTiling(const InferState& st, eg::EGraph& g, const RelExpr& region, eg::Id zeros) {
  if (region.kind != RelExpr::Kind::Call || region.op != "slice" || region.args.size() != 1 ||
      region.args[0].kind != RelExpr::Kind::Tensor)
    return;
  const RelExpr *dimE = region.kwarg("dim"), *startE = region.kwarg("start"), *endE = region.kwarg("end"),
                 *stepE = region.kwarg("step");
  if (!dimE || !startE || !endE || (stepE && stepE->i != 1)) return;
  eg::Id x = addRelExpr(g, region.args[0], st.spec, st.impl);
  const TensorType* t = g.data(x).tensor();
  if (!t) return;
  int64_t rank = static_cast<int64_t>(t->rank()), dim = dimE->i < 0 ? dimE->i + rank : dimE->i;
  if (dim < 0 || dim >= rank || isSymbolic(t->shape[dim])) return;
  int64_t n = t->shape[dim], a = std::clamp<int64_t>(startE->i < 0 ? startE->i + n : startE->i, 0, n),
          b = std::clamp<int64_t>(endE->i < 0 ? endE->i + n : endE->i, 0, n);
  if (a >= b) return;
  std::vector<eg::Id> parts;
  if (a > 0) parts.push_back(sliceOf(g, x, dim, 0, a));
  parts.push_back(zeros);
  if (b < n) parts.push_back(sliceOf(g, x, dim, b, n));
  if (parts.size() < 2) return;
  if (auto c = g.tryAdd(eg::ENode{ops::syms().concat, eg::internAttrs({eg::Attr::integer(dim)}), parts}))
    g.merge(x, *c);
}

}  // namespace

void mergeZeroFacts(const InferState& st, eg::EGraph& g, int d) {
  auto it = st.implZeros.find(d);
  if (it == st.implZeros.end()) return;
  for (const RelExpr* region : it->second) {
    eg::Id r = addRelExpr(g, *region, st.spec, st.impl);
    g.rebuild();
    const TensorType* t = g.data(r).tensor();
    auto zeros = t ? zerosOf(g, *t) : std::nullopt;
    if (!zeros) continue;
    g.merge(r, *zeros);
    addTiling(st, g, *region, *zeros);
  }
  g.rebuild();
}

}  // namespace tangle

namespace tangle {

namespace {

// Whether CanonTerm node i of `def` is zero given which operands are.
bool termZero(const CanonTerm& def, size_t i, const std::vector<char>& zero) {
  const CanonTerm::Node& n = def.nodes[i];
  auto childZero = [&](const CanonTerm::Ref& r) {
    switch (r.kind) {
      case CanonTerm::Ref::Kind::Operand: return zero[r.operand] != 0;
      case CanonTerm::Ref::Kind::Local: return termZero(def, r.local, zero);
      case CanonTerm::Ref::Kind::Scalar: return r.scalar == 0;
    }
    return false;
  };
  const ops::Syms& y = ops::syms();
  if (n.op == y.constant) {
    auto v = eg::attrNumber(n.attrs, 0);
    return v && *v == 0;
  }
  if (n.children.empty()) return false;
  auto any = std::any_of(n.children.begin(), n.children.end(), childZero);
  auto all = std::all_of(n.children.begin(), n.children.end(), childZero);
  if (n.op == y.mm || n.op == y.bmm || n.op == y.matmul || n.op == y.mul) return any;
  if (n.op == y.div || n.op == y.cast) return childZero(n.children[0]);  // cast: a typed splat's constant
  const ops::OpDef* info = ops::find(n.op);
  if (n.op == y.sum || n.op == y.add || n.op == y.sub || n.op == y.neg || (info && info->gather)) return all;
  return false;
}

}  // namespace

// A hint for the exploration only (explore.cpp): the lemmas still have to
// prove the value zero in each e-graph, so a wrong guess costs search, never
// soundness. Inputs declared zero as a whole, then what the graphs compute
// from them: products with a zero factor, rearrangements and sums of zeros.
void markImplZeros(InferState& st) {
  const LGraph& impl = st.impl;
  st.implZero.assign(impl.nodes.size(), 0);
  bool any = false;
  for (auto& [d, regions] : st.implZeros)
    for (const RelExpr* r : regions)
      if (r->kind == RelExpr::Kind::Tensor) st.implZero[d] = any = true;
  if (!any) return;
  for (bool grew = true; grew;) {  // operands usually come first: a pass or two
    grew = false;
    for (size_t d = 0; d < impl.nodes.size(); ++d) {
      const LNode& n = impl.nodes[d];
      if (st.implZero[d] || n.isInput) continue;
      bool z = n.aliasOf >= 0 ? st.implZero[n.aliasOf] != 0
                              : !n.def.nodes.empty() && termZero(n.def, n.def.nodes.size() - 1, st.implZero);
      if (z) st.implZero[d] = grew = true;
    }
  }
  for (size_t d = 0; d < impl.nodes.size(); ++d)
    if (st.implZero[d] && !impl.nodes[d].isInput && impl.nodes[d].aliasOf < 0)
      st.implZeroNodes.push_back(static_cast<int>(d));
}

}  // namespace tangle
