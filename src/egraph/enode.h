// An e-node: an operator symbol, its interned attributes, and child e-classes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
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

// Debug form with class ids as children: (concat[0] e3 e4)
std::string toString(const ENode& n);

}  // namespace tangle::eg
