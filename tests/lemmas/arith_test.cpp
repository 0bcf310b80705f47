// Means as scaled sums, folded constant divisors, regrouped running sums.
#include "lemma_fixture.h"

namespace tangle::lemmas::testing {
namespace {

using Arith = LemmaTest;

TEST_F(Arith, MicroBatchMeanOverTwoIsTheBatchSumOverEight) {
  leaf("p", {4});
  constant("two", 2);
  constant("eight", 8);
  eg::Id scaled = term("(div (mean_dim[[0], false] ?p) ?two)");
  run({"mean-as-sum", "div-div-constants"});
  EXPECT_TRUE(equiv(scaled, "(div (sum_dim[[0], false] ?p) ?eight)"));
}

TEST_F(Arith, ZeroDivisorIsNotFolded) {
  leaf("x", {4});
  constant("zero", 0);
  constant("two", 2);
  term("(div (div ?x ?zero) ?two)");
  auto r = run({"div-div-constants"});
  EXPECT_EQ(r.firings["div-div-constants"], 0u);
}

TEST_F(Arith, RunningSumRegroups) {
  leaf("a", {});
  leaf("b", {});
  leaf("c", {});
  eg::Id s = term("(add ?a (sum ?b ?c))");
  run({"add-sum-regroup"});
  EXPECT_TRUE(equiv(s, "(add (add ?a ?b) ?c)"));
}

}  // namespace
}  // namespace tangle::lemmas::testing
