// HF's attention-mask construction (transformers/masking_utils.py): positions
// from arange, packed-sequence ids from cumsum, and x[i, j] with broadcast index
// tensors. Lowered to ops with reference kernels so that --replay evaluates the
// mask; a form outside these (float arange, a dtype-changing cumsum, None or
// bool indices) stays opaque.
#include "lower/canon_mask.h"

#include "lower/canon_model.h"

#include <cstdlib>

namespace tangle {

namespace {

using eg::Attr;
using canon::argAt;
using canon::emit;
using canon::operand;
using canon::scalar;
using canon::tensorAt;
using canon::typeAt;

std::optional<int64_t> intAt(const Node& n, size_t i, const char* kw) {
  const Value* v = argAt(n, i, kw);
  auto p = v ? std::get_if<int64_t>(&v->v) : nullptr;
  return p ? std::optional<int64_t>(*p) : std::nullopt;
}

// The largest integer a floating dtype holds exactly with all below it (2^mantissa bits), else 0.
int64_t exactIntegers(DType t) {
  if (t == DType::F32) return int64_t{1} << 24;
  if (t == DType::F64) return int64_t{1} << 53;
  return 0;
}

// arange(end) / arange(start, end) / arange(start, end, step) over integers; a float arange of integer
// bounds (vLLM's rotary positions) is cast[dtype](the i64 arange): every value is an integer the dtype
// holds exactly (checked), so both compute the same numbers.
bool arange(const Node& n, std::string_view overload, CanonTerm& out) {
  if (!n.type) return false;
  int64_t exact = exactIntegers(n.type->dtype);
  if (n.type->dtype != DType::I64 && exact == 0) return false;
  std::optional<int64_t> start = 0, end, step = 1;
  if (overload == "default") end = intAt(n, 0, "end");
  else if (overload == "start" || overload == "start_step") {
    start = intAt(n, 0, "start"), end = intAt(n, 1, "end");
    if (overload == "start_step") step = intAt(n, 2, "step");
  } else return false;
  if (!start || !end || !step || *step == 0) return false;
  if (n.type->dtype != DType::I64 && (std::abs(*start) > exact || std::abs(*end) > exact)) return false;
  auto r = emit(out, "arange", {Attr::integer(*start), Attr::integer(*end), Attr::integer(*step)}, {});
  if (n.type->dtype != DType::I64) emit(out, "cast", {Attr::str(dtypeName(n.type->dtype))}, {r});
  return true;
}

// index_select(x, 0, idx), idx 1-D integers: the rows x[idx] (index_rows). Other dims stay opaque.
bool indexSelect(const Graph& g, const Node& n, CanonTerm& out) {
  auto x = tensorAt(n, 0, "self");
  auto dim = intAt(n, 1, "dim");
  auto idx = tensorAt(n, 2, "index");
  const TensorType* it = idx ? typeAt(g, *idx) : nullptr;
  if (!x || !dim || *dim != 0 || !it || it->rank() != 1 || isFloating(it->dtype) || it->dtype == DType::Bool ||
      it->dtype == DType::Unknown)
    return false;
  emit(out, "index_rows", {}, {operand(*x), operand(*idx)});
  return true;
}

// cumsum(x, dim) without a dtype (bool and integer inputs sum to i64, as ATen does).
bool cumsum(const Graph& g, const Node& n, CanonTerm& out) {
  auto x = tensorAt(n, 0, "self");
  auto dim = intAt(n, 1, "dim");
  const TensorType* xt = x ? typeAt(g, *x) : nullptr;
  const Value* dt = argAt(n, 2, "dtype");
  if (!xt || !dim || (dt && !std::holds_alternative<NoneValue>(dt->v)) || xt->rank() < 1) return false;
  int64_t d = *dim < 0 ? *dim + xt->rank() : *dim;
  if (d < 0 || d >= xt->rank()) return false;
  emit(out, "cumsum", {Attr::integer(d)}, {operand(*x)});
  return true;
}

// new_ones / new_zeros(x, size): the constant 1 / 0 expanded to size (x's values do not matter;
// the backward of x[idx] starts from x.new_zeros(x's size)).
bool newFilled(const Node& n, double value, CanonTerm& out) {
  return canon::filledTo(argAt(n, 1, "size"), value, out, n.type ? &*n.type : nullptr);
}

// x[i_0, ..., i_{k-1}]: every index a tensor of integers (no None, no bool mask).
bool indexNd(const Graph& g, const Node& n, CanonTerm& out) {
  auto x = tensorAt(n, 0, "self");
  const Value* list = argAt(n, 1, "indices");
  auto l = list ? std::get_if<ValueList>(&list->v) : nullptr;
  const TensorType* xt = x ? typeAt(g, *x) : nullptr;
  if (!xt || !l || l->empty() || static_cast<int64_t>(l->size()) > xt->rank()) return false;
  std::vector<CanonTerm::Ref> kids{operand(*x)};
  for (const Value& v : *l) {
    auto t = std::get_if<TensorRef>(&v.v);
    const TensorType* it = t ? typeAt(g, t->node) : nullptr;
    if (!it || isFloating(it->dtype) || it->dtype == DType::Bool || it->dtype == DType::Unknown) return false;
    kids.push_back(operand(t->node));
  }
  emit(out, "index_nd", {}, std::move(kids));
  return true;
}

}  // namespace

bool canonicalizeMaskOp(const Graph& g, NodeId id, std::string_view base, std::string_view overload, CanonTerm& out) {
  const Node& n = g.node(id);
  if (base == "aten.arange") return arange(n, overload, out);
  if (base == "aten.cumsum" && overload == "default") return cumsum(g, n, out);
  if (base == "aten.new_ones" && overload == "default") return newFilled(n, 1, out);
  if (base == "aten.new_zeros" && overload == "default") return newFilled(n, 0, out);
  if (base == "aten.index" && overload == "Tensor") return indexNd(g, n, out);
  if (base == "aten.index_select" && overload == "default") return indexSelect(g, n, out);
  return false;
}

}  // namespace tangle
