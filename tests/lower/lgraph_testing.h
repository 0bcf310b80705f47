// Shared by the lowering tests: a lowered node by name, and its definition in short.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "lower/lower.h"

namespace tangle::testing {

inline const LNode& node(const LGraph& lg, const std::string& name) {
  auto id = lg.find(name);
  EXPECT_TRUE(id.has_value()) << name;
  return lg.node(lg.resolve(id.value_or(0)));
}

// The root op of a node's definition and the names of its operands: "concat(D0.x, D1.x)".
inline std::string defOf(const LGraph& lg, const std::string& name) {
  const LNode& n = node(lg, name);
  if (n.def.nodes.empty()) return n.isInput ? "input" : "none";
  std::string out = eg::symbolName(n.def.nodes.back().op) + "(";
  for (size_t i = 0; i < n.operands.size(); ++i) out += (i ? ", " : "") + lg.node(n.operands[i]).name;
  return out + ")";
}

}  // namespace tangle::testing
