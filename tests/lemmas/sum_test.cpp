// Lemmas of the cross-rank sum.
#include "lemma_fixture.h"

namespace tangle::lemmas::testing {
namespace {

using Sum = LemmaTest;

TEST_F(Sum, SumSingle) {
  leaf("x", {4});
  eg::Id s = term("(sum ?x)");
  run({"sum-single"});
  EXPECT_EQ(g.find(s), g.find(vars.cls("x")));
}

TEST_F(Sum, SumFlatten) {
  leaf("a", {4});
  leaf("b", {4});
  leaf("c", {4});
  eg::Id s = term("(sum ?a (sum ?b ?c))");
  run({"sum-flatten"});
  EXPECT_TRUE(equiv(s, "(sum ?a ?b ?c)"));
}

TEST_F(Sum, SumFlattenSkipsSelfReference) {
  leaf("a", {4});
  leaf("z", {4});
  eg::Id s = term("(sum ?a ?z)");
  g.merge(s, vars.cls("a"));  // a = a + z (z is zero)
  g.rebuild();
  leaf("b", {4});
  term("(sum ?a ?b)");
  auto r = run({"sum-flatten"}, 4);
  EXPECT_EQ(r.stop, eg::StopReason::Saturated);
}

TEST_F(Sum, RearrangementsDistributeOverSum) {
  leaf("a", {4, 6});
  leaf("b", {4, 6});
  eg::Id s = term("(slice[1, 2, 5, 1] (sum ?a ?b))");
  eg::Id t = term("(transpose[0, 1] (sum ?a ?b))");
  eg::Id p = term("(permute[[1, 0]] (sum ?a ?b))");
  eg::Id r = term("(reshape[[24]] (sum ?a ?b))");
  run({"slice-sum", "transpose-sum", "permute-sum", "reshape-sum"});
  EXPECT_TRUE(equiv(s, "(sum (slice[1, 2, 5, 1] ?a) (slice[1, 2, 5, 1] ?b))"));
  EXPECT_TRUE(equiv(t, "(sum (transpose[0, 1] ?a) (transpose[0, 1] ?b))"));
  EXPECT_TRUE(equiv(p, "(sum (permute[[1, 0]] ?a) (permute[[1, 0]] ?b))"));
  EXPECT_TRUE(equiv(r, "(sum (reshape[[24]] ?a) (reshape[[24]] ?b))"));
}

TEST_F(Sum, ExpandDistributesOverSum) {
  leaf("a", {1, 8, 1});
  leaf("b", {1, 8, 1});
  eg::Id e = term("(expand[[1, 8, 64]] (sum ?a ?b))");
  run({"expand-sum"});
  EXPECT_TRUE(equiv(e, "(sum (expand[[1, 8, 64]] ?a) (expand[[1, 8, 64]] ?b))"));
}

TEST_F(Sum, ConcatOfSums) {
  leaf("a1", {2, 3});
  leaf("a2", {2, 3});
  leaf("b1", {5, 3});
  leaf("b2", {5, 3});
  eg::Id c = term("(concat[0] (sum ?a1 ?a2) (sum ?b1 ?b2))");
  run({"concat-of-sums"});
  EXPECT_TRUE(equiv(c, "(sum (concat[0] ?a1 ?b1) (concat[0] ?a2 ?b2))"));
}

TEST_F(Sum, ConcatOfSumsNeedsEqualArity) {
  leaf("a1", {2, 3});
  leaf("a2", {2, 3});
  leaf("b1", {5, 3});
  leaf("b2", {5, 3});
  leaf("b3", {5, 3});
  term("(concat[0] (sum ?a1 ?a2) (sum ?b1 ?b2 ?b3))");
  term("(concat[0] (sum ?a1 ?a2) ?b1)");
  auto r = run({"concat-of-sums"});
  EXPECT_EQ(r.firings["concat-of-sums"], 0u);
}

TEST_F(Sum, SumOfConcats) {
  leaf("a1", {2, 3});
  leaf("a2", {4, 3});
  leaf("b1", {2, 3});
  leaf("b2", {4, 3});
  eg::Id s = term("(sum (concat[0] ?a1 ?a2) (concat[0] ?b1 ?b2))");
  run({"sum-of-concats"});
  EXPECT_TRUE(equiv(s, "(concat[0] (sum ?a1 ?b1) (sum ?a2 ?b2))"));
}

TEST_F(Sum, SumOfConcatsNeedsEqualSplits) {
  leaf("a1", {2, 3});
  leaf("a2", {4, 3});
  leaf("b1", {3, 3});
  leaf("b2", {3, 3});
  term("(sum (concat[0] ?a1 ?a2) (concat[0] ?b1 ?b2))");
  auto r = run({"sum-of-concats"});
  EXPECT_EQ(r.firings["sum-of-concats"], 0u);
}

}  // namespace
}  // namespace tangle::lemmas::testing
