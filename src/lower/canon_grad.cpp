// Canonical forms of the ATen calls that training graphs (aot_autograd's
// forward + backward) add: log-softmax, the nll loss and the backward kernels
// of softmax, log-softmax, nll loss, silu, embedding, slice and layer norm, and zeros. Each is written
// exactly (for every input, not only the ones seen) in the forward vocabulary,
// plus one_hot, so the forward ops' lemmas cover the backward as well.
// A call outside the forms handled here (weights, padding index, other
// reductions, a dtype change) stays opaque: never a guess.
#include "lower/canon_grad.h"

#include <algorithm>
#include <limits>

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

std::optional<int64_t> normDim(std::optional<double> d, int64_t rank) {
  if (!d) return std::nullopt;
  auto i = static_cast<int64_t>(*d);
  if (i < 0) i += rank;
  if (i < 0 || i >= rank) return std::nullopt;
  return i;
}

// The dtype argument of the *_backward_data calls: the forward input's dtype.
// Only the same dtype as the gradient is handled (no cast hidden in the call).
bool sameDtypeArg(const Node& n, size_t i, const TensorType& grad) {
  const Value* v = argAt(n, i, "input_dtype");
  if (isNone(v)) return false;
  auto d = std::get_if<DType>(&v->v);
  return d && *d == grad.dtype;
}

Ref sumKeep(CanonTerm& out, Ref x, int64_t dim) {
  return emit(out, "sum_dim", {Attr::ints({dim}), Attr::boolean(true)}, {x});
}

// log_softmax(x) = log(softmax(x)).
bool logSoftmax(const Graph& g, const Node& n, CanonTerm& out) {
  auto x = tensorAt(n, 0, "self");
  const TensorType* xt = x ? typeAt(g, *x) : nullptr;
  auto dim = xt ? normDim(numberAt(n, 1, "dim"), xt->rank()) : std::nullopt;
  auto h2f = numberAt(n, 2, "half_to_float");
  if (!dim || (h2f && *h2f != 0)) return false;
  Ref s = emit(out, "softmax", {Attr::integer(*dim), Attr::boolean(false)}, {operand(*x)});
  emit(out, "log", {}, {s});
  return true;
}

// d log_softmax: g - exp(y) * sum(g, dim), y the forward's output.
bool logSoftmaxBackward(const Graph& g, const Node& n, CanonTerm& out) {
  auto gr = tensorAt(n, 0, "grad_output"), y = tensorAt(n, 1, "output");
  const TensorType* gt = gr ? typeAt(g, *gr) : nullptr;
  auto dim = gt ? normDim(numberAt(n, 2, "dim"), gt->rank()) : std::nullopt;
  if (!y || !dim || !sameDtypeArg(n, 3, *gt)) return false;
  Ref e = emit(out, "exp", {}, {operand(*y)});
  Ref m = emit(out, "mul", {}, {e, sumKeep(out, operand(*gr), *dim)});
  emit(out, "sub", {}, {operand(*gr), m});
  return true;
}

// d softmax: y * (g - sum(g * y, dim)), y the forward's output.
bool softmaxBackward(const Graph& g, const Node& n, CanonTerm& out) {
  auto gr = tensorAt(n, 0, "grad_output"), y = tensorAt(n, 1, "output");
  const TensorType* gt = gr ? typeAt(g, *gr) : nullptr;
  auto dim = gt ? normDim(numberAt(n, 2, "dim"), gt->rank()) : std::nullopt;
  if (!y || !dim || !sameDtypeArg(n, 3, *gt)) return false;
  Ref gy = emit(out, "mul", {}, {operand(*gr), operand(*y)});
  Ref d = emit(out, "sub", {}, {operand(*gr), sumKeep(out, gy, *dim)});
  emit(out, "mul", {}, {operand(*y), d});
  return true;
}

