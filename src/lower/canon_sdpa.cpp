// ATen's scaled-dot-product attention calls -> sdpa / sdpa_backward (src/ops):
//   _scaled_dot_product_flash_attention_for_cpu(q, k, v, dropout_p, is_causal, *, attn_mask, scale)
//   _scaled_dot_product_flash_attention_for_cpu_backward(dO, q, k, v, out, lse, dropout_p, is_causal,
//                                                          *, attn_mask, scale)
// An absent mask is the 0-d constant 0 (adding it changes nothing) and an
// absent scale is 1/sqrt(head size), so every call has one canonical form.
// Dropout draws random numbers no graph records: such calls are refused.
#include <cmath>

#include "lower/canon_model.h"
#include "support/error.h"

namespace tangle {

namespace {

using eg::Attr;
using canon::emit;
using canon::operand;
using canon::scalar;

const Value* argAt(const Node& n, size_t i, const char* kw) {
  if (i < n.args.size()) return &n.args[i];
  return kw ? n.kwarg(kw) : nullptr;
}
bool absent(const Value* v) { return !v || std::holds_alternative<NoneValue>(v->v); }
std::optional<NodeId> tensorAt(const Node& n, size_t i, const char* kw) {
  const Value* v = argAt(n, i, kw);
  if (auto t = v ? std::get_if<TensorRef>(&v->v) : nullptr) return t->node;
  return std::nullopt;
}
std::optional<double> numberOf(const Value* v) {
  if (!v) return std::nullopt;
  if (auto p = std::get_if<double>(&v->v)) return *p;
  if (auto p = std::get_if<int64_t>(&v->v)) return static_cast<double>(*p);
  if (auto p = std::get_if<bool>(&v->v)) return *p ? 1.0 : 0.0;
  return std::nullopt;
}

// Lowers the call whose tensor operands come first (`tensors` of them, the
// query at `qAt`), then dropout_p and is_causal, then the keyword-only mask and scale.
bool lowerSdpa(const Graph& g, const Node& n, const char* op, size_t tensors, size_t qAt, CanonTerm& out) {
  auto fail = [&](const std::string& what) { throw InputError(n.loc, "node '" + n.name + "' (" + n.op + "): " + what); };
  std::vector<CanonTerm::Ref> kids;
  for (size_t i = 0; i < tensors; ++i) {
    auto t = tensorAt(n, i, nullptr);
    if (!t) fail("operand " + std::to_string(i) + " must be a tensor");
    kids.push_back(operand(*t));
  }
  const Value* p = argAt(n, tensors, "dropout_p");
  if (!absent(p) && numberOf(p) != 0.0) fail("dropout_p must be 0 (attention dropout draws unrecorded random numbers)");
  const Value* c = argAt(n, tensors + 1, "is_causal");
  bool causal = !absent(c) && numberOf(c).value_or(0) != 0;
  const Value* m = n.kwarg("attn_mask");
  if (absent(m)) {
    kids.push_back(scalar(0));
  } else {
    auto t = std::get_if<TensorRef>(&m->v);
    if (!t) fail("attn_mask must be a tensor");
    const Node& mn = g.node(t->node);
    if (mn.type && mn.type->dtype == DType::Bool) return false;  // ATen refuses it; keep the call opaque
    kids.push_back(operand(t->node));
  }
  std::optional<double> scale = numberOf(n.kwarg("scale"));
  if (!scale) {
    const Node& q = g.node(kids[qAt].operand);
    if (!q.type || q.type->rank() != 4 || isSymbolic(q.type->shape[3]) || q.type->shape[3] <= 0) return false;
    scale = 1 / std::sqrt(static_cast<double>(q.type->shape[3]));
  }
  emit(out, op, {Attr::boolean(causal), Attr::real(*scale)}, std::move(kids));
  return true;
}

}  // namespace

bool canonicalizeSdpa(const Graph& g, NodeId id, std::string_view base, std::string_view overload, CanonTerm& out) {
  if (overload != "default") return false;
  const Node& n = g.node(id);
  if (base == "aten._scaled_dot_product_flash_attention_for_cpu") return lowerSdpa(g, n, "sdpa", 3, 0, out);
  if (base == "aten._scaled_dot_product_flash_attention_for_cpu_backward")
    return lowerSdpa(g, n, "sdpa_backward", 6, 1, out);
  return false;
}

}  // namespace tangle
