// Type inference of the model-level ops that tensor-parallel code wraps:
// dropout, comparisons and masks, and index lookups.
#include "ops/infer.h"

namespace tangle::ops::detail {

// dropout[p, train] x -> (out like x, keep-mask bool like x)
Data inferDropout(const eg::EGraph& g, const eg::ENode& n) {
  const TensorType* x = childTensor(g, n, 0);
  if (!x || n.children.size() != 1) return std::nullopt;
  eg::ClassData d;
  d.tuple = true;
  d.types = {*x, TensorType{DType::Bool, x->shape}};
  return d;
}

Data inferPairOfInput(const eg::EGraph& g, const eg::ENode& n) {
  const TensorType* x = childTensor(g, n, 0);
  if (!x || n.children.size() != 1 || !isFloating(x->dtype)) return std::nullopt;
  eg::ClassData d;
  d.tuple = true;
  d.types = {*x, *x};
  return d;
}

// where(cond, a, b): a where cond, else b; all three broadcast. The dtype is
// that of the tensor operand(s) among a, b (0-d constants do not decide it).
Data inferWhere(const eg::EGraph& g, const eg::ENode& n) {
  if (n.children.size() != 3) return std::nullopt;
  const TensorType *c = childTensor(g, n, 0), *a = childTensor(g, n, 1), *b = childTensor(g, n, 2);
  if (!c || !a || !b) return std::nullopt;
  auto ab = broadcastShapes(g.symbols(), a->shape, b->shape);
  if (!ab) return std::nullopt;
  auto shape = broadcastShapes(g.symbols(), c->shape, *ab);
  if (!shape) return std::nullopt;
  bool weakA = g.data(n.children[1]).constant && a->shape.empty();
  bool weakB = g.data(n.children[2]).constant && b->shape.empty();
  DType dt = weakA && !weakB ? b->dtype : weakB && !weakA ? a->dtype : promote(a->dtype, b->dtype);
  return tensorData(dt, std::move(*shape));
}

// lt/le/gt/ge/eq/ne and or/and: broadcasting, boolean result.
Data inferCompare(const eg::EGraph& g, const eg::ENode& n) {
  const TensorType *a = childTensor(g, n, 0), *b = childTensor(g, n, 1);
  if (!a || !b || n.children.size() != 2) return std::nullopt;
  auto shape = broadcastShapes(g.symbols(), a->shape, b->shape);
  if (!shape) return std::nullopt;
  return tensorData(DType::Bool, std::move(*shape));
}

// index_rows(w, idx) = w[idx]: idx.shape + w.shape[1:].
Data inferIndexRows(const eg::EGraph& g, const eg::ENode& n) {
  const TensorType *w = childTensor(g, n, 0), *idx = childTensor(g, n, 1);
  if (!w || !idx || n.children.size() != 2 || w->rank() < 1) return std::nullopt;
  Shape s = idx->shape;
  s.insert(s.end(), w->shape.begin() + 1, w->shape.end());
  return tensorData(w->dtype, std::move(s));
}

// one_hot[C](idx): an integral idx [...] -> i64 [..., C].
Data inferOneHot(const eg::EGraph& g, const eg::ENode& n) {
  const TensorType* idx = childTensor(g, n, 0);
  auto classes = attrInt(eg::attrs(n.attrs), 0);
  if (!idx || n.children.size() != 1 || eg::attrs(n.attrs).size() != 1 || !classes || *classes < 1) return std::nullopt;
  if (isFloating(idx->dtype)) return std::nullopt;
  Shape s = idx->shape;
  s.push_back(*classes);
  return tensorData(DType::I64, std::move(s));
}

// gather_rows(x, idx) = x[arange(N), idx]: x [N, V], idx [N] -> [N].
Data inferGatherRows(const eg::EGraph& g, const eg::ENode& n) {
  const TensorType *x = childTensor(g, n, 0), *idx = childTensor(g, n, 1);
  if (!x || !idx || n.children.size() != 2 || x->rank() != 2 || idx->rank() != 1 || idx->shape[0] != x->shape[0])
    return std::nullopt;
  return tensorData(x->dtype, {x->shape[0]});
}

// max_dim[d, keep] x -> (values, indices).
Data inferMaxDim(const eg::EGraph& g, const eg::ENode& n) {
  const TensorType* x = childTensor(g, n, 0);
  const auto& a = eg::attrs(n.attrs);
  auto d = attrInt(a, 0);
  if (!x || n.children.size() != 1 || a.size() != 2 || !d || *d < 0 || *d >= x->rank()) return std::nullopt;
  Shape s = x->shape;
  if (a[1].i) s[*d] = 1;
  else s.erase(s.begin() + *d);
  eg::ClassData out;
  out.tuple = true;
  out.types = {TensorType{x->dtype, s}, TensorType{DType::I64, s}};
  return out;
}

// rmax/rmin x1..xn: elementwise max/min of same-shape tensors (all_reduce max/min).
Data inferCrossRank(const eg::EGraph& g, const eg::ENode& n) {
  if (n.children.empty() || !eg::attrs(n.attrs).empty()) return std::nullopt;
  const TensorType* first = childTensor(g, n, 0);
  if (!first) return std::nullopt;
  for (size_t i = 1; i < n.children.size(); ++i) {
    const TensorType* t = childTensor(g, n, i);
    if (!t || t->shape != first->shape) return std::nullopt;
  }
  return tensorData(first->dtype, first->shape);
}

// gelu_backward[approx](grad, x): elementwise, broadcasting like a binary op.
Data inferGeluBackward(const eg::EGraph& g, const eg::ENode& n) {
  const TensorType *gr = childTensor(g, n, 0), *x = childTensor(g, n, 1);
  if (!gr || !x || n.children.size() != 2) return std::nullopt;
  auto shape = broadcastShapes(g.symbols(), gr->shape, x->shape);
  if (!shape) return std::nullopt;
  return tensorData(gr->dtype, std::move(*shape));
}

// apex_layer_norm_bwd[[ns], eps](grad, mean, invvar, x, w, b) -> (dx like x, dw like w, db like b)
Data inferApexLayerNormBwd(const eg::EGraph& g, const eg::ENode& n) {
  if (n.children.size() != 6) return std::nullopt;
  const TensorType *gr = childTensor(g, n, 0), *x = childTensor(g, n, 3), *w = childTensor(g, n, 4),
                   *b = childTensor(g, n, 5);
  if (!gr || !x || !w || !b || gr->shape != x->shape) return std::nullopt;
  eg::ClassData d;
  d.tuple = true;
  d.types = {*x, *w, *b};
  return d;
}

// rms_norm[eps](x, w): x / sqrt(mean(x^2 over the last dim) + eps) * w, w of the last dim's size.
Data inferRmsNorm(const eg::EGraph& g, const eg::ENode& n) {
  const TensorType *x = childTensor(g, n, 0), *w = childTensor(g, n, 1);
  if (!x || !w || n.children.size() != 2 || x->rank() < 1 || eg::attrs(n.attrs).size() != 1) return std::nullopt;
  if (w->shape != Shape{x->shape.back()}) return std::nullopt;
  return tensorData(x->dtype, x->shape);
}

// rotary[head_size, neox](positions [T], x [T, H*head_size], cos_sin_cache [P, rot]) -> like x
Data inferRotary(const eg::EGraph& g, const eg::ENode& n) {
  const TensorType *pos = childTensor(g, n, 0), *x = childTensor(g, n, 1), *cache = childTensor(g, n, 2);
  const auto& a = eg::attrs(n.attrs);
  auto hs = attrInt(a, 0);
  if (!pos || !x || !cache || n.children.size() != 3 || a.size() != 2 || !hs || *hs <= 0) return std::nullopt;
  if (pos->rank() != 1 || x->rank() != 2 || cache->rank() != 2 || x->shape[0] != pos->shape[0]) return std::nullopt;
  if (x->shape[1] < 0 || x->shape[1] % *hs != 0 || cache->shape[1] > *hs || cache->shape[1] % 2) return std::nullopt;
  return tensorData(x->dtype, x->shape);
}

// attention[layer](q [T, Hq, D], k [T, Hkv, D], v [T, Hkv, D]) -> [T, Hq, D], Hq a multiple of Hkv.
Data inferAttention(const eg::EGraph& g, const eg::ENode& n) {
  const TensorType *q = childTensor(g, n, 0), *k = childTensor(g, n, 1), *v = childTensor(g, n, 2);
  if (!q || !k || !v || n.children.size() != 3 || q->rank() != 3 || k->shape != v->shape || k->rank() != 3)
    return std::nullopt;
  if (q->shape[0] != k->shape[0] || q->shape[2] != k->shape[2] || k->shape[1] <= 0 || q->shape[1] % k->shape[1])
    return std::nullopt;
  return tensorData(q->dtype, q->shape);
}

}  // namespace tangle::ops::detail
