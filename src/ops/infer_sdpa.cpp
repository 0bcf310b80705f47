// Type rules of scaled-dot-product attention (the CPU flash-attention op and
// its backward), see interp/sdpa.cpp for the semantics.
#include "ops/infer.h"

namespace tangle::ops::detail {

namespace {

// q [B, Hq, L, E], k and v [B, Hkv, S, E] with Hkv dividing Hq (grouped-query
// heads), mask broadcasting to [B, Hq, L, S]; attrs causal:bool scale:number.
bool sdpaOperands(const eg::EGraph& g, const eg::ENode& n, size_t q0) {
  const TensorType *q = childTensor(g, n, q0), *k = childTensor(g, n, q0 + 1), *v = childTensor(g, n, q0 + 2),
                   *m = childTensor(g, n, n.children.size() - 1);
  const auto& a = eg::attrs(n.attrs);
  if (!q || !k || !v || !m || a.size() != 2 || !attrBool(a, 0) || !attrNumber(a, 1)) return false;
  if (q->rank() != 4 || k->rank() != 4 || k->shape != v->shape || q->dtype != k->dtype || q->dtype != v->dtype)
    return false;
  if (q->shape[0] != k->shape[0] || q->shape[3] != k->shape[3] || k->shape[1] <= 0 || q->shape[1] < 0 ||
      q->shape[1] % k->shape[1])
    return false;
  if (m->rank() > 4) return false;
  Shape scores = {q->shape[0], q->shape[1], q->shape[2], k->shape[2]};
  auto b = broadcastShapes(g.symbols(), m->shape, scores);
  return b && *b == scores;
}

// The log-sum-exp is kept in f32 for reduced-precision inputs.
DType statsType(DType t) { return t == DType::F16 || t == DType::BF16 ? DType::F32 : t; }

}  // namespace

// sdpa[causal, scale](q, k, v, mask) -> (out [B, Hq, L, E], logsumexp [B, Hq, L])
Data inferSdpa(const eg::EGraph& g, const eg::ENode& n) {
  if (n.children.size() != 4 || !sdpaOperands(g, n, 0)) return std::nullopt;
  const TensorType* q = childTensor(g, n, 0);
  eg::ClassData d;
  d.tuple = true;
  d.types = {*q, TensorType{statsType(q->dtype), {q->shape[0], q->shape[1], q->shape[2]}}};
  return d;
}

// sdpa_backward[causal, scale](grad_out, q, k, v, out, logsumexp, mask) -> (dq, dk, dv)
Data inferSdpaBackward(const eg::EGraph& g, const eg::ENode& n) {
  if (n.children.size() != 7 || !sdpaOperands(g, n, 1)) return std::nullopt;
  const TensorType *go = childTensor(g, n, 0), *q = childTensor(g, n, 1), *k = childTensor(g, n, 2),
                   *v = childTensor(g, n, 3), *o = childTensor(g, n, 4), *lse = childTensor(g, n, 5);
  if (!go || !o || !lse || go->shape != q->shape || o->shape != q->shape) return std::nullopt;
  if (lse->shape != Shape{q->shape[0], q->shape[1], q->shape[2]}) return std::nullopt;
  eg::ClassData d;
  d.tuple = true;
  d.types = {*q, *k, *v};
  return d;
}

}  // namespace tangle::ops::detail
