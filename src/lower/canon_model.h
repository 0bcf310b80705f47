// Canonicalization of indexing/masking/comparison ATen calls (canon_model.cpp).
#pragma once

#include <optional>
#include <string_view>

#include "lower/canon.h"

namespace tangle {

// Reading a call's arguments (positional i, or keyword kw): nullptr / nullopt when absent or of another kind.
namespace canon {
const Value* argAt(const Node& n, size_t i, const char* kw);
std::optional<NodeId> tensorAt(const Node& n, size_t i, const char* kw);
std::optional<double> numberAt(const Node& n, size_t i, const char* kw);
const TensorType* typeAt(const Graph& g, NodeId id);  // the node's annotation, nullptr if none
// The constant `value` (0-d) or expanded to a list of non-negative sizes; a list with symbolic sizes
// takes the node's annotated shape `type` (nullptr: false); false for any other list.
bool filledTo(const Value* sizes, double value, CanonTerm& out, const TensorType* type = nullptr);
}  // namespace canon

// Fills `out` and returns true when the call has a canonical form here.
bool canonicalizeModelOp(const Graph& g, NodeId id, std::string_view base, std::string_view overload, CanonTerm& out);

// CPU scaled-dot-product attention and its backward (canon_sdpa.cpp).
bool canonicalizeSdpa(const Graph& g, NodeId id, std::string_view base, std::string_view overload, CanonTerm& out);

// Mixture-of-experts routing: topk (canon_moe.cpp).
bool canonicalizeMoe(const Graph& g, NodeId id, std::string_view base, std::string_view overload, CanonTerm& out);

// getitem[k] of higher_order.auto_functionalized(KERNEL, kwargs...): the new
// value of the kernel's k-th mutated argument, for the out-variant kernels
// tangle knows (vLLM's rms_norm, fused_add_rms_norm, silu_and_mul); the
// output buffers' old contents are never read. Operands are NodeIds of `g`.
std::optional<CanonTerm> canonicalizeFunctionalized(const Graph& g, NodeId af, int64_t k);

}  // namespace tangle
