// Shape helpers shared by type inference (src/ops) and lemma guards
// (src/lemmas). Pure functions over TensorType / shapes; no e-graph. Those
// comparing symbolic dims take the check's context (from EGraph::symbols()).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "egraph/attrs.h"
#include "support/dims.h"
#include "support/tensor_type.h"
#include "sym/context.h"

namespace tangle::ops {

using Shape = std::vector<Dim>;

// Numpy broadcasting of two shapes; nullopt when incompatible.
// A symbolic dim broadcasts with 1 and with itself only.
std::optional<Shape> broadcastShapes(const sym::Context& symbols, const Shape& a, const Shape& b);

// Result dtype of an elementwise op over tensors a, b (PyTorch promotion
// within the same category; Unknown is a wildcard, e.g. for const scalars).
DType promote(DType a, DType b);

// Equal ranks and dims (symbolic dims compared under `symbols`).
bool sameShape(const sym::Context& symbols, const Shape& a, const Shape& b);
// True when every dim is a concrete size.
bool allConcrete(const Shape& s);
// Product of dims [from, to); nullopt if one is symbolic or the product does not fit in int64.
std::optional<int64_t> product(const Shape& s, size_t from, size_t to);
// Equal numbers of elements (symbolic dims compared as a multiset); false when a
// concrete count does not fit in int64 (never wrapped into a false equality).
bool sameNumel(const sym::Context& symbols, const Shape& a, const Shape& b);

// The attribute readers (egraph/attrs.h) and dim-index helpers
// (support/dims.h), under the names the type rules and lemmas use.
using eg::attrBool;
using eg::attrDim;
using eg::attrInt;
using eg::attrInts;
using eg::attrNumber;
using tangle::normDim;
using tangle::reducedDims;
using tangle::transposePerm;

}  // namespace tangle::ops
