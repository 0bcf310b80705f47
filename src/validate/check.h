// The two checks of an instance after its lemma fired: numeric (random leaf
// values, the reference interpreter, every node of a class must agree) and
// symbolic (Z3, for pure rearrangement + sum e-graphs).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "egraph/egraph.h"

namespace tangle::validate {

struct CheckResult {
  bool ok = true;
  // A node of the instance itself (not one the rule added) is outside the
  // interpreter's domain for these leaf values (e.g. an index out of range):
  // the case says nothing about the lemma; draw other values.
  bool outOfDomain = false;
  std::string counterexample;  // when !ok: the terms that disagree, leaf values, first differing element
};

// Leaves with integer contents: name -> [lo, hi).
using IntLeaves = std::map<std::string, std::pair<int64_t, int64_t>>;

// Leaf values uniform in [-2, 2], or in [0.25, 2] with `positive` (log,
// sqrt, fractional powers), except: `ints` leaves; leaves that reach an index
// operand (index_rows, gather_rows) through rearrangements get valid indices;
// leaves that reach a where condition get 0/1. Fails as well when a class
// cannot be evaluated (the interpreter refused a node that type inference accepted).
// `original`: the e-nodes of the instance before the rule ran. A node the
// rule added that the interpreter refuses where the instance's nodes are
// defined is a failure (the right-hand side leaves the domain).
CheckResult checkNumeric(const eg::EGraph& g, std::mt19937_64& rng, bool positive, const IntLeaves& ints,
                         const std::vector<eg::ENode>& original);

// True when every e-node is a tensor leaf, slice, concat, transpose, permute,
// reshape or sum: then checkSymbolic applies.
bool isPureRearrangement(const eg::EGraph& g);
// Proves with Z3 that all nodes of every class agree element-wise for
// symbolic (real) leaf contents. nullopt when Z3 answered unknown.
std::optional<CheckResult> checkSymbolic(const eg::EGraph& g);

}  // namespace tangle::validate
