// Element maps of rearrangements, run-length encoded: which element of which
// source each element of a result is, in row-major order, as runs of
// consecutive elements of one source. Used by rearrangement folding
// (fold_rearrange.h); exact for the sizes given, with no symbolic sizes.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "egraph/attrs.h"
#include "interp/tensor.h"

namespace tangle::runs {

struct Run {
  int src = 0;      // the source (a child index for one op's map, a tensor for a composed one)
  int64_t off = 0;  // first element of the source
  int64_t len = 0;  // consecutive elements
  bool operator==(const Run&) const = default;
};
using Runs = std::vector<Run>;

int64_t numel(const interp::Shape& s);

struct OpMap {
  interp::Shape shape;  // of the result
  Runs runs;            // src = child index
};

// The map of one rearrangement (slice, concat, reshape natively at any size;
// transpose, permute, expand through their element gathers when they have at
// most `maxRuns` elements). nullopt for other ops, bad attributes, or a map of
// more than `maxRuns` runs.
std::optional<OpMap> opMap(eg::Symbol op, const eg::AttrList& attrs, const std::vector<interp::Shape>& kids,
                           size_t maxRuns);

// Each run of `m` (src = child index) replaced by that range of the child's
// map; adjacent runs merged. nullopt past `maxRuns` runs.
std::optional<Runs> compose(const Runs& m, const std::vector<const Runs*>& kids, size_t maxRuns);

}  // namespace tangle::runs