// d silu(x) = g * s * (1 + x * (1 - s)), s = sigmoid(x).
bool siluBackward(const Node& n, CanonTerm& out) {
  auto gr = tensorAt(n, 0, "grad_output"), x = tensorAt(n, 1, "self");
  if (!gr || !x) return false;
  Ref s = emit(out, "sigmoid", {}, {operand(*x)});
  Ref oneMinus = emit(out, "sub", {}, {scalar(1), s});
  Ref inner = emit(out, "add", {}, {scalar(1), emit(out, "mul", {}, {operand(*x), oneMinus})});
  emit(out, "mul", {}, {operand(*gr), emit(out, "mul", {}, {s, inner})});
  return true;
}

// The nll-loss calls handled: x [N, C], target [N], no class weights, mean or sum reduction.
struct Nll {
  NodeId x, target;
  int64_t classes;
  double ignore;
  bool mean;  // else sum: no division by the kept count (which total_weight still holds)
};
constexpr double kMean = 1, kSum = 2;

std::optional<Nll> nllArgs(const Graph& g, const Node& n, size_t first) {
  auto x = tensorAt(n, first, "self"), t = tensorAt(n, first + 1, "target");
  const TensorType *xt = x ? typeAt(g, *x) : nullptr, *tt = t ? typeAt(g, *t) : nullptr;
  auto reduction = numberAt(n, first + 3, "reduction"), ignore = numberAt(n, first + 4, "ignore_index");
  if (!xt || !tt || xt->rank() != 2 || tt->rank() != 1 || xt->shape[0] != tt->shape[0] || xt->shape[1] < 0) return {};
  if (!isNone(argAt(n, first + 2, "weight")) || (reduction != kMean && reduction != kSum) || !ignore) return {};
  return Nll{*x, *t, xt->shape[1], *ignore, reduction == kMean};
}

// mask = target != ignore_index; the targets with ignored ones replaced by 0 (any valid class).
std::pair<Ref, Ref> maskAndSafeTarget(const Nll& a, CanonTerm& out) {
  Ref mask = emit(out, "ne", {}, {operand(a.target), scalar(a.ignore)});
  Ref safe = emit(out, "where", {}, {mask, operand(a.target), scalar(0)});
  return {mask, safe};
}

// (loss, total_weight) of nll_loss_forward: -sum_{kept i} x[i, t_i] / #kept (sum: no division), #kept.
std::optional<CanonTerm> nllForward(const Graph& g, const Node& n, int64_t k, const TensorType& xt) {
  auto a = nllArgs(g, n, 0);
  if (!a || (k != 0 && k != 1)) return std::nullopt;
  CanonTerm out;
  auto [mask, safe] = maskAndSafeTarget(*a, out);
  Ref total = emit(out, "sum_dim", {Attr::ints({}), Attr::boolean(false)},
                   {emit(out, "cast", {Attr::str(dtypeName(xt.dtype))}, {mask})});
  if (k == 1) return out;
  Ref picked = emit(out, "gather_rows", {}, {operand(a->x), safe});
  Ref kept = emit(out, "where", {}, {mask, picked, scalar(0)});
  Ref sum = emit(out, "sum_dim", {Attr::ints({}), Attr::boolean(false)}, {kept});
  if (a->mean) emit(out, "neg", {}, {emit(out, "div", {}, {sum, total})});
  else emit(out, "neg", {}, {sum});
  return out;
}

// nll_loss_backward(g, x, target, weight, reduction, ignore, total_weight):
// one_hot(t_i) * (kept_i ? -g / total_weight : 0) (sum reduction: -g).
bool nllBackward(const Graph& g, const Node& n, CanonTerm& out) {
  auto gr = tensorAt(n, 0, "grad_output"), tw = tensorAt(n, 6, "total_weight");
  auto a = nllArgs(g, n, 1);
  const TensorType* xt = a ? typeAt(g, a->x) : nullptr;
  if (!gr || !tw || !a || !xt) return false;
  auto [mask, safe] = maskAndSafeTarget(*a, out);
  Ref scale = a->mean ? emit(out, "neg", {}, {emit(out, "div", {}, {operand(*gr), operand(*tw)})})
                      : emit(out, "neg", {}, {operand(*gr)});
  Ref perRow = emit(out, "where", {}, {mask, scale, scalar(0)});
  Ref column = emit(out, "reshape", {Attr::ints({xt->shape[0], 1})}, {perRow});
  Ref hot = emit(out, "cast", {Attr::str(dtypeName(xt->dtype))},
                 {emit(out, "one_hot", {Attr::integer(a->classes)}, {safe})});
  emit(out, "mul", {}, {hot, column});
  return true;
}

