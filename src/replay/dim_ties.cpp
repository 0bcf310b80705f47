#include "replay/dim_ties.h"

#include <algorithm>
#include <optional>

#include "ops/infer.h"
#include "ops/ops.h"

namespace tangle::replay::detail {

namespace {

using Occs = std::vector<int>;

struct Ties {
  DimClasses& dc;
  const OpOccs& o;

  void tie(int a, int b) {
    if (a >= 0 && b >= 0 && dc.value(a) >= 0 && dc.value(a) == dc.value(b)) dc.unite(a, b);
  }
  // Numpy broadcasting: dims aligned from the right.
  void right(const Occs& x, const Occs& out) {
    for (size_t k = 1; k <= std::min(x.size(), out.size()); ++k) tie(x[x.size() - k], out[out.size() - k]);
  }
  // The single tensor type of child i, or nullptr (a scalar operand, a tuple).
  const Occs* child(size_t i) const {
    if (i >= o.children.size() || o.children[i].size() != 1) return nullptr;
    return &o.children[i][0];
  }
  const Occs* result() const { return o.result.size() == 1 ? &o.result[0] : nullptr; }
  std::optional<int64_t> intAttr(size_t k) const {
    if (k >= o.attrs.size() || o.attrs[k].kind != eg::Attr::Kind::Int) return std::nullopt;
    return o.attrs[k].i;
  }
  const std::vector<int64_t>* listAttr(size_t k) const {
    if (k >= o.attrs.size() || o.attrs[k].kind != eg::Attr::Kind::IntList) return nullptr;
    return &o.attrs[k].list;
  }
  // A size attribute list that spells the result's shape (reshape, expand): entry k is dim k.
  void shapeAttr(size_t k, const Occs& out) {
    if (k >= o.attrOccs.size() || o.attrOccs[k].size() != out.size()) return;
    for (size_t i = 0; i < out.size(); ++i) tie(o.attrOccs[k][i], out[i]);
  }

