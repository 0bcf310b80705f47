// The lemmas of src/lemmas/rotary.cpp, each on a small e-graph: it fires and
// derives the equality it states, and a near miss (the side condition that
// makes it sound is false) does not fire.
#include "lemma_fixture.h"

namespace tangle::lemmas::testing {
namespace {

using Rotary = LemmaTest;

// --- the sign out of products and sums ---

TEST_F(Rotary, NegationLeavesAProductOnEitherSide) {
  leaf("a", {8, 4});
  leaf("b", {8, 4});
  eg::Id l = term("(mul (neg ?a) ?b)");
  eg::Id r = term("(mul ?a (neg ?b))");
  run({"mul-neg-lhs", "mul-neg-rhs"});
  EXPECT_TRUE(equiv(l, "(neg (mul ?a ?b))"));
  EXPECT_TRUE(equiv(r, "(neg (mul ?a ?b))"));
}

TEST_F(Rotary, AddingANegationIsASubtraction) {
  leaf("a", {8, 4});
  leaf("b", {8, 4});
  eg::Id r = term("(add ?a (neg ?b))");
  eg::Id l = term("(add (neg ?a) ?b)");
  run({"add-neg-rhs", "add-neg-lhs"});
  EXPECT_TRUE(equiv(r, "(sub ?a ?b)"));
  EXPECT_TRUE(equiv(l, "(sub ?b ?a)"));
}

TEST_F(Rotary, RotateHalfTimesSinBecomesTheNeoxDifference) {
  // x1*c + (-x2)*s, HF's rotate_half product split at the half, is vLLM's x1*c - x2*s.
  leaf("x1", {8, 4});
  leaf("x2", {8, 4});
  leaf("c", {8, 4});
  leaf("s", {8, 4});
  eg::Id hf = term("(add (mul ?x1 ?c) (mul (neg ?x2) ?s))");
  run({"mul-neg-lhs", "add-neg-rhs"});
  EXPECT_TRUE(equiv(hf, "(sub (mul ?x1 ?c) (mul ?x2 ?s))"));
}

TEST_F(Rotary, SignRulesNeedOneDtype) {
  // Mixed dtypes promote: the rewritten term would compute in another type.
  leaf("a", {8, 4}, DType::F32);
  leaf("b", {8, 4}, DType::F64);
  if (!tryTerm("(mul (neg ?a) ?b)") || !tryTerm("(add ?a (neg ?b))")) GTEST_SKIP() << "mixed dtypes are ill-typed";
  auto r = run({"mul-neg-lhs", "add-neg-rhs"});
  EXPECT_EQ(r.firings["mul-neg-lhs"], 0u);
  EXPECT_EQ(r.firings["add-neg-rhs"], 0u);
}

// --- layouts: transposes and unit dims ---

TEST_F(Rotary, TransposeOfUnitDimsIsAReshape) {
  leaf("x", {1, 8, 1, 4});
  eg::Id t = term("(transpose[0, 2] ?x)");
  run({"transpose-unit-dims"});
  EXPECT_TRUE(equiv(t, "(reshape[[1, 8, 1, 4]] ?x)"));
  eg::Id u = term("(transpose[1, 2] ?x)");
  run({"transpose-unit-dims"});
  EXPECT_TRUE(equiv(u, "(reshape[[1, 1, 8, 4]] ?x)"));
}

TEST_F(Rotary, TransposeOfTwoRealDimsIsNotAReshape) {
  leaf("x", {1, 8, 2, 4});
  term("(transpose[1, 2] ?x)");
  term("(transpose[0, 3] ?x)");
  auto r = run({"transpose-unit-dims"});
  EXPECT_EQ(r.firings["transpose-unit-dims"], 0u);
}

TEST_F(Rotary, BinaryOpsMoveThroughATransposeOfBothOperands) {
  leaf("x", {4, 8});
  leaf("y", {8, 4});
  for (const char* op : {"add", "sub", "mul", "div"}) {
    std::string o = op;
    eg::Id l = term("(" + o + " (transpose[0, 1] ?x) ?y)");
    eg::Id r = term("(" + o + " ?y (transpose[0, 1] ?x))");
    run({o + "-transpose-lhs", o + "-transpose-rhs"});
    EXPECT_TRUE(equiv(l, "(transpose[0, 1] (" + o + " ?x (transpose[0, 1] ?y)))")) << o;
    EXPECT_TRUE(equiv(r, "(transpose[0, 1] (" + o + " (transpose[0, 1] ?y) ?x))")) << o;
  }
}

TEST_F(Rotary, TransposeRuleLeavesALowerRankOperandAlone) {
  // y broadcasts from the right: swapping dims of x alone would misalign it.
  leaf("x", {4, 8});
  leaf("y", {4});
  term("(mul (transpose[0, 1] ?x) ?y)");
  auto r = run({"mul-transpose-lhs"});
  EXPECT_EQ(r.firings["mul-transpose-lhs"], 0u);
}

TEST_F(Rotary, LeadingUnitDimAddedByAReshapeIsDroppedFromBothOperands) {
  // HF's [1, T, d] table against vLLM's [T, d]: the unit dim leaves the product.
  leaf("q", {8, 4});
  leaf("c", {1, 8, 4});
  leaf("w", {4});
  eg::Id p = term("(mul (reshape[[1, 8, 4]] ?q) ?c)");
  eg::Id b = term("(add (reshape[[1, 8, 4]] ?q) ?w)");
  run({"mul-drop-unit-lead", "add-drop-unit-lead", "reshape-reshape", "reshape-same-shape"});
  EXPECT_TRUE(equiv(p, "(reshape[[1, 8, 4]] (mul ?q (reshape[[8, 4]] ?c)))"));
  EXPECT_TRUE(equiv(b, "(reshape[[1, 8, 4]] (add ?q ?w))"));
}

TEST_F(Rotary, UnitLeadIsKeptWhenNoReshapeAddedIt) {
  leaf("a", {1, 8, 4});
  leaf("b", {1, 8, 4});
  term("(sub ?a ?b)");
  auto r = run({"sub-drop-unit-lead"});
  EXPECT_EQ(r.firings["sub-drop-unit-lead"], 0u);
}

TEST_F(Rotary, UnitLeadIsKeptWhenTheOtherOperandBroadcastsIt) {
  // The result's first dim is 3, not 1: nothing to drop.
  leaf("q", {8, 4});
  leaf("y", {3, 8, 4});
  term("(div (reshape[[1, 8, 4]] ?q) ?y)");
  auto r = run({"div-drop-unit-lead"});
  EXPECT_EQ(r.firings["div-drop-unit-lead"], 0u);
}

TEST_F(Rotary, ExpandThroughLeadingUnitDims) {
  // HF's repeat_kv: expand [1, kv, 1, t, d] (a reshape of [kv, 1, t, d]) to [1, kv, n, t, d].
  leaf("x", {2, 1, 8, 4});
  eg::Id e = term("(expand[[1, 2, 3, 8, 4]] (reshape[[1, 2, 1, 8, 4]] ?x))");
  run({"expand-unit-lead"});
  EXPECT_TRUE(equiv(e, "(reshape[[1, 2, 3, 8, 4]] (expand[[2, 3, 8, 4]] ?x))"));
}

TEST_F(Rotary, ExpandThatBroadcastsTheUnitLeadIsNotMoved) {
  leaf("x", {2, 1, 8, 4});
  term("(expand[[5, 2, 3, 8, 4]] (reshape[[1, 2, 1, 8, 4]] ?x))");
  auto r = run({"expand-unit-lead"});
  EXPECT_EQ(r.firings["expand-unit-lead"], 0u);
}

TEST_F(Rotary, SoftmaxOverTheLastDimThroughAReshapeKeepingIt) {
  leaf("x", {4, 8, 8});
  eg::Id s = term("(softmax[3, false] (reshape[[1, 4, 8, 8]] ?x))");
  run({"softmax-last-reshape"});
  EXPECT_TRUE(equiv(s, "(reshape[[1, 4, 8, 8]] (softmax[2, false] ?x))"));
}

TEST_F(Rotary, SoftmaxIsNotMovedWhenTheReshapeRegroupsTheLastDim) {
  leaf("x", {4, 8, 8});
  term("(softmax[2, false] (reshape[[1, 4, 64]] ?x))");
  term("(softmax[1, false] (reshape[[1, 4, 8, 8]] ?x))");  // not the last dim
  auto r = run({"softmax-last-reshape"});
  EXPECT_EQ(r.firings["softmax-last-reshape"], 0u);
}

}  // namespace
}  // namespace tangle::lemmas::testing
