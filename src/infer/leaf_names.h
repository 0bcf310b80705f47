// Internal to src/infer: which graph a tensor leaf belongs to, read from the
// owner every leaf carries (support/owner.h), never from its name.
#pragma once

#include <optional>
#include <string>
#include <utility>
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

// A tensor leaf (of a term or an e-node): whether it is the spec's, and its
// lowered node in the graph its owner names; nullopt for other nodes. The
// graphs' leaf indexes answer for every leaf lowering made; names are looked
// up only for others. A leaf's attributes name its owner, so an AttrsId is in
// at most one of the two indexes.
inline std::optional<std::pair<bool, int>> leafOf(const LGraph& spec, const LGraph& impl, eg::Symbol op,
                                                  eg::AttrsId attrs) {
  if (op != ops::syms().tensor) return std::nullopt;
  if (auto node = spec.byLeafAttrs.find(attrs)) return std::pair{true, *node};
  if (auto node = impl.byLeafAttrs.find(attrs)) return std::pair{false, *node};
  const std::string* name = ops::tensorName(op, attrs);
  auto owner = ops::tensorOwner(op, attrs);
  if (!name || !owner) return std::nullopt;
  const LGraph& lg = owner->isSpec() ? spec : impl;
  auto id = lg.find(*name);
  if (!id) return std::nullopt;
  return std::pair{owner->isSpec(), lg.resolve(*id)};
}

// The lowered node of a tensor leaf, as leafOf.
inline std::optional<int> leafNode(const LGraph& spec, const LGraph& impl, eg::Symbol op, eg::AttrsId attrs) {
  auto leaf = leafOf(spec, impl, op, attrs);
  if (!leaf) return std::nullopt;
  return leaf->second;
}

// The spec tensor named `node` in its graph ("x" -> "S.x").
inline std::string specName(std::string_view node) { return Owner::spec().prefix() + std::string(node); }

}  // namespace tangle::leaves
