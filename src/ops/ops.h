// The canonical operator vocabulary of e-nodes: names, type inference and
// which operators are "clean" (Entangle §3.2: pure rearrangement or
// cross-rank sum). ATen calls are translated to this vocabulary by
// src/lower/canon; lemmas are written over it.
//
// Canonical ops (children are tensors; everything else is an attribute):
//   tensor["S.x"]                     leaf: a spec or implementation tensor
//   const[v]                          leaf: a 0-d scalar constant v (from python scalars)
//   slice[dim, start, end, step] x    end already clamped to the dim size; start, end >= 0
//   concat[dim] x1 ... xn             n >= 1
//   transpose[d0, d1] x               dims non-negative
//   permute[[p0, p1, ...]] x
//   reshape[[s0, s1, ...]] x          view, reshape, _unsafe_view, unsqueeze, squeeze, flatten
//   sum x1 ... xn                     elementwise sum of same-shape tensors (cross-rank reduce)
//   getitem[i] t                      element i of a tuple-valued class
//   add x y | sub x y | mul x y | div x y   broadcasting elementwise (alpha = 1)
//   neg, exp, log, gelu[approx], silu, relu, tanh, sigmoid, rsqrt, sqrt  (unary)
//   mm a b | bmm a b | matmul a b
//   ... more as lemmas need them (see ops.cpp, each with its inference rule).
// Any other ATen call keeps its full name as op (e.g. "aten.native_dropout.default")
// with its non-tensor arguments as attributes: opaque, with its type taken
// from the graph annotation.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "egraph/egraph.h"

namespace tangle::ops {

struct OpInfo {
  const char* name;
  bool clean;  // may appear in a clean relation (only with implementation tensor leaves)
  // Type of the result from the children's data and the attributes;
  // nullopt = ill-typed (wrong ranks, mismatching dims, bad attrs).
  std::optional<eg::ClassData> (*infer)(const eg::EGraph&, const eg::ENode&);
};

// Registry lookup; nullptr for opaque ops.
const OpInfo* find(eg::Symbol op);

// The DataFn for EGraph: known ops are inferred; leaves and opaque ops give
// nullopt from tryAdd's point of view only when a known op is ill-typed.
// (Leaves get their data from EGraph::leaf; opaque ops get an empty ClassData.)
std::optional<eg::ClassData> inferData(const eg::EGraph& g, const eg::ENode& n);

// Custom operators (lemma files, src/lemmas/lemma_file.h): an op given a
// meaning by a user definition gets its type from this inference instead of
// being opaque. Registering a name again replaces its inference. Not
// thread-safe: register before any e-graph is built.
using CustomInfer = std::function<std::optional<eg::ClassData>(const eg::EGraph&, const eg::ENode&)>;
void registerCustomOp(eg::Symbol op, CustomInfer infer);
bool isCustomOp(eg::Symbol op);

// True for the clean ops above and for implementation tensor leaves ("D<r>.x").
bool isCleanNode(const eg::ENode& n);

// The name of a tensor["S.x"] leaf (an e-node's or a term node's op and
// attrs), else nullptr.
const std::string* tensorName(eg::Symbol op, eg::AttrsId attrs);
inline const std::string* tensorName(const eg::ENode& n) { return tensorName(n.op, n.attrs); }

// Frequently used symbols.
struct Syms {
  eg::Symbol tensor, constant, slice, concat, transpose, permute, reshape, sum, getitem;
};
const Syms& syms();

}  // namespace tangle::ops
