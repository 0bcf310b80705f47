// Internal to src/ops: the attribute samplers named by the op records.
#pragma once

#include "ops/ops.h"

namespace tangle::ops::samplers {

using Out = std::optional<eg::Attr>;
Out slice(AttrSampling&, size_t, const eg::AttrList&);         // dim, start, end, step
Out dim(AttrSampling&, size_t, const eg::AttrList&);           // a dim of the first child (concat, transpose)
Out softmax(AttrSampling&, size_t, const eg::AttrList&);       // dim, half_to_float
Out permute(AttrSampling&, size_t, const eg::AttrList&);
Out reshape(AttrSampling&, size_t, const eg::AttrList&);
Out expand(AttrSampling&, size_t, const eg::AttrList&);
Out getitem(AttrSampling&, size_t, const eg::AttrList&);
Out split(AttrSampling&, size_t, const eg::AttrList&);         // dim, sizes
Out maxDim(AttrSampling&, size_t, const eg::AttrList&);        // dim, keepdim
Out dropout(AttrSampling&, size_t, const eg::AttrList&);       // p, train
Out approximate(AttrSampling&, size_t, const eg::AttrList&);   // "none" | "tanh"
Out exponent(AttrSampling&, size_t, const eg::AttrList&);
Out dtype(AttrSampling&, size_t, const eg::AttrList&);
Out reduce(AttrSampling&, size_t, const eg::AttrList&);        // dims, keepdim
Out layerNorm(AttrSampling&, size_t, const eg::AttrList&);     // normalized shape, eps
Out layerNormBwd(AttrSampling&, size_t, const eg::AttrList&);  // normalized shape, eps
Out constant(AttrSampling&, size_t, const eg::AttrList&);
Out epsilon(AttrSampling&, size_t, const eg::AttrList&);
Out rotary(AttrSampling&, size_t, const eg::AttrList&);        // head_size, neox
Out layer(AttrSampling&, size_t, const eg::AttrList&);
Out classes(AttrSampling&, size_t, const eg::AttrList&);  // one_hot: 1..8
Out sdpa(AttrSampling&, size_t, const eg::AttrList&);          // causal, scale
Out topk(AttrSampling&, size_t, const eg::AttrList&);          // k, dim, largest
Out arange(AttrSampling&, size_t, const eg::AttrList&);        // start, end, step (samplers_mask.cpp)

}  // namespace tangle::ops::samplers
