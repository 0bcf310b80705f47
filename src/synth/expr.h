// Lemma synthesis (Emerge Algorithm 2), part 1: the terms it works on.
//
// Both sides of a candidate relation are small trees over implementation
// tensors (alias-resolved impl LNodes). A leaf can be unfolded into its
// canonical definition over its own operands; the frontier search
// (frontier.h) unfolds leaves until both sides read the same tensors.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "egraph/attrs.h"
#include "egraph/extract.h"
#include "lower/lower.h"

namespace tangle::synth {

struct Expr {
  int leaf = -1;  // >= 0: an impl LNode (alias-resolved); else an operator node
  eg::Symbol op = 0;
  eg::AttrList attrs;
  std::vector<Expr> kids;
  bool isLeaf() const { return leaf >= 0; }
  bool operator==(const Expr& o) const;
};

// A term of inference or of the relation language (leaves "D<r>.x") as an
// Expr; nullopt when a leaf is not an implementation tensor.
std::optional<Expr> fromTerm(const eg::Term& t, const LGraph& impl);

// The canonical definition of impl LNode `node` over leaves of its operands;
// nullopt for inputs, tuples and nodes without a definition.
std::optional<Expr> definitionOf(const LGraph& impl, int node);

// The spec operator's definition, each spec operand replaced by `operand(s)`
// (an Expr over impl tensors). nullopt when the node has no definition or an
// operand has no replacement.
std::optional<Expr> specDefinition(const LGraph& spec, int node,
                                   const std::function<std::optional<Expr>(int specNode)>& operand);

// Replaces every leaf `node` by `by`.
Expr substitute(const Expr& e, int node, const Expr& by);
// The leaves read by e.
void leavesOf(const Expr& e, std::set<int>& out);
size_t sizeOf(const Expr& e);
// Relation-like text for reports: (gelu["none"] (concat[1] D0.add D1.add)).
std::string toText(const Expr& e, const LGraph& impl);

}  // namespace tangle::synth
