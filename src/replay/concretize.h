// Replay of graphs with symbolic sizes: pick concrete sizes that satisfy the
// check's facts (its sym::Context) and rewrite the graphs and the inference
// result at those sizes, so the interpreter can run them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "infer/infer.h"
#include "lower/lower.h"
#include "sym/context.h"

namespace tangle::replay::detail {

// The variables the graphs' sizes depend on (after substitution); nullopt
// when a size holds an opaque call (no way to pick its value).
std::optional<std::vector<sym::AtomId>> sizeVariables(const std::vector<const LGraph*>& graphs,
                                                      const sym::Context& symbols);

// "S.s77 = 6, D0.s3 = 2"
std::string describe(const sym::Context::Assignment& a);

// Copies with every symbolic size (types, slice bounds, reshape/expand
// shapes, terms' attributes) replaced by its value; nullopt when a size has
// no value or a negative one. A size is evaluated in its normal form under `symbols`.
std::optional<LGraph> concretize(const LGraph& lg, const sym::Context::Assignment& a, const sym::Context& symbols);
std::optional<InferResult> concretize(const InferResult& r, const sym::Context::Assignment& a,
                                      const sym::Context& symbols);

}  // namespace tangle::replay::detail