// embedding_dense_backward(g [.., H], ids [..], V, padding_idx=-1, scale=False):
// one_hot(ids)^T @ g, the rows of g summed per id.
bool embeddingBackward(const Graph& g, const Node& n, CanonTerm& out) {
  auto gr = tensorAt(n, 0, "grad_output"), ids = tensorAt(n, 1, "indices");
  const TensorType *gt = gr ? typeAt(g, *gr) : nullptr, *it = ids ? typeAt(g, *ids) : nullptr;
  auto rows = numberAt(n, 2, "num_weights"), pad = numberAt(n, 3, "padding_idx"), scale = numberAt(n, 4, "scale_grad_by_freq");
  if (!gt || !it || !rows || *rows < 1 || pad != -1 || (scale && *scale != 0)) return false;
  if (gt->rank() != it->rank() + 1) return false;
  int64_t tokens = 1;
  for (int64_t i = 0; i < it->rank(); ++i) {
    if (it->shape[i] < 0 || gt->shape[i] != it->shape[i]) return false;
    tokens *= it->shape[i];
  }
  int64_t h = gt->shape.back(), v = static_cast<int64_t>(*rows);
  if (h < 0) return false;
  Ref hot = emit(out, "one_hot", {Attr::integer(v)}, {operand(*ids)});
  hot = emit(out, "cast", {Attr::str(dtypeName(gt->dtype))}, {hot});
  hot = emit(out, "reshape", {Attr::ints({tokens, v})}, {hot});
  Ref rowsOfG = emit(out, "reshape", {Attr::ints({tokens, h})}, {operand(*gr)});
  emit(out, "mm", {}, {emit(out, "transpose", {Attr::integer(0), Attr::integer(1)}, {hot}), rowsOfG});
  return true;
}

// slice_backward(g, sizes, dim, start, end, 1): g placed at [start, end) of zeros.
bool sliceBackward(const Graph& g, const Node& n, CanonTerm& out) {
  auto gr = tensorAt(n, 0, "grad_output");
  const TensorType* gt = gr ? typeAt(g, *gr) : nullptr;
  const Value* sv = argAt(n, 1, "input_sizes");
  auto list = sv ? std::get_if<ValueList>(&sv->v) : nullptr;
  if (!gt || !list || static_cast<int64_t>(list->size()) != gt->rank()) return false;
  std::vector<int64_t> sizes;
  for (const Value& v : *list) {
    auto p = std::get_if<int64_t>(&v.v);
    if (!p) return false;
    sizes.push_back(*p);
  }
  auto d = normDim(numberAt(n, 2, "dim"), gt->rank());
  auto start = numberAt(n, 3, "start"), end = numberAt(n, 4, "end"), step = numberAt(n, 5, "step");
  if (!d || !start || !end || step != 1) return false;
  int64_t size = sizes[*d];
  auto clamp = [&](double v) {
    double i = v < 0 ? v + static_cast<double>(size) : v;
    return static_cast<int64_t>(std::min(std::max(i, 0.0), static_cast<double>(size)));
  };
  int64_t s = clamp(*start), e = std::max(s, clamp(*end));
  for (int64_t i = 0; i < gt->rank(); ++i)
    if (gt->shape[i] != (i == *d ? e - s : sizes[i])) return false;
  if (s == 0 && e == size) {
    out.aliasOf = *gr;
    return true;
  }
  auto zeros = [&](int64_t len) {
    std::vector<int64_t> shape = sizes;
    shape[*d] = len;
    return canon::splat(out, shape, 0, gt->dtype);
  };
  std::vector<Ref> pieces;
  if (s > 0) pieces.push_back(zeros(s));
  pieces.push_back(operand(*gr));
  if (e < size) pieces.push_back(zeros(size - e));
  emit(out, "concat", {Attr::integer(*d)}, std::move(pieces));
  return true;
}

