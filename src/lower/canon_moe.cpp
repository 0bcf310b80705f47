// Mixture-of-experts routing calls -> canonical ops:
//   aten.topk(x, k, dim=-1, largest=True, sorted=True) -> topk[dim, k, largest] x
//   aten.select.int(x, d, i)                            -> reshape(slice[d, i, i+1, 1] x) without dim d
//     (w[j]: a local expert's weights out of the grouped [E, ...] parameter)
// An unsorted topk leaves the order of its results unspecified: kept opaque.
#include "lower/canon_model.h"

namespace tangle {

using eg::Attr;
using canon::emit;
using canon::operand;

namespace {

bool select(const Graph& g, const Node& n, CanonTerm& out) {
  auto x = canon::tensorAt(n, 0, "self");
  auto dim = canon::numberAt(n, 1, "dim");
  auto index = canon::numberAt(n, 2, "index");
  const TensorType* xt = x ? canon::typeAt(g, *x) : nullptr;
  if (!x || !dim || !index || !xt || xt->rank() == 0) return false;
  int64_t d = static_cast<int64_t>(*dim), i = static_cast<int64_t>(*index);
  if (d < 0) d += xt->rank();
  if (d < 0 || d >= xt->rank() || isSymbolic(xt->shape[d])) return false;
  if (i < 0) i += xt->shape[d];
  if (i < 0 || i >= xt->shape[d]) return false;  // ATen raises; keep it opaque
  std::vector<int64_t> shape;
  for (int64_t k = 0; k < xt->rank(); ++k) {
    if (k == d) continue;
    if (isSymbolic(xt->shape[k])) return false;
    shape.push_back(xt->shape[k]);
  }
  auto sl = emit(out, "slice", {Attr::integer(d), Attr::integer(i), Attr::integer(i + 1), Attr::integer(1)}, {operand(*x)});
  emit(out, "reshape", {Attr::ints(shape)}, {sl});
  return true;
}

}  // namespace

bool canonicalizeMoe(const Graph& g, NodeId id, std::string_view base, std::string_view overload, CanonTerm& out) {
  const Node& n = g.node(id);
  if (base == "aten.select" && overload == "int") return select(g, n, out);
  if (base != "aten.topk" || overload != "default") return false;
  auto x = canon::tensorAt(n, 0, "self");
  auto k = canon::numberAt(n, 1, "k");
  const TensorType* xt = x ? canon::typeAt(g, *x) : nullptr;
  if (!x || !k || !xt || xt->rank() == 0) return false;
  int64_t d = static_cast<int64_t>(canon::numberAt(n, 2, "dim").value_or(-1));
  if (d < 0) d += xt->rank();
  if (d < 0 || d >= xt->rank()) return false;
  bool largest = canon::numberAt(n, 3, "largest").value_or(1) != 0;
  if (canon::numberAt(n, 4, "sorted").value_or(1) == 0) return false;
  emit(out, "topk", {Attr::integer(d), Attr::integer(static_cast<int64_t>(*k)), Attr::boolean(largest)}, {operand(*x)});
  return true;
}

}  // namespace tangle
