// A pattern's tree (the e-graph keeps its parsed form private): parsed again
// from Pattern::text() so the validator can build instances of a left-hand side.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "egraph/attrs.h"

namespace tangle::validate {

struct PatAttr {
  enum class Kind { Literal, Var, Any } kind = Kind::Literal;
  eg::Attr literal;
  std::string var;  // Var: name without '?'
};

struct PatTree {
  bool isVar = false;  // ?x: binds an e-class
  std::string var;
  std::string op;  // operator node
  std::vector<PatAttr> attrs;
  std::vector<PatTree> children;
  std::string listVar;  // trailing ?xs... (empty: none)
};

// nullopt on a syntax error (patterns come from Pattern::parse, which already checked them).
std::optional<PatTree> parsePatternTree(std::string_view text);

}  // namespace tangle::validate
