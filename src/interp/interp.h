// The reference kernels: ATen semantics of every canonical op on small dense
// float64 tensors (CPU, no speed goals beyond "small tensors in
// microseconds"). Used to validate lemmas (src/validate) and to replay
// certificates (src/replay). Each operator's record (src/ops/op_table.cpp)
// names its kernel; callers evaluate a node through ops::evaluate. Tensor
// leaves have no kernel: callers supply their values.
//
// A kernel returns nullopt when the inputs do not fit the op (wrong ranks,
// mismatching shapes, bad attributes): it never crashes on a malformed node.
#pragma once

#include <optional>
#include <vector>

#include "egraph/attrs.h"
#include "interp/tensor.h"

namespace tangle::interp {

using Inputs = std::vector<Value>;
using Result = std::optional<Value>;
using Kernel = Result (*)(const eg::AttrList&, const Inputs&);

// The pure rearrangements (slice, concat, transpose, permute, reshape,
// expand) as gathers: element i of the result is element offset[i] of child
// child[i]. Shared by the float evaluation and symbolic (Z3) evaluation.
struct Gather {
  Shape shape;
  std::vector<uint32_t> child;
  std::vector<int64_t> offset;
};
// nullopt for inputs that do not fit.
using GatherFn = std::optional<Gather> (*)(const eg::AttrList&, const std::vector<Shape>& childShapes);

// One kernel per canonical op (ops.h lists them with their attributes).
namespace kernels {
// rearrangements (rearrange.cpp)
Result slice(const eg::AttrList&, const Inputs&);
Result concat(const eg::AttrList&, const Inputs&);
Result transpose(const eg::AttrList&, const Inputs&);
Result permute(const eg::AttrList&, const Inputs&);
Result reshape(const eg::AttrList&, const Inputs&);
Result expand(const eg::AttrList&, const Inputs&);
Result sum(const eg::AttrList&, const Inputs&);
Result rmax(const eg::AttrList&, const Inputs&);
Result rmin(const eg::AttrList&, const Inputs&);
Result split(const eg::AttrList&, const Inputs&);
Result getitem(const eg::AttrList&, const Inputs&);
std::optional<Gather> sliceGather(const eg::AttrList&, const std::vector<Shape>&);
std::optional<Gather> concatGather(const eg::AttrList&, const std::vector<Shape>&);
std::optional<Gather> transposeGather(const eg::AttrList&, const std::vector<Shape>&);
std::optional<Gather> permuteGather(const eg::AttrList&, const std::vector<Shape>&);
std::optional<Gather> reshapeGather(const eg::AttrList&, const std::vector<Shape>&);
std::optional<Gather> expandGather(const eg::AttrList&, const std::vector<Shape>&);
// elementwise (elementwise.cpp)
Result constant(const eg::AttrList&, const Inputs&);
Result add(const eg::AttrList&, const Inputs&);
Result sub(const eg::AttrList&, const Inputs&);
Result mul(const eg::AttrList&, const Inputs&);
Result div(const eg::AttrList&, const Inputs&);
Result neg(const eg::AttrList&, const Inputs&);
Result exp(const eg::AttrList&, const Inputs&);
Result log(const eg::AttrList&, const Inputs&);
Result gelu(const eg::AttrList&, const Inputs&);
Result silu(const eg::AttrList&, const Inputs&);
Result relu(const eg::AttrList&, const Inputs&);
Result tanh(const eg::AttrList&, const Inputs&);
Result sigmoid(const eg::AttrList&, const Inputs&);
Result logSigmoid(const eg::AttrList&, const Inputs&);
Result rsqrt(const eg::AttrList&, const Inputs&);
Result sqrt(const eg::AttrList&, const Inputs&);
Result powScalar(const eg::AttrList&, const Inputs&);
Result tril(const eg::AttrList&, const Inputs&);  // tril.cpp
// the mask construction (mask_ops.cpp)
Result arange(const eg::AttrList&, const Inputs&);
Result cumsum(const eg::AttrList&, const Inputs&);
Result indexNd(const eg::AttrList&, const Inputs&);
Result cast(const eg::AttrList&, const Inputs&);
// products (linalg.cpp)
Result mm(const eg::AttrList&, const Inputs&);
Result bmm(const eg::AttrList&, const Inputs&);
Result matmul(const eg::AttrList&, const Inputs&);
// reductions and normalizations (reduce.cpp)
Result sumDim(const eg::AttrList&, const Inputs&);
Result meanDim(const eg::AttrList&, const Inputs&);
Result amax(const eg::AttrList&, const Inputs&);
Result softmax(const eg::AttrList&, const Inputs&);
Result safeSoftmax(const eg::AttrList&, const Inputs&);
Result layerNorm(const eg::AttrList&, const Inputs&);
Result apexLayerNorm(const eg::AttrList&, const Inputs&);
// model-level ops (model.cpp)
Result dropout(const eg::AttrList&, const Inputs&);
Result where(const eg::AttrList&, const Inputs&);
Result lt(const eg::AttrList&, const Inputs&);
Result le(const eg::AttrList&, const Inputs&);
Result gt(const eg::AttrList&, const Inputs&);
Result ge(const eg::AttrList&, const Inputs&);
Result eq(const eg::AttrList&, const Inputs&);
Result ne(const eg::AttrList&, const Inputs&);
Result logicalOr(const eg::AttrList&, const Inputs&);
Result logicalAnd(const eg::AttrList&, const Inputs&);
Result indexRows(const eg::AttrList&, const Inputs&);
Result gatherRows(const eg::AttrList&, const Inputs&);
Result oneHot(const eg::AttrList&, const Inputs&);
Result maxDim(const eg::AttrList&, const Inputs&);
Result geluBackward(const eg::AttrList&, const Inputs&);
Result rmsNorm(const eg::AttrList&, const Inputs&);
Result rotary(const eg::AttrList&, const Inputs&);
Result attention(const eg::AttrList&, const Inputs&);
Result apexLayerNormBwd(const eg::AttrList&, const Inputs&);
Result sdpa(const eg::AttrList&, const Inputs&);          // sdpa.cpp
Result sdpaBackward(const eg::AttrList&, const Inputs&);
Result topk(const eg::AttrList&, const Inputs&);  // topk.cpp

// f applied to every element of the one input; no attributes. A new
// elementwise op's record can name `unary<+[](double x) { ... }>` as its
// kernel.
Result map(const eg::AttrList&, const Inputs&, double (*f)(double));
template <double (*F)(double)>
Result unary(const eg::AttrList& a, const Inputs& in) {
  return map(a, in, F);
}
}  // namespace kernels

}  // namespace tangle::interp