  // Every operand and every result type broadcast against each other; tuples of operands refused.
  bool elementwise() {
    for (const auto& c : o.children)
      if (c.size() > 1) return false;
    for (const Occs& r : o.result)
      for (const auto& c : o.children)
        if (c.size() == 1) right(c[0], r);
    for (size_t i = 1; i < o.result.size(); ++i) right(o.result[i], o.result[0]);
    return true;
  }
  bool expand() {
    const Occs *x = child(0), *out = result();
    if (!x || !out) return false;
    right(*x, *out);
    shapeAttr(0, *out);
    return true;
  }
  bool transpose() {
    const Occs *x = child(0), *out = result();
    auto d0 = intAttr(0), d1 = intAttr(1);
    if (!x || !out || !d0 || !d1 || x->size() != out->size()) return false;
    auto n = static_cast<int64_t>(x->size());
    if (*d0 < 0 || *d1 < 0 || *d0 >= n || *d1 >= n) return false;
    for (int64_t k = 0; k < n; ++k) {
      int64_t from = k == *d0 ? *d1 : k == *d1 ? *d0 : k;
      tie((*x)[static_cast<size_t>(from)], (*out)[static_cast<size_t>(k)]);
    }
    return true;
  }
  bool permute() {
    const Occs *x = child(0), *out = result();
    const auto* p = listAttr(0);
    if (!x || !out || !p || p->size() != out->size() || x->size() != out->size()) return false;
    for (size_t k = 0; k < p->size(); ++k) {
      if ((*p)[k] < 0 || (*p)[k] >= static_cast<int64_t>(x->size())) return false;
      tie((*x)[static_cast<size_t>((*p)[k])], (*out)[k]);
    }
    return true;
  }
  // Groups of dims with equal products, aligned from the left; a one-dim group on both sides is one dim.
  bool reshape() {
    const Occs *x = child(0), *out = result();
    if (!x || !out) return false;
    shapeAttr(0, *out);
    for (const Occs* s : {x, out})
      for (int d : *s)
        if (dc.value(d) <= 0) return true;  // symbolic or empty: the size facts say nothing either
    size_t i = 0, j = 0;
    while (i < x->size() && j < out->size()) {
      size_t gi = i, gj = j;
      __int128 pa = dc.value((*x)[i++]), pb = dc.value((*out)[j++]);
      while (pa != pb) {
        if (pa < pb && i < x->size()) pa *= dc.value((*x)[i++]);
        else if (pb < pa && j < out->size()) pb *= dc.value((*out)[j++]);
        else return true;
      }
      if (i - gi == 1 && j - gj == 1) tie((*x)[gi], (*out)[gj]);
    }
    return true;
  }
  // mm [m, k] [k, n]; bmm and matmul [..., m, k] [..., k, n] -> [..., m, n], batch dims broadcast.
  bool product() {
    const Occs *a = child(0), *b = child(1), *out = result();
    if (!a || !b || !out || a->size() < 2 || b->size() < 2 || out->size() < 2) return false;
    auto last = [](const Occs& s, size_t k) { return s[s.size() - k]; };
    tie(last(*a, 2), last(*out, 2));
    tie(last(*a, 1), last(*b, 2));
    tie(last(*b, 1), last(*out, 1));
    Occs ab(a->begin(), a->end() - 2), bb(b->begin(), b->end() - 2), ob(out->begin(), out->end() - 2);
    right(ab, ob);
    right(bb, ob);
    return true;
  }
  // sum_dim / mean_dim / amax [dims, keepdim]: the kept dims in order ([] = every dim reduced).
  bool reduce() {
    const Occs *x = child(0), *out = result();
    const auto* dims = listAttr(0);
    auto keep = eg::attrBool(o.attrs, 1);
    if (!x || !out || !dims || !keep) return false;
    auto n = static_cast<int64_t>(x->size());
    std::vector<char> reduced(x->size(), dims->empty() ? 1 : 0);
    for (int64_t d : *dims) {
      int64_t k = d < 0 ? d + n : d;
      if (k < 0 || k >= n) return false;
      reduced[static_cast<size_t>(k)] = 1;
    }
    size_t j = 0;
    for (size_t k = 0; k < x->size(); ++k) {
      if (reduced[k] && !*keep) continue;
      if (j >= out->size()) return false;
      if (!reduced[k]) tie((*x)[k], (*out)[j]);
      ++j;
    }
    return true;
  }
  // layer norms (x, w, b) -> (y, mean, rstd): y is x, w and b broadcast; native stats keep the
  // leading dims, apex flattens them (class_sizes.cpp's product fact).
  bool layerNorm() {
    const Occs* x = child(0);
    if (!x || o.result.empty()) return false;
    const Occs& y = o.result[0];
    right(*x, y);
    for (size_t i = 1; i < o.children.size(); ++i)
      if (const Occs* c = child(i)) right(*c, y);
    if (!o.attrOccs.empty()) {
      Occs norm = o.attrOccs[0];
      right(norm, y);
    }
    const auto* ns = listAttr(0);
    if (o.op == ops::syms().layerNorm && ns && ns->size() <= x->size())
      for (size_t s = 1; s < o.result.size(); ++s)
        for (size_t k = 0; k + ns->size() < x->size() && k < o.result[s].size(); ++k) tie((*x)[k], o.result[s][k]);
    return true;
  }
};

}  // namespace

bool tieByPosition(DimClasses& dc, const OpOccs& o) {
  const ops::OpDef* def = ops::find(o.op);
  if (!def) return false;
  namespace d = ops::detail;
  const ops::Syms& s = ops::syms();
  Ties t{dc, o};
  auto rule = def->type;
  if (rule == d::inferUnary || rule == d::inferBinary || rule == d::inferCompare || rule == d::inferWhere ||
      rule == d::inferCast || rule == d::inferSum || rule == d::inferCrossRank || rule == d::inferDropout ||
      rule == d::inferGeluBackward || rule == d::inferSoftmax || rule == d::inferCumsum || rule == d::inferTril ||
      rule == d::inferRmsNorm)
    return t.elementwise();
  if (o.op == s.expand) return t.expand();
  if (o.op == s.transpose) return t.transpose();
  if (o.op == s.permute) return t.permute();
  if (o.op == s.reshape) return t.reshape();
  if (o.op == s.mm || o.op == s.bmm || o.op == s.matmul) return t.product();
  if (o.op == s.sumDim || o.op == s.meanDim || o.op == s.amax) return t.reduce();
  if (rule == d::inferLayerNorm) return t.layerNorm();
  return false;
}

}  // namespace tangle::replay::detail
