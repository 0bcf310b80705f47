// Shape helpers shared by type inference (src/ops) and lemma guards
// (src/lemmas). Pure functions over TensorType / shapes; no e-graph. Those
// comparing symbolic dims take the check's context (from EGraph::symbols()).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "egraph/attrs.h"
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
// Product of dims [from, to); nullopt if one is symbolic.
std::optional<int64_t> product(const Shape& s, size_t from, size_t to);
// Equal numbers of elements (symbolic dims compared as a multiset).
bool sameNumel(const sym::Context& symbols, const Shape& a, const Shape& b);

// Normalizes a possibly negative dim against a rank; nullopt when out of range.
std::optional<int64_t> normDim(int64_t d, int64_t rank);

// Attribute readers (nullopt when the attribute has another kind).
std::optional<int64_t> attrInt(const eg::AttrList& a, size_t i);   // Int only
std::optional<Dim> attrDim(const eg::AttrList& a, size_t i);       // Int or SymDim (a size)
std::optional<bool> attrBool(const eg::AttrList& a, size_t i);     // Bool (or Int 0/1)
std::optional<double> attrNumber(const eg::AttrList& a, size_t i);  // Int or Float
const std::vector<int64_t>* attrInts(const eg::AttrList& a, size_t i);

// Dims reduced by a reduction with attribute dims `dims` on a tensor of rank
// `rank`: sorted, non-negative, unique; an empty list means all dims.
// nullopt when a dim is out of range.
std::optional<std::vector<int64_t>> reducedDims(const std::vector<int64_t>& dims, int64_t rank);

// Permutation of a transpose[d0, d1] on a tensor of `rank`.
std::vector<int64_t> transposePerm(int64_t d0, int64_t d1, int64_t rank);

}  // namespace tangle::ops
