// Private: the parsed form of a Pattern, shared by the parser
// (pattern_parse.cpp) and the matcher (pattern.cpp).
#pragma once

#include <string>
#include <vector>

#include "egraph/pattern.h"

namespace tangle::eg {

struct PatAttr {
  enum class Kind : uint8_t { Literal, Var, Any } kind = Kind::Literal;
  Attr literal;
  int var = -1;           // index into PatternData::attrVars
  bool firstUse = false;  // binds (true) or compares with the binding (false)
};

// A node of the pattern tree; `children` index into PatternData::nodes.
struct PatNode {
  bool isVar = false;
  int var = -1;           // isVar: index into PatternData::classVars
  bool firstUse = false;  // isVar: binds (true) or compares (false)

  Symbol op = 0;
  std::vector<PatAttr> attrs;
  bool literalAttrs = true;  // no variables or `_`: compare `attrsId` directly
  AttrsId attrsId = kNoAttrs;
  std::vector<int> children;
  int listVar = -1;  // trailing `?xs...`: index into PatternData::listVars
  bool listFirstUse = false;
};

namespace detail {
struct PatternData {
  std::string text;
  std::vector<PatNode> nodes;
  int root = 0;
  std::vector<std::string> classVars, attrVars, listVars;
  // Operator nodes in the order the matcher binds them (pre-order from the
  // root). Each one's class register is set before its turn: the root by the
  // caller, the others by their parent's step. Variable occurrences are
  // checked in the step of the operator node that holds them; `firstUse`
  // flags follow this order, so backtracking never has to undo a binding.
  std::vector<int> bindOrder;
  // Parent hops from the root to the deepest class a match binds or inspects
  // (a variable or list variable one below its operator node): a new match
  // has a changed class at most this far below its root (rewrite.cpp).
  int height = 0;
  // The operators of the non-root operator nodes, each once: a match needs every one of them in
  // the e-graph (a cheap test before searching).
  std::vector<Symbol> innerOps;
};
}  // namespace detail

}  // namespace tangle::eg
