// Canonical forms of the indexing, masking and comparison calls that
// vocab-parallel embeddings and cross entropy are made of (see
// src/lemmas/vocab.cpp for the identities over them).
#include "lower/canon_model.h"

#include <algorithm>
#include <string_view>

#include "ops/ops.h"

namespace tangle {

namespace {

using Ref = CanonTerm::Ref;
using eg::Attr;

using canon::argAt;
using canon::numberAt;
using canon::tensorAt;
using canon::typeAt;
bool isIntegral(DType t) {
  return t == DType::I64 || t == DType::I32 || t == DType::I16 || t == DType::I8 || t == DType::U8;
}

using canon::emit;
using canon::operand;
using canon::scalar;

// Is node `id` arange(0, n) / arange(n) with unit step?
std::optional<int64_t> arangeLength(const Graph& g, NodeId id) {
  const Node& a = g.node(id);
  std::string_view op = a.op;
  auto intArg = [&](size_t i) -> std::optional<int64_t> {
    if (i >= a.args.size()) return std::nullopt;
    if (auto p = std::get_if<int64_t>(&a.args[i].v)) return *p;
    return std::nullopt;
  };
  if (op == "aten.arange.default" && a.args.size() == 1) return intArg(0);
  if (op == "aten.arange.start" && a.args.size() == 2 && intArg(0) == 0) return intArg(1);
  return std::nullopt;
}

// x[idx] (one integer index tensor over dim 0), or x[arange(N), idx] on a 2-D x.
bool index(const Graph& g, const Node& n, CanonTerm& out) {
  auto x = tensorAt(n, 0, "self");
  const Value* list = argAt(n, 1, "indices");
  auto l = list ? std::get_if<ValueList>(&list->v) : nullptr;
  if (!x || !l) return false;
  std::vector<NodeId> idx;
  for (const Value& v : *l) {
    auto t = std::get_if<TensorRef>(&v.v);
    if (!t) return false;  // None entries (advanced indexing of later dims): opaque
    idx.push_back(t->node);
  }
  const TensorType* xt = typeAt(g, *x);
  if (!xt) return false;
  auto integral = [&](NodeId i) { const TensorType* t = typeAt(g, i); return t && isIntegral(t->dtype); };
  if (idx.size() == 1 && integral(idx[0]) && xt->rank() >= 1) {
    emit(out, "index_rows", {}, {operand(*x), operand(idx[0])});
    return true;
  }
  if (idx.size() == 2 && xt->rank() == 2 && integral(idx[1])) {
    const TensorType* it = typeAt(g, idx[1]);
    auto len = arangeLength(g, idx[0]);
    if (len && it && it->rank() == 1 && *len == xt->shape[0] && it->shape[0] == *len) {
      emit(out, "gather_rows", {}, {operand(*x), operand(idx[1])});
      return true;
    }
  }
  return false;
}

// The node `id` if it is aten.<base>.<overload>.
const Node* callOf(const Graph& g, NodeId id, std::string_view op) {
  const Node& n = g.node(id);
  std::string_view o = n.op;
  if (o.rfind("torch.ops.", 0) == 0) o.remove_prefix(10);
  return o == op ? &n : nullptr;
}

// x[arange(N), j] -= u on a 2-D x [N, V], as traced: index_put(x, [arange(N), j],
// sub(index(x, [arange(N), j]), u)) (Megatron's cross entropy backward takes 1
// from each target's probability this way). Writes x - cast(one_hot[V](j)) * u[:, None]:
// x - u at each row's j, x - 0 elsewhere (u finite), for j in [0, V) (PyTorch raises
// otherwise, as gather_rows reads it). Rows of arange are distinct: no write collides.
bool subtractAt(const Graph& g, NodeId x, NodeId ar, NodeId j, NodeId v, CanonTerm& out) {
  const TensorType *xt = typeAt(g, x), *jt = typeAt(g, j);
  auto len = arangeLength(g, ar);
  if (!xt || !jt || xt->rank() != 2 || xt->shape[0] < 0 || xt->shape[1] < 1 || jt->rank() != 1 || !isIntegral(jt->dtype) ||
      jt->shape[0] != xt->shape[0] || len != xt->shape[0])
    return false;
  const Node* sub = callOf(g, v, "aten.sub.Tensor");
  if (!sub) return false;
  auto picked = tensorAt(*sub, 0, "self"), u = tensorAt(*sub, 1, "other");
  auto alpha = numberAt(*sub, 2, "alpha");
  const TensorType* ut = u ? typeAt(g, *u) : nullptr;
  const Node* idx = picked ? callOf(g, *picked, "aten.index.Tensor") : nullptr;
  if (!idx || !ut || (alpha && *alpha != 1) || ut->shape != std::vector<Dim>{xt->shape[0]}) return false;
  const Value* il = argAt(*idx, 1, "indices");
  auto ilist = il ? std::get_if<ValueList>(&il->v) : nullptr;
  if (tensorAt(*idx, 0, "self") != x || !ilist || ilist->size() != 2) return false;
  auto i0 = std::get_if<TensorRef>(&(*ilist)[0].v), i1 = std::get_if<TensorRef>(&(*ilist)[1].v);
  if (!i0 || !i1 || i1->node != j || arangeLength(g, i0->node) != xt->shape[0]) return false;
  Ref hot = emit(out, "cast", {Attr::str(dtypeName(xt->dtype))},
                 {emit(out, "one_hot", {Attr::integer(xt->shape[1])}, {operand(j)})});
  Ref column = emit(out, "reshape", {Attr::ints({xt->shape[0], 1})}, {operand(*u)});
  emit(out, "sub", {}, {operand(x), emit(out, "mul", {}, {hot, column})});
  return true;
}

// index_put(x, [mask], v) with one boolean mask over x's leading dims and a
// 0-d value: where(mask', v, x), mask' the mask with trailing unit dims.
// Also x[arange(N), j] -= u (subtractAt).
bool indexPut(const Graph& g, const Node& n, CanonTerm& out) {
  auto x = tensorAt(n, 0, "self");
  const Value* list = argAt(n, 1, "indices");
  auto l = list ? std::get_if<ValueList>(&list->v) : nullptr;
  auto v = tensorAt(n, 2, "values");
  const Value* acc = argAt(n, 3, "accumulate");
  if (acc && !(std::holds_alternative<bool>(acc->v) && !std::get<bool>(acc->v))) return false;
  if (x && l && v && l->size() == 2) {
    auto a = std::get_if<TensorRef>(&(*l)[0].v), j = std::get_if<TensorRef>(&(*l)[1].v);
    return a && j && subtractAt(g, *x, a->node, j->node, *v, out);
  }
  if (!x || !l || l->size() != 1 || !v) return false;
  auto m = std::get_if<TensorRef>(&(*l)[0].v);
  if (!m) return false;
  const TensorType *xt = typeAt(g, *x), *mt = typeAt(g, m->node), *vt = typeAt(g, *v);
  if (!xt || !mt || !vt || mt->dtype != DType::Bool || !vt->shape.empty() || mt->rank() > xt->rank()) return false;
  for (int64_t i = 0; i < mt->rank(); ++i)
    if (mt->shape[i] != xt->shape[i]) return false;
  Ref mask = operand(m->node);
  if (mt->rank() < xt->rank()) {
    std::vector<int64_t> s = mt->shape;
    s.resize(xt->shape.size(), 1);
    mask = emit(out, "reshape", {Attr::ints(s)}, {mask});
  }
  emit(out, "where", {}, {mask, operand(*v), operand(*x)});
  return true;
}

// Comparisons and boolean ops: lt/le/gt/ge/eq/ne(x, y), or/and(x, y).
bool compare(const Node& n, std::string_view op, CanonTerm& out) {
  auto x = tensorAt(n, 0, "self");
  if (!x) return false;
  Ref y;
  if (auto t = tensorAt(n, 1, "other")) y = operand(*t);
  else if (auto s = numberAt(n, 1, "other")) y = scalar(*s);
  else return false;
  emit(out, op, {}, {operand(*x), y});
  return true;
}

// slice_scatter(x, src, dim, start, end, 1) writes src over x[start:end] along
// dim: concat(x[:start], src, x[end:]) (the full range is src itself).
bool sliceScatter(const Graph& g, const Node& n, CanonTerm& out) {
  auto x = tensorAt(n, 0, "self"), src = tensorAt(n, 1, "src");
  if (!x || !src) return false;
  const TensorType *xt = typeAt(g, *x), *st = typeAt(g, *src);
  if (!xt || !st || xt->dtype != st->dtype || xt->rank() != st->rank() || xt->rank() == 0) return false;
  auto dim = numberAt(n, 2, "dim"), start = numberAt(n, 3, "start"), end = numberAt(n, 4, "end"),
       step = numberAt(n, 5, "step");
  if (step && *step != 1) return false;
  int64_t d = dim ? static_cast<int64_t>(*dim) : 0;
  if (d < 0) d += xt->rank();
  if (d < 0 || d >= xt->rank()) return false;
  int64_t size = xt->shape[d];
  if (size < 0) return false;
  auto clampIndex = [&](std::optional<double> v, int64_t dflt) {
    if (!v) return dflt;
    double i = *v < 0 ? *v + static_cast<double>(size) : *v;
    return static_cast<int64_t>(std::min(std::max(i, 0.0), static_cast<double>(size)));
  };
  int64_t s = clampIndex(start, 0), e = std::max(s, clampIndex(end, size));
  for (int64_t i = 0; i < xt->rank(); ++i)  // src must fill exactly the written range
    if (st->shape[i] != (i == d ? e - s : xt->shape[i])) return false;
  if (s == 0 && e == size) {
    out.aliasOf = *src;
    return true;
  }
  std::vector<Ref> pieces;
  if (s > 0) pieces.push_back(emit(out, "slice", {Attr::integer(d), Attr::integer(0), Attr::integer(s), Attr::integer(1)}, {operand(*x)}));
  pieces.push_back(operand(*src));
  if (e < size)
    pieces.push_back(emit(out, "slice", {Attr::integer(d), Attr::integer(e), Attr::integer(size), Attr::integer(1)}, {operand(*x)}));
  emit(out, "concat", {Attr::integer(d)}, std::move(pieces));
  return true;
}

}  // namespace

namespace canon {
const Value* argAt(const Node& n, size_t i, const char* kw) {
  if (i < n.args.size()) return &n.args[i];
  return kw ? n.kwarg(kw) : nullptr;
}
std::optional<NodeId> tensorAt(const Node& n, size_t i, const char* kw) {
  const Value* v = argAt(n, i, kw);
  if (auto t = v ? std::get_if<TensorRef>(&v->v) : nullptr) return t->node;
  return std::nullopt;
}
std::optional<double> numberAt(const Node& n, size_t i, const char* kw) {
  const Value* v = argAt(n, i, kw);
  if (!v) return std::nullopt;
  if (auto p = std::get_if<int64_t>(&v->v)) return static_cast<double>(*p);
  if (auto p = std::get_if<double>(&v->v)) return *p;
  if (auto p = std::get_if<bool>(&v->v)) return *p ? 1.0 : 0.0;
  return std::nullopt;
}
const TensorType* typeAt(const Graph& g, NodeId id) {
  const Node& n = g.node(id);
  return n.type ? &*n.type : nullptr;
}
Ref operand(NodeId id) {
  Ref r;
  r.kind = Ref::Kind::Operand;
  r.operand = id;
  return r;
}
Ref scalar(double v) {
  Ref r;
  r.kind = Ref::Kind::Scalar;
  r.scalar = v;
  return r;
}
Ref emit(CanonTerm& out, std::string_view op, eg::AttrList attrs, std::vector<Ref> kids) {
  out.nodes.push_back({eg::intern(op), std::move(attrs), std::move(kids)});
  Ref r;
  r.kind = Ref::Kind::Local;
  r.local = static_cast<int>(out.nodes.size()) - 1;
  return r;
}
Ref splat(CanonTerm& out, std::vector<int64_t> sizes, double v, DType dt) {
  Ref c = scalar(v);
  if (dt != DType::Unknown) c = emit(out, "cast", {eg::Attr::str(dtypeName(dt))}, {c});
  return emit(out, "expand", {eg::Attr::ints(std::move(sizes))}, {c});
}
}  // namespace canon

std::optional<CanonTerm> canonicalizeFunctionalized(const Graph& g, NodeId af, int64_t k) {
  const Node& n = g.node(af);
  std::string_view op = n.op;
  if (op != "higher_order.auto_functionalized" && op != "higher_order.auto_functionalized_v2") return std::nullopt;
  if (n.args.empty()) return std::nullopt;
  auto kernel = std::get_if<Symbol>(&n.args[0].v);
  if (!kernel) return std::nullopt;
  auto tensorKw = [&](const char* key) -> std::optional<NodeId> {
    const Value* v = n.kwarg(key);
    if (auto t = v ? std::get_if<TensorRef>(&v->v) : nullptr) return t->node;
    return std::nullopt;
  };
  auto numberKw = [&](const char* key) -> std::optional<double> {
    const Value* v = n.kwarg(key);
    if (!v) return std::nullopt;
    if (auto p = std::get_if<double>(&v->v)) return *p;
    if (auto p = std::get_if<int64_t>(&v->v)) return static_cast<double>(*p);
    return std::nullopt;
  };
  CanonTerm out;
  const std::string& name = kernel->text;
  if (name == "_C.rms_norm.default" && k == 1) {  // result = rms_norm(input) * weight
    auto x = tensorKw("input"), w = tensorKw("weight");
    auto eps = numberKw("epsilon");
    if (!x || !w || !eps) return std::nullopt;
    emit(out, "rms_norm", {Attr::real(*eps)}, {operand(*x), operand(*w)});
    return out;
  }
  if (name == "_C.fused_add_rms_norm.default" && (k == 1 || k == 2)) {
    // residual <- input + residual; input <- rms_norm(residual) * weight
    auto x = tensorKw("input"), r = tensorKw("residual"), w = tensorKw("weight");
    auto eps = numberKw("epsilon");
    if (!x || !r || !w || !eps) return std::nullopt;
    Ref sum = emit(out, "add", {}, {operand(*x), operand(*r)});
    if (k == 1) emit(out, "rms_norm", {Attr::real(*eps)}, {sum, operand(*w)});
    return out;
  }
  if (name == "_C.rotary_embedding.default" && (k == 1 || k == 2)) {  // query, key rotated in place
    auto pos = tensorKw("positions"), x = tensorKw(k == 1 ? "query" : "key"), cache = tensorKw("cos_sin_cache");
    auto hs = numberKw("head_size");
    const Value* neox = n.kwarg("is_neox");
    auto isNeox = neox ? std::get_if<bool>(&neox->v) : nullptr;
    if (!pos || !x || !cache || !hs || !isNeox) return std::nullopt;
    emit(out, "rotary", {Attr::integer(static_cast<int64_t>(*hs)), Attr::boolean(*isNeox)},
         {operand(*pos), operand(*x), operand(*cache)});
    return out;
  }
  if (name == "vllm.unified_attention_with_output.default" && k == 1) {  // output = attention(q, k, v)
    auto q = tensorKw("query"), key = tensorKw("key"), v = tensorKw("value");
    const Value* layer = n.kwarg("layer_name");
    auto layerName = layer ? std::get_if<std::string>(&layer->v) : nullptr;
    if (!q || !key || !v || !layerName) return std::nullopt;
    emit(out, "attention", {Attr::str(*layerName)}, {operand(*q), operand(*key), operand(*v)});
    return out;
  }
  if (name == "_C.silu_and_mul.default" && k == 1) {  // out = silu(x[..., :h]) * x[..., h:]
    auto x = tensorKw("input");
    const TensorType* t = x ? typeAt(g, *x) : nullptr;
    if (!t || t->rank() < 1 || t->shape.back() < 0 || t->shape.back() % 2) return std::nullopt;
    int64_t d = t->rank() - 1, h = t->shape.back() / 2;
    Ref a = emit(out, "slice", {Attr::integer(d), Attr::integer(0), Attr::integer(h), Attr::integer(1)}, {operand(*x)});
    Ref b = emit(out, "slice", {Attr::integer(d), Attr::integer(h), Attr::integer(2 * h), Attr::integer(1)}, {operand(*x)});
    Ref s = emit(out, "silu", {}, {a});
    emit(out, "mul", {}, {s, b});
    return out;
  }
  return std::nullopt;
}

// spmd_types.replicate_to_varying(x, world_size, dim, rank, stack=False): rank's
// piece of torch.chunk(x, world_size, dim), i.e. rows [r*c, min((r+1)*c, n)) of
// dim with c = ceil(n / world_size) (the backward of an all-gather to an
// invariant). The stacked form (a select) stays opaque.
bool replicateToVarying(const Graph& g, const Node& n, CanonTerm& out) {
  auto x = tensorAt(n, 0, "x");
  auto ws = numberAt(n, 1, "world_size"), dim = numberAt(n, 2, "split_dim"), rank = numberAt(n, 3, "rank");
  auto stack = numberAt(n, 4, "stack");
  const TensorType* xt = x ? typeAt(g, *x) : nullptr;
  if (!x || !ws || !dim || !rank || !stack || *stack != 0 || !xt || *ws < 1) return false;
  int64_t d = static_cast<int64_t>(*dim), w = static_cast<int64_t>(*ws), r = static_cast<int64_t>(*rank);
  if (d < 0) d += xt->rank();
  if (d < 0 || d >= xt->rank() || r < 0 || r >= w || isSymbolic(xt->shape[d])) return false;
  int64_t size = xt->shape[d], chunk = (size + w - 1) / w;
  int64_t s = std::min(r * chunk, size), e = std::min(s + chunk, size);
  emit(out, "slice", {Attr::integer(d), Attr::integer(s), Attr::integer(e), Attr::integer(1)}, {operand(*x)});
  return true;
}

// where(condition, self, other), each of self/other a tensor or a number
// (where.self, .ScalarSelf, .ScalarOther, .Scalar): broadcasting, as the op's own.
bool whereOp(const Node& n, CanonTerm& out) {
  auto c = tensorAt(n, 0, "condition");
  if (!c) return false;
  auto value = [&](size_t i, const char* name) -> std::optional<Ref> {
    if (auto t = tensorAt(n, i, name)) return operand(*t);
    if (auto v = numberAt(n, i, name)) return scalar(*v);
    return std::nullopt;
  };
  auto a = value(1, "self"), b = value(2, "other");
  if (!a || !b) return false;
  emit(out, "where", {}, {operand(*c), *a, *b});
  return true;
}

bool canonicalizeModelOp(const Graph& g, NodeId id, std::string_view base, std::string_view overload, CanonTerm& out) {
  const Node& n = g.node(id);
  if (base == "aten.index" && overload == "Tensor") return index(g, n, out);
  if (canonicalizeSdpa(g, id, base, overload, out)) return true;
  if (canonicalizeMoe(g, id, base, overload, out)) return true;
  if (base == "aten.index_put" && overload == "default") return indexPut(g, n, out);
  if (base == "aten.embedding" && overload == "default") {
    auto w = tensorAt(n, 0, "weight"), ids = tensorAt(n, 1, "indices");
    if (!w || !ids) return false;
    emit(out, "index_rows", {}, {operand(*w), operand(*ids)});
    return true;
  }
  if (base == "aten.where" && (overload == "self" || overload == "ScalarSelf" || overload == "ScalarOther" ||
                               overload == "Scalar"))
    return whereOp(n, out);
  if (base == "aten.masked_fill" && overload == "Scalar") {
    auto x = tensorAt(n, 0, "self"), m = tensorAt(n, 1, "mask");
    auto v = numberAt(n, 2, "value");
    if (!x || !m || !v) return false;
    emit(out, "where", {}, {operand(*m), scalar(*v), operand(*x)});
    return true;
  }
  static const std::pair<std::string_view, std::string_view> kCompare[] = {
      {"aten.lt", "lt"}, {"aten.le", "le"}, {"aten.gt", "gt"}, {"aten.ge", "ge"}, {"aten.eq", "eq"},
      {"aten.ne", "ne"}, {"aten.bitwise_or", "or"}, {"aten.bitwise_and", "and"}, {"aten.logical_or", "or"},
      {"aten.logical_and", "and"}};
  for (auto& [aten, op] : kCompare)
    if (base == aten && (overload == "Scalar" || overload == "Tensor" || overload == "default")) return compare(n, op, out);
  if (base == "aten.slice_scatter" && overload == "default") return sliceScatter(g, n, out);
  if (base == "spmd_types.replicate_to_varying" && overload == "default") return replicateToVarying(g, n, out);
  if (base == "aten.gelu_backward" && overload == "default") {
    auto gr = tensorAt(n, 0, "grad_output"), x = tensorAt(n, 1, "self");
    if (!gr || !x) return false;
    std::string approx = "none";
    if (const Value* a = argAt(n, 2, "approximate"))
      if (auto s = std::get_if<std::string>(&a->v)) approx = *s;
    emit(out, "gelu_backward", {Attr::str(approx)}, {operand(*gr), operand(*x)});
    return true;
  }
  // threshold_backward(grad, self, t) (relu's backward, self its output): the kernel's
  // `self <= t ? 0 : grad`, so a NaN self passes grad through as here
  if (base == "aten.threshold_backward" && overload == "default") {
    auto gr = tensorAt(n, 0, "grad_output"), x = tensorAt(n, 1, "self");
    auto t = numberAt(n, 2, "threshold");
    if (!gr || !x || !t) return false;
    emit(out, "where", {}, {emit(out, "le", {}, {operand(*x), scalar(*t)}), scalar(0), operand(*gr)});
    return true;
  }
  // apex.fused_layer_norm_affine_bwd(grad, mean, invvar, input, normalized_shape, weight, bias, eps)
  if (base == "apex.fused_layer_norm_affine_bwd" && overload == "default") {
    std::optional<NodeId> t[7] = {tensorAt(n, 0, "grad_output"), tensorAt(n, 1, "mean"), tensorAt(n, 2, "invvar"),
                                  tensorAt(n, 3, "input"), std::nullopt, tensorAt(n, 5, "weight"), tensorAt(n, 6, "bias")};
    const Value* ns = argAt(n, 4, "normalized_shape");
    auto list = ns ? std::get_if<ValueList>(&ns->v) : nullptr;
    auto eps = numberAt(n, 7, "eps");
    if (!list || !eps) return false;
    std::vector<int64_t> shape;
    for (const Value& v : *list) {
      auto p = std::get_if<int64_t>(&v.v);
      if (!p) return false;
      shape.push_back(*p);
    }
    std::vector<Ref> kids;
    for (int i : {0, 1, 2, 3, 5, 6}) {
      if (!t[i]) return false;
      kids.push_back(operand(*t[i]));
    }
    emit(out, "apex_layer_norm_bwd", {Attr::ints(shape), Attr::real(*eps)}, std::move(kids));
    return true;
  }
  if (base == "aten.max" && overload == "dim") {
    auto x = tensorAt(n, 0, "self");
    auto dim = numberAt(n, 1, "dim");
    const TensorType* xt = x ? typeAt(g, *x) : nullptr;
    if (!x || !dim || !xt) return false;
    int64_t d = static_cast<int64_t>(*dim);
    if (d < 0) d += xt->rank();
    if (d < 0 || d >= xt->rank()) return false;
    auto keep = numberAt(n, 2, "keepdim");
    emit(out, "max_dim", {Attr::integer(d), Attr::boolean(keep && *keep != 0)}, {operand(*x)});
    return true;
  }
  return false;
}

}  // namespace tangle
