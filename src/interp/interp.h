// The reference interpreter: ATen semantics of every canonical op of
// src/ops on small dense float64 tensors (CPU, no speed goals beyond "small
// tensors in microseconds"). Used to validate lemmas (src/validate) and to
// replay certificates. Leaves ("tensor") have no semantics here: callers
// supply their values.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "egraph/enode.h"
#include "interp/tensor.h"

namespace tangle::interp {

// The value of `n` given its children's values. nullopt when the op has no
// reference semantics (tensor leaves, opaque ATen calls) or when the inputs
// do not fit the op (wrong ranks, mismatching shapes, bad attributes): the
// interpreter never crashes on a malformed node.
std::optional<Value> evalNode(const eg::ENode& n, const std::vector<Value>& children);

// Semantics of a custom operator (a lemma file's `define`): evalNode and
// supports consult these after the built-in ops. Registering again replaces.
using CustomEval = std::function<std::optional<Value>(const eg::ENode&, const std::vector<Value>&)>;
void registerCustomEval(eg::Symbol op, CustomEval eval);

// True when evalNode knows the op.
bool supports(eg::Symbol op);

// The pure rearrangements (slice, concat, transpose, permute, reshape,
// expand) as gathers: element i of the result is element offset[i] of child
// child[i]. Shared by the float evaluation and symbolic (Z3) evaluation.
struct Gather {
  Shape shape;
  std::vector<uint32_t> child;
  std::vector<int64_t> offset;
};
// nullopt for other ops or inputs that do not fit.
std::optional<Gather> gatherOf(const eg::ENode& n, const std::vector<Shape>& childShapes);
bool isGatherOp(eg::Symbol op);

}  // namespace tangle::interp
