// Type inference of the rearrangement ops (the clean ones) and tuples.
#include <algorithm>

#include "ops/infer.h"
#include "sym/context.h"

namespace tangle::ops::detail {

Data inferTensorLeaf(const eg::EGraph&, const eg::ENode& n) {
  if (!n.children.empty()) return std::nullopt;
  return eg::ClassData{};  // EGraph::leaf supplies the type
}

// slice[dim, start, end, step] x: 0 <= start <= end <= size, step >= 1.
// A bound may be a symbolic size (Attr kind SymDim); a symbolic slice needs
// step 1 and bounds provably in order.
Data inferSlice(const eg::EGraph& g, const eg::ENode& n) {
  const auto& a = eg::attrs(n.attrs);
  const TensorType* x = childTensor(g, n, 0);
  auto dim = attrInt(a, 0), start = attrDim(a, 1), end = attrDim(a, 2), step = attrInt(a, 3);
  if (!x || n.children.size() != 1 || a.size() != 4 || !dim || !start || !end || !step) return std::nullopt;
  if (*dim < 0 || *dim >= x->rank() || *step < 1) return std::nullopt;
  Dim size = x->shape[*dim];
  Shape out = x->shape;
  if (isSymbolic(size) || isSymbolic(*start) || isSymbolic(*end)) {
    auto len = sym::dimSub(g.symbols(), *end, *start);  // proves start <= end
    if (*step != 1 || !len || !sym::dimLE(g.symbols(), 0, *start) || !sym::dimLE(g.symbols(), *end, size))
      return std::nullopt;
    out[*dim] = *len;
    return tensorData(x->dtype, std::move(out), childConstant(g, n, 0));
  }
  if (*end < *start || *end > size) return std::nullopt;
  out[*dim] = (*end - *start + *step - 1) / *step;
  return tensorData(x->dtype, std::move(out), childConstant(g, n, 0));
}

// concat[dim] x1 ... xn: equal ranks, equal dims except `dim`.
Data inferConcat(const eg::EGraph& g, const eg::ENode& n) {
  const auto& a = eg::attrs(n.attrs);
  auto dim = attrInt(a, 0);
  if (n.children.empty() || a.size() != 1 || !dim) return std::nullopt;
  const TensorType* first = childTensor(g, n, 0);
  if (!first || *dim < 0 || *dim >= first->rank()) return std::nullopt;
  Shape out = first->shape;
  DType dt = first->dtype;
  std::optional<double> c = childConstant(g, n, 0);
  for (size_t i = 1; i < n.children.size(); ++i) {
    const TensorType* t = childTensor(g, n, i);
    if (!t || t->rank() != first->rank()) return std::nullopt;
    if (t->dtype != dt && t->dtype != DType::Unknown && dt != DType::Unknown) return std::nullopt;
    if (dt == DType::Unknown) dt = t->dtype;
    for (int64_t d = 0; d < t->rank(); ++d) {
      if (d == *dim) continue;
      if (!sym::dimEqual(g.symbols(), t->shape[d], out[d])) return std::nullopt;
    }
    out[*dim] = *sym::dimAdd(g.symbols(), out[*dim], t->shape[*dim]);
    if (c != childConstant(g, n, i)) c.reset();
  }
  return tensorData(dt, std::move(out), c);
}

Data inferTranspose(const eg::EGraph& g, const eg::ENode& n) {
  const auto& a = eg::attrs(n.attrs);
  const TensorType* x = childTensor(g, n, 0);
  auto d0 = attrInt(a, 0), d1 = attrInt(a, 1);
  if (!x || n.children.size() != 1 || a.size() != 2 || !d0 || !d1) return std::nullopt;
  if (*d0 < 0 || *d1 < 0 || *d0 >= x->rank() || *d1 >= x->rank()) return std::nullopt;
  Shape out = x->shape;
  std::swap(out[*d0], out[*d1]);
  return tensorData(x->dtype, std::move(out), childConstant(g, n, 0));
}

// permute[[p]] x: out.shape[i] = x.shape[p[i]].
Data inferPermute(const eg::EGraph& g, const eg::ENode& n) {
  const auto& a = eg::attrs(n.attrs);
  const TensorType* x = childTensor(g, n, 0);
  const auto* p = attrInts(a, 0);
  if (!x || n.children.size() != 1 || a.size() != 1 || !p) return std::nullopt;
  if (static_cast<int64_t>(p->size()) != x->rank()) return std::nullopt;
  std::vector<bool> seen(p->size(), false);
  Shape out(p->size());
  for (size_t i = 0; i < p->size(); ++i) {
    int64_t d = (*p)[i];
    if (d < 0 || d >= x->rank() || seen[d]) return std::nullopt;
    seen[d] = true;
    out[i] = x->shape[d];
  }
  return tensorData(x->dtype, std::move(out), childConstant(g, n, 0));
}

Data inferReshape(const eg::EGraph& g, const eg::ENode& n) {
  const auto& a = eg::attrs(n.attrs);
  const TensorType* x = childTensor(g, n, 0);
  const auto* s = attrInts(a, 0);
  if (!x || n.children.size() != 1 || a.size() != 1 || !s) return std::nullopt;
  if (!sameNumel(g.symbols(), x->shape, *s)) return std::nullopt;
  return tensorData(x->dtype, *s, childConstant(g, n, 0));
}

// expand[[sizes]] x: broadcast x (aligned right) to `sizes` (fully resolved).
Data inferExpand(const eg::EGraph& g, const eg::ENode& n) {
  const auto& a = eg::attrs(n.attrs);
  const TensorType* x = childTensor(g, n, 0);
  const auto* s = attrInts(a, 0);
  if (!x || n.children.size() != 1 || a.size() != 1 || !s) return std::nullopt;
  if (s->size() < x->shape.size()) return std::nullopt;
  size_t lead = s->size() - x->shape.size();
  for (size_t i = 0; i < x->shape.size(); ++i) {
    Dim from = x->shape[i], to = (*s)[lead + i];
    if (from != to && from != 1) return std::nullopt;
  }
  return tensorData(x->dtype, *s, childConstant(g, n, 0));
}

// sum x1 ... xn: elementwise sum of same-typed tensors.
Data inferSum(const eg::EGraph& g, const eg::ENode& n) {
  if (n.children.empty() || !eg::attrs(n.attrs).empty()) return std::nullopt;
  const TensorType* first = childTensor(g, n, 0);
  if (!first) return std::nullopt;
  DType dt = first->dtype;
  std::optional<double> c = childConstant(g, n, 0);
  double total = c.value_or(0);
  for (size_t i = 1; i < n.children.size(); ++i) {
    const TensorType* t = childTensor(g, n, i);
    if (!t || t->shape != first->shape) return std::nullopt;
    if (t->dtype != dt && t->dtype != DType::Unknown && dt != DType::Unknown) return std::nullopt;
    if (dt == DType::Unknown) dt = t->dtype;
    auto ci = childConstant(g, n, i);
    if (c && ci) total += *ci;
    else c.reset();
  }
  if (c) c = total;
  return tensorData(dt, first->shape, c);
}

Data inferGetitem(const eg::EGraph& g, const eg::ENode& n) {
  const auto& a = eg::attrs(n.attrs);
  auto i = attrInt(a, 0);
  if (n.children.size() != 1 || a.size() != 1 || !i) return std::nullopt;
  const eg::ClassData& t = g.data(n.children[0]);
  if (!t.tuple || *i < 0 || *i >= static_cast<int64_t>(t.types.size())) return std::nullopt;
  return tensorData(t.types[*i].dtype, t.types[*i].shape);
}

// split[dim, [sizes]] x: the tuple of consecutive slices of the given sizes.
Data inferSplit(const eg::EGraph& g, const eg::ENode& n) {
  const auto& a = eg::attrs(n.attrs);
  const TensorType* x = childTensor(g, n, 0);
  auto dim = attrInt(a, 0);
  const auto* sizes = attrInts(a, 1);
  if (!x || n.children.size() != 1 || a.size() != 2 || !dim || !sizes || sizes->empty()) return std::nullopt;
  if (*dim < 0 || *dim >= x->rank() || isSymbolic(x->shape[*dim])) return std::nullopt;
  int64_t total = 0;
  eg::ClassData out;
  out.tuple = true;
  for (int64_t s : *sizes) {
    if (s < 0) return std::nullopt;
    total += s;
    TensorType t = *x;
    t.shape[*dim] = s;
    out.types.push_back(std::move(t));
  }
  if (total != x->shape[*dim]) return std::nullopt;
  return out;
}

}  // namespace tangle::ops::detail
