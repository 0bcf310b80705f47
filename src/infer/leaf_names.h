// Internal to src/infer: which graph a tensor leaf belongs to, read from the
// owner every leaf carries (support/owner.h), never from its name.
#pragma once

#include <string>
#include <string_view>

#include "egraph/egraph.h"
#include "lower/lower.h"
#include "ops/ops.h"

namespace tangle::leaves {

// A tensor leaf of the spec graph.
inline bool isSpecLeaf(eg::Symbol op, eg::AttrsId attrs) {
  auto owner = ops::tensorOwner(op, attrs);
  return owner && owner->isSpec();
}
inline bool isSpecLeaf(const eg::ENode& n) { return isSpecLeaf(n.op, n.attrs); }

// A tensor leaf of implementation rank r.
inline bool isRankLeaf(const eg::ENode& n, int32_t r) {
  auto owner = ops::tensorOwner(n);
  return owner && owner->rank == r && !owner->isSpec();
}

// The lowered node of a tensor leaf (of a term or an e-node), in the graph
// its owner names; nullopt for other nodes.
inline std::optional<int> leafNode(const LGraph& spec, const LGraph& impl, eg::Symbol op, eg::AttrsId attrs) {
  const std::string* name = ops::tensorName(op, attrs);
  auto owner = ops::tensorOwner(op, attrs);
  if (!name || !owner) return std::nullopt;
  const LGraph& lg = owner->isSpec() ? spec : impl;
  auto id = lg.find(*name);
  if (!id) return std::nullopt;
  return lg.resolve(*id);
}

// The spec tensor named `node` in its graph ("x" -> "S.x").
inline std::string specName(std::string_view node) { return Owner::spec().prefix() + std::string(node); }

}  // namespace tangle::leaves
