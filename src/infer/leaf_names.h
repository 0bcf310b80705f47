// Internal to src/infer: which graph a tensor leaf belongs to.
//
// Lowering names spec tensors "S.<node>" and the tensors of implementation
// rank r "D<r>.<node>" (src/lower/lower.h), and the e-graph leaf of a tensor
// carries that name. Every place where the inference tells spec from
// implementation, or one rank from another, by a leaf's name goes through the
// helpers below, so that the naming convention lives in one place.
#pragma once

#include <string>
#include <string_view>

#include "egraph/egraph.h"
#include "ops/ops.h"

namespace tangle::leaves {

// "S.x": a spec tensor (else an implementation tensor "D<r>.x").
inline bool isSpecName(const std::string& name) { return name.rfind("S.", 0) == 0; }

// The spec tensor named `node` in its graph ("x" -> "S.x").
inline std::string specName(std::string_view node) { return "S." + std::string(node); }

// A tensor leaf of the spec graph.
inline bool isSpecLeaf(const eg::ENode& n) {
  const std::string* name = ops::tensorName(n);
  return name && isSpecName(*name);
}

// The tensors of one implementation rank ("D<r>.x").
class RankNames {
 public:
  explicit RankNames(size_t rank) : prefix_("D" + std::to_string(rank) + ".") {}
  bool contains(const std::string& name) const { return name.rfind(prefix_, 0) == 0; }

 private:
  std::string prefix_;
};

}  // namespace tangle::leaves
