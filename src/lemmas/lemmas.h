// The lemma library: rewrite rules over the src/ops vocabulary, as data.
//
// How to add a lemma: pick the family file (rearrange.cpp: slice/concat/
// transpose/permute/reshape; sum.cpp: cross-rank sums; elementwise.cpp;
// matmul.cpp; norm.cpp: layer norm, softmax, reductions, split) and append one
// entry to its table with a unique kebab-case name, a one-line doc giving the
// math, and either an RHS pattern (`rewrite(name, doc, lhs, rhs, guard)`;
// the guard may bind derived attributes such as shifted slice bounds) or, when
// n-ary concat/sum pieces must be rebuilt, a C++ applier (`applier(...)`)
// built from the helpers in lemma_util.h (they use tryAdd, so an ill-typed
// right-hand side is refused rather than added). Soundness is sacred: the
// rule must be an identity for ALL shapes its guard accepts, so read sizes
// from the ClassData types, require them concrete, and refuse when unsure.
// Then add a test in tests/lemmas/ where the rule fires on a small term and
// one where its guard refuses.
#pragma once

#include <string>
#include <vector>

#include "egraph/rewrite.h"

namespace tangle::lemmas {

struct Lemma {
  std::string doc;  // the math, e.g. "mm(concat1(a..), concat0(b..)) = sum(mm(a_i, b_i))"
  eg::Rule rule;
};

// Every lemma, in family order (names are unique).
const std::vector<Lemma>& lemmaTable();
// The rules of lemmaTable(), ready for eg::run.
const std::vector<eg::Rule>& allLemmas();
// The rules with these names, in the given order; throws std::invalid_argument
// naming an unknown lemma.
std::vector<eg::Rule> lemmasNamed(const std::vector<std::string>& names);

}  // namespace tangle::lemmas
