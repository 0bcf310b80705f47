// An e-node: an operator symbol, its interned attributes, and child e-classes.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "egraph/attrs.h"

namespace tangle::eg {

using Id = uint32_t;

struct ENode {
  Symbol op = 0;
  AttrsId attrs = kNoAttrs;
  std::vector<Id> children;

  bool operator==(const ENode&) const = default;
  bool isLeaf() const { return children.empty(); }
};

struct ENodeHash {
  size_t operator()(const ENode& n) const noexcept;
};

}  // namespace tangle::eg