// select_backward(g, sizes, dim, index): g (sizes without dim) reshaped to
// size 1 at dim and placed at [index, index + 1) of zeros, as slice_backward
// places its piece (the gradient of one expert's slice of a grouped weight).
bool selectBackward(const Graph& g, const Node& n, CanonTerm& out) {
  auto gr = tensorAt(n, 0, "grad_output");
  const TensorType* gt = gr ? typeAt(g, *gr) : nullptr;
  const Value* sv = argAt(n, 1, "input_sizes");
  auto list = sv ? std::get_if<ValueList>(&sv->v) : nullptr;
  if (!gt || !list || static_cast<int64_t>(list->size()) != gt->rank() + 1) return false;
  std::vector<int64_t> sizes;
  for (const Value& v : *list) {
    auto p = std::get_if<int64_t>(&v.v);
    if (!p || *p < 0) return false;
    sizes.push_back(*p);
  }
  int64_t rank = static_cast<int64_t>(sizes.size());
  auto d = normDim(numberAt(n, 2, "dim"), rank);
  auto index = numberAt(n, 3, "index");
  if (!d || !index) return false;
  int64_t size = sizes[*d], i = static_cast<int64_t>(*index);
  if (i < 0) i += size;
  if (i < 0 || i >= size) return false;
  std::vector<int64_t> unit = sizes;
  unit[*d] = 1;
  for (int64_t k = 0, j = 0; k < rank; ++k) {
    if (k == *d) continue;
    if (isSymbolic(gt->shape[j]) || gt->shape[j] != sizes[k]) return false;
    ++j;
  }
  auto zeros = [&](int64_t len) {
    std::vector<int64_t> shape = sizes;
    shape[*d] = len;
    return canon::splat(out, shape, 0, gt->dtype);
  };
  std::vector<Ref> pieces;
  if (i > 0) pieces.push_back(zeros(i));
  pieces.push_back(emit(out, "reshape", {Attr::ints(unit)}, {operand(*gr)}));
  if (i + 1 < size) pieces.push_back(zeros(size - i - 1));
  if (pieces.size() == 1) return true;  // the reshape alone: a dim of size 1
  emit(out, "concat", {Attr::integer(*d)}, std::move(pieces));
  return true;
}

// zeros(size) / ones(size): the constant 0 or 1 (a 0-d tensor), else expanded to
// size. The backward of `x[mask] = 0` writes such a zero into the gradient; a
// causal mask is tril(ones(n, n)) (its bool dtype is left to the consumer).
bool filled(const Node& n, double value, CanonTerm& out) {
  return canon::filledTo(argAt(n, 0, "size"), value, out, n.type ? &*n.type : nullptr);
}

// scalar_tensor(v): the constant v (a causal mask's fill values 0 and -inf).
bool scalarTensor(const Node& n, CanonTerm& out) {
  const Value* v = argAt(n, 0, "s");
  if (!v) return false;
  if (auto d = std::get_if<double>(&v->v)) emit(out, "const", {Attr::real(*d)}, {});
  else if (auto i = std::get_if<int64_t>(&v->v)) emit(out, "const", {Attr::real(static_cast<double>(*i))}, {});
  else return false;
  return true;
}

// tril(x, diagonal=0).
bool tril(const Node& n, CanonTerm& out) {
  auto x = tensorAt(n, 0, "self");
  const Value* dv = argAt(n, 1, "diagonal");
  auto d = dv ? std::get_if<int64_t>(&dv->v) : nullptr;
  if (!x || (dv && !d)) return false;
  emit(out, "tril", {Attr::integer(d ? *d : 0)}, {operand(*x)});
  return true;
}

// ones_like(x) / zeros_like(x) / full_like(x, v): the constant over x's
// (static) shape; the values of x do not matter. An eager backward seeds the
// loss's gradient with ones_like(loss).
bool likeConstant(const Node& n, std::optional<double> value, CanonTerm& out) {
  if (!value) {
    const Value* fv = argAt(n, 1, "fill_value");
    if (!fv) return false;
    if (auto i = std::get_if<int64_t>(&fv->v)) value = static_cast<double>(*i);
    else if (auto d = std::get_if<double>(&fv->v)) value = *d;
    else return false;
  }
  if (!n.type) return false;
  std::vector<int64_t> sizes;
  for (Dim d : n.type->shape) {
    if (isSymbolic(d)) return false;
    sizes.push_back(d);
  }
  if (sizes.empty()) emit(out, "const", {Attr::real(*value)}, {});
  else canon::splat(out, sizes, *value, n.type->dtype);
  return true;
}

