// Per-rank views of one operator's e-graph, for extracting each rank's own
// clean expressions (conclude.cpp). Extracting over the whole e-graph once per
// rank made concluding an operator O(ranks x e-graph): on a 256-rank plan it
// took more than half the check's CPU. One bitset fixpoint finds, for every
// rank at once, the classes where a clean term over that rank's tensors
// exists; a rank's extraction then visits only those.
#pragma once

#include <cstdint>
#include <vector>

#include "egraph/egraph.h"

namespace tangle {

class RankClasses {
 public:
  RankClasses(const eg::EGraph& g, size_t ranks);

  // Canonical classes with a clean term whose tensors are all rank r's
  // (operators without tensor leaves count for every rank).
  const std::vector<eg::Id>& pure(int32_t r) const { return pure_[static_cast<size_t>(r)]; }
  bool hasPure(eg::Id cls, int32_t r) const;
  // Classes holding both a tensor of rank r and one of another rank.
  const std::vector<eg::Id>& shared(int32_t r) const { return shared_[static_cast<size_t>(r)]; }
  // Some class holds a tensor of rank r.
  bool present(int32_t r) const { return present_[static_cast<size_t>(r)]; }

 private:
  const eg::EGraph& g_;
  size_t words_;
  std::vector<uint64_t> bits_;  // words_ per id: ranks with a pure term
  std::vector<std::vector<eg::Id>> pure_;
  std::vector<std::vector<eg::Id>> shared_;
  std::vector<bool> present_;
};

}  // namespace tangle
