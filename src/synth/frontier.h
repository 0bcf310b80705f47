// Lemma synthesis (Emerge Algorithm 2), part 2: the coarsest shared frontier
// of two computations, and the rule it gives.
//
// lhs and rhs are Exprs over implementation tensors whose values agree. A
// leaf may be unfolded into its definition. Breadth-first over the number of
// unfoldings, the first pair whose leaf sets are equal -- up to `classes`,
// tensors already known equal (replicas of one spec tensor, e.g. D0.x and
// D1.x) -- is the coarsest shared frontier: abstracting its tensors into
// pattern variables gives the most general rule `lhs(frontier) => rhs(frontier)`.
// Only leaves the other side does not read are unfolded (a shared tensor is
// already frontier).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "synth/expr.h"

namespace tangle::synth {

// Impl tensor -> representative of the tensors known equal to it (absent: itself).
using Classes = std::map<int, int>;
int classOf(const Classes& c, int node);

struct Frontier {
  Expr lhs, rhs;
  size_t unfoldings = 0;
};

struct FrontierLimits {
  size_t maxUnfoldings = 10;
  size_t maxStates = 20000;
};

// nullopt when no shared frontier is found within the limits.
std::optional<Frontier> coarsestFrontier(const LGraph& impl, const Expr& lhs, const Expr& rhs, const Classes& classes,
                                         const FrontierLimits& limits = {});

// The rule as lemma-file pattern text. Frontier tensors become ?v0, ?v1, ...
// (one variable per class). `generalize`: every integer attribute value of the
// left side becomes an attribute variable ?p0, ?p1, ... (the same variable for
// equal values, in both sides), so the rule holds for any dim it validates on.
// nullopt (with `why`) when the rule cannot be written: a symbolic size in an
// attribute that stays literal (patterns hold integers only).
struct RuleText {
  std::string lhs, rhs;
  std::map<std::string, int> leafOf;  // "v0" -> an impl tensor of that frontier class
};
std::optional<RuleText> ruleText(const Frontier& f, const Classes& classes, bool generalize, std::string* why);

}  // namespace tangle::synth

namespace tangle::synth {

// Shape side conditions the rule may need (lemma-file conditions `?v0:rank == 2`,
// `?v1:1 == ?v3:0`): every frontier variable's rank, and for the frontier
// tensors' concrete sizes in the check, one equality chain per size value over
// the (variable, dim) pairs that have it. Tried when the unconditional rule fails.
std::vector<std::string> shapeConditions(const LGraph& impl, const RuleText& r);

}  // namespace tangle::synth