// tangle.accumulate(a, b): an in-place `a += b` of same-shape tensors
// (lower/inplace.cpp renames it so), the running sum of a gradient over
// microbatches: sum(a, b), the form cross-rank sums take too.
bool accumulate(const Graph& g, const Node& n, CanonTerm& out) {
  auto a = tensorAt(n, 0, "self"), b = tensorAt(n, 1, "other");
  const TensorType *at = a ? typeAt(g, *a) : nullptr, *bt = b ? typeAt(g, *b) : nullptr;
  if (!at || !bt || !(*at == *bt) || !n.type || !(*n.type == *at)) return false;
  emit(out, "sum", {}, {operand(*a), operand(*b)});
  return true;
}

// native_layer_norm_backward(g, x, normalized_shape, mean, rstd, w, b, mask):
// with x^ = (x - mean) * rstd over the last k = |normalized_shape| dims (mean and
// rstd as the forward saved them, keepdim) and gw = g * w,
//   grad_input  = rstd * (gw - mean(gw) - x^ * mean(gw * x^))   (means over those dims)
//   grad_weight = sum over the leading dims of g * x^;  grad_bias = the same of g.
// A None weight is 1. Only the outputs the mask asks for exist.
std::optional<CanonTerm> layerNormBackward(const Graph& g, const Node& n, int64_t k) {
  auto gr = tensorAt(n, 0, "grad_out"), x = tensorAt(n, 1, "input"), mean = tensorAt(n, 3, "mean"),
       rstd = tensorAt(n, 4, "rstd");
  const TensorType* xt = x ? typeAt(g, *x) : nullptr;
  const Value* ns = argAt(n, 2, "normalized_shape");
  auto list = ns ? std::get_if<ValueList>(&ns->v) : nullptr;
  const Value* mv = argAt(n, 7, "output_mask");
  auto mask = mv ? std::get_if<ValueList>(&mv->v) : nullptr;
  if (!gr || !xt || !mean || !rstd || !list || list->empty() || static_cast<int64_t>(list->size()) > xt->rank() ||
      k < 0 || k > 2 || !mask || mask->size() != 3)
    return std::nullopt;
  auto want = std::get_if<bool>(&(*mask)[static_cast<size_t>(k)].v);
  if (!want || !*want) return std::nullopt;
  int64_t lead = xt->rank() - static_cast<int64_t>(list->size());
  for (size_t i = 0; i < list->size(); ++i) {
    auto p = std::get_if<int64_t>(&(*list)[i].v);
    if (!p || *p != xt->shape[static_cast<size_t>(lead) + i]) return std::nullopt;
  }
  std::vector<int64_t> normDims, leadDims;
  for (int64_t i = 0; i < xt->rank(); ++i) (i < lead ? leadDims : normDims).push_back(i);
  auto w = tensorAt(n, 5, "weight");
  CanonTerm out;
  // (sum_dim over no dims would mean every dim: with no leading dims there is nothing to sum)
  auto sumLead = [&](Ref v) { emit(out, "sum_dim", {Attr::ints(leadDims), Attr::boolean(false)}, {v}); };
  if (k == 2) {
    if (!tensorAt(n, 6, "bias")) return std::nullopt;  // no bias, no bias gradient
    if (leadDims.empty()) emit(out, "mul", {}, {operand(*gr), scalar(1)});  // g itself (a tuple item is a term)
    else sumLead(operand(*gr));
    return out;
  }
  Ref xhat = emit(out, "mul", {}, {emit(out, "sub", {}, {operand(*x), operand(*mean)}), operand(*rstd)});
  if (k == 1) {
    if (!w) return std::nullopt;
    Ref gx = emit(out, "mul", {}, {operand(*gr), xhat});
    if (!leadDims.empty()) sumLead(gx);
    return out;
  }
  auto meanNorm = [&](Ref v) { return emit(out, "mean_dim", {Attr::ints(normDims), Attr::boolean(true)}, {v}); };
  Ref gw = w ? emit(out, "mul", {}, {operand(*gr), operand(*w)}) : operand(*gr);
  Ref centered = emit(out, "sub", {}, {gw, meanNorm(gw)});
  Ref along = emit(out, "mul", {}, {xhat, meanNorm(emit(out, "mul", {}, {gw, xhat}))});
  emit(out, "mul", {}, {operand(*rstd), emit(out, "sub", {}, {centered, along})});
  return out;
}

}  // namespace

