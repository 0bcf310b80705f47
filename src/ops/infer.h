// Internal to src/ops: the type inference rules of each op family.
#pragma once

#include <optional>

#include "egraph/egraph.h"
#include "ops/shape.h"

namespace tangle::ops::detail {

using Data = std::optional<eg::ClassData>;

// Type of child i when it is a (typed) tensor class, else nullptr.
inline const TensorType* childTensor(const eg::EGraph& g, const eg::ENode& n, size_t i) {
  if (i >= n.children.size()) return nullptr;
  return g.data(n.children[i]).tensor();
}
inline std::optional<double> childConstant(const eg::EGraph& g, const eg::ENode& n, size_t i) {
  return g.data(n.children[i]).constant;
}
inline eg::ClassData tensorData(DType dt, Shape shape, std::optional<double> constant = std::nullopt) {
  eg::ClassData d;
  d.types.push_back(TensorType{dt, std::move(shape)});
  d.constant = constant;
  return d;
}

// Rearrangements (infer_rearrange.cpp)
Data inferTensorLeaf(const eg::EGraph&, const eg::ENode&);
Data inferSlice(const eg::EGraph&, const eg::ENode&);
Data inferConcat(const eg::EGraph&, const eg::ENode&);
Data inferTranspose(const eg::EGraph&, const eg::ENode&);
Data inferPermute(const eg::EGraph&, const eg::ENode&);
Data inferReshape(const eg::EGraph&, const eg::ENode&);
Data inferExpand(const eg::EGraph&, const eg::ENode&);
Data inferSum(const eg::EGraph&, const eg::ENode&);
Data inferGetitem(const eg::EGraph&, const eg::ENode&);
Data inferSplit(const eg::EGraph&, const eg::ENode&);

// Elementwise (infer_elementwise.cpp)
Data inferConst(const eg::EGraph&, const eg::ENode&);
Data inferUnary(const eg::EGraph&, const eg::ENode&);
Data inferTril(const eg::EGraph&, const eg::ENode&);  // infer_tril.cpp
Data inferArange(const eg::EGraph&, const eg::ENode&);   // infer_mask.cpp
Data inferCumsum(const eg::EGraph&, const eg::ENode&);
Data inferIndexNd(const eg::EGraph&, const eg::ENode&);
Data inferCast(const eg::EGraph&, const eg::ENode&);
Data inferBinary(const eg::EGraph&, const eg::ENode&);

// Model-level ops (infer_model.cpp)
Data inferDropout(const eg::EGraph&, const eg::ENode&);
// x -> (x-typed, x-typed): an elementwise op whose ATen form returns a buffer beside its result.
Data inferPairOfInput(const eg::EGraph&, const eg::ENode&);
Data inferWhere(const eg::EGraph&, const eg::ENode&);
Data inferCompare(const eg::EGraph&, const eg::ENode&);
Data inferIndexRows(const eg::EGraph&, const eg::ENode&);
Data inferGatherRows(const eg::EGraph&, const eg::ENode&);
Data inferOneHot(const eg::EGraph&, const eg::ENode&);
Data inferMaxDim(const eg::EGraph&, const eg::ENode&);
Data inferTopk(const eg::EGraph&, const eg::ENode&);  // infer_topk.cpp
Data inferCrossRank(const eg::EGraph&, const eg::ENode&);
Data inferGeluBackward(const eg::EGraph&, const eg::ENode&);
Data inferRmsNorm(const eg::EGraph&, const eg::ENode&);
Data inferRotary(const eg::EGraph&, const eg::ENode&);
Data inferAttention(const eg::EGraph&, const eg::ENode&);
Data inferApexLayerNormBwd(const eg::EGraph&, const eg::ENode&);

// Scaled-dot-product attention (infer_sdpa.cpp)
Data inferSdpa(const eg::EGraph&, const eg::ENode&);
Data inferSdpaBackward(const eg::EGraph&, const eg::ENode&);

// Linear algebra (infer_linalg.cpp)
Data inferMm(const eg::EGraph&, const eg::ENode&);
Data inferBmm(const eg::EGraph&, const eg::ENode&);
Data inferMatmul(const eg::EGraph&, const eg::ENode&);

// Reductions and normalizations (infer_reduce.cpp)
Data inferReduce(const eg::EGraph&, const eg::ENode&);
Data inferSoftmax(const eg::EGraph&, const eg::ENode&);
Data inferLayerNorm(const eg::EGraph&, const eg::ENode&);

}  // namespace tangle::ops::detail
