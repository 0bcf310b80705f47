// Type inference of reductions, softmax and layer normalization.
#include "ops/infer.h"

namespace tangle::ops::detail {

namespace {
bool isIntegral(DType t) {
  return t == DType::Bool || t == DType::U8 || t == DType::I8 || t == DType::I16 || t == DType::I32 ||
         t == DType::I64;
}
}  // namespace

// sum_dim / mean_dim / amax [[dims], keepdim] x; dims [] = all dims.
Data inferReduce(const eg::EGraph& g, const eg::ENode& n) {
  const auto& a = eg::attrs(n.attrs);
  const TensorType* x = childTensor(g, n, 0);
  const auto* dims = attrInts(a, 0);
  auto keep = attrBool(a, 1);
  if (!x || n.children.size() != 1 || a.size() != 2 || !dims || !keep) return std::nullopt;
  auto red = reducedDims(*dims, x->rank());
  if (!red) return std::nullopt;
  Shape out;
  size_t j = 0;
  for (int64_t d = 0; d < x->rank(); ++d) {
    bool reduced = j < red->size() && (*red)[j] == d;
    if (reduced) ++j;
    if (!reduced) out.push_back(x->shape[d]);
    else if (*keep) out.push_back(1);
  }
  static const eg::Symbol kSumDim = eg::intern("sum_dim");
  DType dt = x->dtype;
  if (n.op == kSumDim && isIntegral(dt)) dt = DType::I64;
  return tensorData(dt, std::move(out));
}

// softmax[dim, half_to_float] x
Data inferSoftmax(const eg::EGraph& g, const eg::ENode& n) {
  const auto& a = eg::attrs(n.attrs);
  const TensorType* x = childTensor(g, n, 0);
  auto dim = attrInt(a, 0);
  auto h2f = attrBool(a, 1);
  if (!x || n.children.size() != 1 || a.size() != 2 || !dim || !h2f) return std::nullopt;
  if (x->rank() == 0 ? *dim != 0 : (*dim < 0 || *dim >= x->rank())) return std::nullopt;
  return tensorData(*h2f ? DType::F32 : x->dtype, x->shape);
}

// native_layer_norm[[normalized_shape], eps] x w b -> (out, mean, rstd);
// apex_layer_norm: the same with mean and rstd (invvar) of shape [prod(leading dims)].
// w and b have the normalized shape, or are 0-d constants (None = 1 and 0).
Data inferLayerNorm(const eg::EGraph& g, const eg::ENode& n) {
  const auto& a = eg::attrs(n.attrs);
  const TensorType* x = childTensor(g, n, 0);
  const auto* ns = attrInts(a, 0);
  if (!x || n.children.size() != 3 || a.size() != 2 || !ns || !attrNumber(a, 1)) return std::nullopt;
  int64_t k = static_cast<int64_t>(ns->size());
  if (k == 0 || k > x->rank()) return std::nullopt;
  int64_t axis = x->rank() - k;
  for (int64_t i = 0; i < k; ++i)
    if (x->shape[axis + i] != (*ns)[i]) return std::nullopt;
  for (size_t i = 1; i <= 2; ++i) {
    const TensorType* p = childTensor(g, n, i);
    if (!p) return std::nullopt;
    bool scalarConst = p->shape.empty() && g.data(n.children[i]).constant;
    if (!scalarConst && p->shape != *ns) return std::nullopt;
  }
  Shape stat(x->shape.begin(), x->shape.begin() + axis);
  static const eg::Symbol kApex = eg::intern("apex_layer_norm");
  if (n.op == kApex) {  // apex keeps mean/invvar as [prod(leading dims)]
    auto n1 = product(stat, 0, stat.size());
    if (!n1) return std::nullopt;
    stat = {*n1};
  } else {
    stat.resize(x->shape.size(), 1);
  }
  // CUDA computes the statistics in the accumulation type.
  DType statType = (x->dtype == DType::F16 || x->dtype == DType::BF16) ? DType::F32 : x->dtype;
  eg::ClassData out;
  out.tuple = true;
  out.types = {*x, TensorType{statType, stat}, TensorType{statType, stat}};
  return out;
}

}  // namespace tangle::ops::detail