bool canonicalizeGradOp(const Graph& g, NodeId id, std::string_view base, std::string_view overload, CanonTerm& out) {
  const Node& n = g.node(id);
  if (overload != "default") return false;
  if (base == "aten._log_softmax") return logSoftmax(g, n, out);
  if (base == "aten._log_softmax_backward_data") return logSoftmaxBackward(g, n, out);
  if (base == "aten._softmax_backward_data") return softmaxBackward(g, n, out);
  if (base == "aten.silu_backward") return siluBackward(n, out);
  if (base == "aten.nll_loss_backward") return nllBackward(g, n, out);
  if (base == "aten.embedding_dense_backward") return embeddingBackward(g, n, out);
  if (base == "aten.slice_backward") return sliceBackward(g, n, out);
  if (base == "aten.select_backward") return selectBackward(g, n, out);
  if (base == "aten.zeros") return filled(n, 0, out);
  if (base == "aten.ones") return filled(n, 1, out);
  if (base == "aten.tril") return tril(n, out);
  if (base == "aten.scalar_tensor") return scalarTensor(n, out);
  if (base == "tangle.accumulate") return accumulate(g, n, out);
  if (base == "aten.ones_like") return likeConstant(n, 1.0, out);
  if (base == "aten.zeros_like") return likeConstant(n, 0.0, out);
  if (base == "aten.full_like") return likeConstant(n, std::nullopt, out);
  return false;
}

std::optional<CanonTerm> canonicalizeGradTuple(const Graph& g, NodeId tuple, int64_t k) {
  const Node& n = g.node(tuple);
  std::string_view op = n.op;
  if (op.rfind("torch.ops.", 0) == 0) op.remove_prefix(10);
  if (op == "aten.native_layer_norm_backward.default") return layerNormBackward(g, n, k);
  if (op != "aten.nll_loss_forward.default" && op != "aten.nll_loss_forward") return std::nullopt;
  auto x = tensorAt(n, 0, "self");
  const TensorType* xt = x ? typeAt(g, *x) : nullptr;
  if (!xt) return std::nullopt;
  return nllForward(g, n, k, *xt);
}

namespace canon {

bool filledTo(const Value* sizes, double value, CanonTerm& out, const TensorType* type) {
  auto list = sizes ? std::get_if<ValueList>(&sizes->v) : nullptr;
  if (!list) return false;
  std::vector<int64_t> dims;
  bool symbolic = false;
  for (const Value& v : *list) {
    auto p = std::get_if<int64_t>(&v.v);
    if (p && *p < 0) return false;
    symbolic |= !p;
    if (!p && !std::holds_alternative<TensorRef>(v.v)) return false;
    dims.push_back(p ? *p : 0);
  }
  if (symbolic) {
    // a size given by a symbolic-size node (zeros([u3, 1, 8]) in the backward of x[idx]): the
    // annotation names it (the importer checked each sym_size against its tensor's dim); its
    // concrete entries must be the list's
    if (!type || type->shape.size() != dims.size()) return false;
    for (size_t i = 0; i < dims.size(); ++i)
      if (std::holds_alternative<int64_t>((*list)[i].v) && type->shape[i] != dims[i]) return false;
    dims = type->shape;
  }
  if (dims.empty()) emit(out, "const", {eg::Attr::real(value)}, {});
  else splat(out, dims, value, type ? type->dtype : DType::Unknown);
  return true;
}

}  // namespace canon

}  // namespace tangle
