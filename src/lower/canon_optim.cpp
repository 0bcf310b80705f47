// Canonical forms, in the elementwise vocabulary, of the calls that optimizer
// steps (torch.optim's AdamW: lerp, fma, reciprocal, pow with a scalar base,
// addcdiv, addcmul) and FSDP's padding (constant_pad_nd) add (ones_like and the
// other constant-like calls are in canon_grad.cpp). Each form is exact for every input; so the elementwise
// lemmas (elementwise ops commute with slice/concat) cover them. Anything
// outside these forms (a dtype change, symbolic sizes) stays opaque.
#include "lower/canon_optim.h"

#include <cmath>

#include "lower/canon_model.h"

namespace tangle {

namespace {

using Ref = CanonTerm::Ref;
using eg::Attr;
using canon::argAt;
using canon::emit;
using canon::numberAt;
using canon::operand;
using canon::scalar;
using canon::tensorAt;
using canon::typeAt;

bool isNone(const Value* v) { return !v || std::holds_alternative<NoneValue>(v->v); }

// A tensor or a number argument as a term operand.
std::optional<Ref> tensorOrNumber(const Node& n, size_t i, const char* kw) {
  if (auto t = tensorAt(n, i, kw)) return operand(*t);
  if (auto v = numberAt(n, i, kw)) return scalar(*v);
  return std::nullopt;
}

// lerp(a, b, w) = a + w * (b - a)
bool lerp(const Node& n, CanonTerm& out) {
  auto a = tensorAt(n, 0, "self"), b = tensorAt(n, 1, "end");
  auto w = tensorOrNumber(n, 2, "weight");
  if (!a || !b || !w) return false;
  Ref d = emit(out, "sub", {}, {operand(*b), operand(*a)});
  emit(out, "add", {}, {operand(*a), emit(out, "mul", {}, {*w, d})});
  return true;
}

// prims.fma(a, b, c) = a * b + c
bool fma(const Node& n, CanonTerm& out) {
  auto a = tensorOrNumber(n, 0, "a"), b = tensorOrNumber(n, 1, "b"), c = tensorOrNumber(n, 2, "c");
  if (!a || !b || !c) return false;
  emit(out, "add", {}, {emit(out, "mul", {}, {*a, *b}), *c});
  return true;
}

// reciprocal(x) = 1 / x
bool reciprocal(const Node& n, CanonTerm& out) {
  auto x = tensorAt(n, 0, "self");
  if (!x) return false;
  emit(out, "div", {}, {scalar(1), operand(*x)});
  return true;
}

// pow(b, t) with a number base b > 0 = exp(t * log b)
bool powScalarBase(const Node& n, CanonTerm& out) {
  auto b = numberAt(n, 0, "self");
  auto t = tensorAt(n, 1, "exponent");
  if (!b || !t || !(*b > 0)) return false;
  emit(out, "exp", {}, {emit(out, "mul", {}, {operand(*t), scalar(std::log(*b))})});
  return true;
}

// addcdiv(x, a, b, value) = x + value * (a / b); addcmul the same with a * b.
bool addc(const Node& n, const char* op, CanonTerm& out) {
  auto x = tensorAt(n, 0, "self"), a = tensorAt(n, 1, "tensor1"), b = tensorAt(n, 2, "tensor2");
  if (!x || !a || !b) return false;
  const Value* vv = argAt(n, 3, "value");
  auto v = isNone(vv) ? std::optional<double>(1.0) : numberAt(n, 3, "value");
  if (!v) return false;
  Ref q = emit(out, op, {}, {operand(*a), operand(*b)});
  emit(out, "add", {}, {operand(*x), *v == 1.0 ? q : emit(out, "mul", {}, {scalar(*v), q})});
  return true;
}

// constant_pad_nd(x, pad, v): per padded dim (pad pairs from the last dim),
// concat[d](v expanded to the left width, x, v expanded to the right width);
// no padding at all is x itself (a reshape to its own shape). FSDP pads
// parameters and gradients this way when dim 0 does not divide by the ranks.
// Negative pads (cropping) and symbolic sizes stay opaque.
bool constantPad(const Graph& g, const Node& n, CanonTerm& out) {
  auto x = tensorAt(n, 0, "self");
  const TensorType* xt = x ? typeAt(g, *x) : nullptr;
  const Value* pv = argAt(n, 1, "pad");
  auto list = pv ? std::get_if<ValueList>(&pv->v) : nullptr;
  const Value* vv = argAt(n, 2, "value");
  auto value = isNone(vv) ? std::optional<double>(0.0) : numberAt(n, 2, "value");
  if (!xt || !list || !value || list->size() % 2 != 0 || static_cast<int64_t>(list->size() / 2) > xt->rank())
    return false;
  std::vector<int64_t> shape;
  for (Dim d : xt->shape) {
    if (isSymbolic(d)) return false;
    shape.push_back(d);
  }
  std::vector<int64_t> pads;
  for (const Value& v : *list) {
    auto p = std::get_if<int64_t>(&v.v);
    if (!p || *p < 0) return false;
    pads.push_back(*p);
  }
  Ref cur = operand(*x);
  bool padded = false;
  for (size_t i = 0; i < pads.size() / 2; ++i) {
    int64_t d = xt->rank() - 1 - static_cast<int64_t>(i);
    int64_t left = pads[2 * i], right = pads[2 * i + 1];
    if (left == 0 && right == 0) continue;
    std::vector<Ref> pieces;
    auto fill = [&](int64_t width) {
      std::vector<int64_t> s = shape;
      s[static_cast<size_t>(d)] = width;
      return canon::splat(out, s, *value, xt->dtype);
    };
    if (left > 0) pieces.push_back(fill(left));
    pieces.push_back(cur);
    if (right > 0) pieces.push_back(fill(right));
    cur = emit(out, "concat", {Attr::integer(d)}, std::move(pieces));
    shape[static_cast<size_t>(d)] += left + right;
    padded = true;
  }
  if (!padded) emit(out, "reshape", {Attr::ints(shape)}, {cur});
  return true;
}

}  // namespace

bool canonicalizeOptimOp(const Graph& g, NodeId id, std::string_view base, std::string_view overload, CanonTerm& out) {
  const Node& n = g.node(id);
  if (base == "aten.lerp" && (overload == "Scalar" || overload == "Tensor")) return lerp(n, out);
  if (base == "prims.fma" && overload == "default") return fma(n, out);
  if (base == "aten.reciprocal" && overload == "default") return reciprocal(n, out);
  if (base == "aten.pow" && overload == "Scalar") return powScalarBase(n, out);
  if (base == "aten.addcdiv" && overload == "default") return addc(n, "div", out);
  if (base == "aten.addcmul" && overload == "default") return addc(n, "mul", out);
  if (base == "aten.constant_pad_nd" && overload == "default") return constantPad(g, n, out);
  return false;
}

}  // namespace tangle
