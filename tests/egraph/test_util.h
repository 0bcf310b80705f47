// Shared helpers of the e-graph unit tests: a toy typed vocabulary.
#pragma once

#include <optional>
#include <string>

#include "egraph/egraph.h"

namespace tangle::eg::test {

inline ClassData tensorData(std::vector<Dim> shape, DType dt = DType::F32) {
  ClassData d;
  d.types.push_back(TensorType{dt, std::move(shape)});
  return d;
}

inline ENode node(std::string_view op, std::vector<Id> children, AttrList attrs = {}) {
  return ENode{intern(op), internAttrs(attrs), std::move(children)};
}

// Toy DataFn: "bad" is always ill-typed; "opaque" has unknown data;
// "add" needs equal child shapes; anything else copies its first child's data.
inline std::optional<ClassData> toyData(const EGraph& g, const ENode& n) {
  const std::string& op = symbolName(n.op);
  if (op == "bad") return std::nullopt;
  if (op == "opaque" || n.children.empty()) return ClassData{};
  if (op == "add" && n.children.size() == 2) {
    const ClassData& a = g.data(n.children[0]);
    const ClassData& b = g.data(n.children[1]);
    if (!a.types.empty() && !b.types.empty() && a.types != b.types) return std::nullopt;
  }
  return g.data(n.children[0]);
}

}  // namespace tangle::eg::test
