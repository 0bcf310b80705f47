// The lemmas of src/lemmas/arange.cpp and the cos/sin entries of the unary
// table, each on a small e-graph: it fires and derives the equality it
// states, and a near miss (its side condition false) does not fire.
#include "lemma_fixture.h"

namespace tangle::lemmas::testing {
namespace {

using Arange = LemmaTest;

// --- ranges ---

TEST_F(Arange, AShortRangeIsASliceOfALongerOne) {
  // HF's positions arange(8) against vLLM's table rows arange(64).
  eg::Id small = term("(arange[0, 8, 1])");
  term("(arange[0, 64, 1])");
  eg::Id mid = term("(arange[3, 9, 2])");  // 3, 5, 7
  term("(arange[1, 11, 2])");              // 1, 3, .., 9: holds it from index 1
  run({"arange-subrange"});
  EXPECT_TRUE(equiv(small, "(slice[0, 0, 8, 1] (arange[0, 64, 1]))"));
  EXPECT_TRUE(equiv(mid, "(slice[0, 1, 4, 1] (arange[1, 11, 2]))"));
}

TEST_F(Arange, ARangeOfAnotherStepOrPhaseIsNoSlice) {
  term("(arange[0, 8, 2])");
  term("(arange[0, 64, 1])");  // step 1: arange(0, 8, 2) is a strided pick, not slice[.., 1]
  term("(arange[1, 5, 3])");
  term("(arange[0, 30, 3])");  // 1 is not on the grid 0, 3, 6, ..
  auto r = run({"arange-subrange"});
  EXPECT_EQ(r.firings["arange-subrange"], 0u);
}

TEST_F(Arange, AddingAnIntegerShiftsTheBounds) {
  constant("zero", 0);
  constant("three", 3);
  eg::Id a = term("(add (arange[0, 8, 1]) ?zero)");
  eg::Id b = term("(add ?three (arange[0, 8, 2]))");
  eg::Id c = term("(sub (arange[0, 8, 1]) ?three)");
  run({"add-arange-scalar", "add-scalar-arange", "sub-arange-scalar"});
  EXPECT_TRUE(equiv(a, "(arange[0, 8, 1])"));
  EXPECT_TRUE(equiv(b, "(arange[3, 11, 2])"));
  EXPECT_TRUE(equiv(c, "(arange[-3, 5, 1])"));
}

TEST_F(Arange, AFractionalShiftIsNoRange) {
  constant("half", 0.5);
  term("(add (arange[0, 8, 1]) ?half)");
  auto r = run({"add-arange-scalar"});
  EXPECT_EQ(r.firings["add-arange-scalar"], 0u);
}

TEST_F(Arange, AFloatScalarMakesAFloatSumNotARange) {
  // arange + (0-d f32 tensor 3.0) is f32 in PyTorch: not the i64 arange(3, 11).
  constant("three", 3);
  eg::Id sum = term("(add (arange[0, 8, 1]) (cast[\"f32\"] ?three))");
  eg::Id lit = term("(add (arange[0, 8, 1]) (cast[\"i64\"] ?three))");
  auto r = run({"add-arange-scalar"});
  EXPECT_EQ(r.firings["add-arange-scalar"], 1u);  // the i64 scalar only
  EXPECT_TRUE(equiv(lit, "(arange[3, 11, 1])"));
  EXPECT_FALSE(equiv(sum, "(arange[3, 11, 1])"));
  EXPECT_EQ(g.data(sum).tensor()->dtype, DType::F32);
}

TEST_F(Arange, RowsPickedByARangeAreASlice) {
  // vLLM's cos_sin_cache.index_select(0, positions) with positions = arange(T).
  leaf("cache", {64, 8});
  eg::Id rows = term("(index_rows ?cache (arange[0, 8, 1]))");
  eg::Id strided = term("(index_rows ?cache (arange[2, 9, 3]))");
  run({"index_rows-arange"});
  EXPECT_TRUE(equiv(rows, "(slice[0, 0, 8, 1] ?cache)"));
  EXPECT_TRUE(equiv(strided, "(slice[0, 2, 9, 3] ?cache)"));
}

TEST_F(Arange, RowsBeyondTheTableAreNoSlice) {
  leaf("cache", {4, 8});
  term("(index_rows ?cache (arange[0, 8, 1]))");   // rows 4..7 do not exist
  term("(index_rows ?cache (arange[-1, 2, 1]))");  // a negative index wraps around
  auto r = run({"index_rows-arange"});
  EXPECT_EQ(r.firings["index_rows-arange"], 0u);
}

// --- slices and broadcasting ---

TEST_F(Arange, SliceMovesOutOfABroadcastProduct) {
  // rows 0..7 of an outer product t[:, None] * f are the product of rows 0..7 of t.
  leaf("t", {64, 1});
  leaf("f", {4});
  leaf("g", {4});
  eg::Id a = term("(mul (slice[0, 0, 8, 1] ?t) ?f)");
  eg::Id b = term("(mul ?g (slice[0, 0, 8, 1] ?t))");
  run({"mul-slice-broadcast-lhs", "mul-slice-broadcast-rhs"});
  EXPECT_TRUE(equiv(a, "(slice[0, 0, 8, 1] (mul ?t ?f))"));
  EXPECT_TRUE(equiv(b, "(slice[0, 0, 8, 1] (mul ?g ?t))"));
}

TEST_F(Arange, SliceStaysWhenTheOtherOperandVariesAlongIt) {
  leaf("t", {64, 4});
  leaf("u", {8, 4});
  leaf("w", {1, 4});
  leaf("c", {64, 4});
  term("(mul (slice[0, 0, 8, 1] ?t) ?u)");  // u is not broadcast along dim 0
  term("(mul (slice[0, 0, 8, 1] ?c) ?w)");  // w broadcasts by a unit dim: left alone (slices of unit dims multiply)
  auto r = run({"mul-slice-broadcast-lhs"});
  EXPECT_EQ(r.firings["mul-slice-broadcast-lhs"], 0u);
}

TEST_F(Arange, LeadingUnitDimsOfALowerRankOperandChangeNothing) {
  // vLLM's einsum("i,j->ij"): t[64, 1] * f viewed as [1, 4].
  leaf("t", {64, 1});
  leaf("f", {4});
  eg::Id a = term("(mul ?t (reshape[[1, 4]] ?f))");
  eg::Id b = term("(mul (reshape[[1, 4]] ?f) ?t)");
  run({"mul-broadcast-unit-lead-rhs", "mul-broadcast-unit-lead-lhs"});
  EXPECT_TRUE(equiv(a, "(mul ?t ?f)"));
  EXPECT_TRUE(equiv(b, "(mul ?f ?t)"));
}

TEST_F(Arange, LeadingUnitDimsThatRaiseTheRankAreKept) {
  leaf("t", {4});
  leaf("f", {4});
  term("(mul ?t (reshape[[1, 4]] ?f))");  // the result is [1, 4], not [4]
  auto r = run({"mul-broadcast-unit-lead-rhs"});
  EXPECT_EQ(r.firings["mul-broadcast-unit-lead-rhs"], 0u);
}

TEST_F(Arange, TimesOneIsTheOperand) {
  leaf("x", {8, 4});
  constant("one", 1.0);
  eg::Id a = term("(mul ?x ?one)");
  eg::Id b = term("(mul ?one ?x)");
  run({"mul-one-rhs", "mul-one-lhs"});
  EXPECT_TRUE(equiv(a, "?x"));
  EXPECT_TRUE(equiv(b, "?x"));
}

TEST_F(Arange, TimesAnotherConstantOrABroadcastOneIsNot) {
  leaf("x", {8, 4});
  leaf("ones", {2, 8, 4});  // values unknown; and it broadcasts x
  constant("two", 2.0);
  term("(mul ?x ?two)");
  term("(mul ?x ?ones)");
  auto r = run({"mul-one-rhs"});
  EXPECT_EQ(r.firings["mul-one-rhs"], 0u);
}

// --- cos / sin in the unary table ---

TEST_F(Arange, CosAndSinMoveThroughConcatSliceAndReshape) {
  // HF's cos(cat(freqs, freqs)) against vLLM's rows of cos(freqs).
  leaf("f", {8, 4});
  eg::Id c = term("(cos (concat[1] ?f ?f))");
  eg::Id s = term("(sin (slice[0, 0, 4, 1] ?f))");
  eg::Id r = term("(cos (reshape[[1, 8, 4]] ?f))");
  run({"cos-concat", "sin-slice", "cos-reshape"});
  EXPECT_TRUE(equiv(c, "(concat[1] (cos ?f) (cos ?f))"));
  EXPECT_TRUE(equiv(s, "(slice[0, 0, 4, 1] (sin ?f))"));
  EXPECT_TRUE(equiv(r, "(reshape[[1, 8, 4]] (cos ?f))"));
}

TEST_F(Arange, CosIsNotSin) {
  leaf("f", {8, 4});
  eg::Id c = term("(cos (concat[1] ?f ?f))");
  run({"cos-concat", "sin-concat"});
  EXPECT_FALSE(equiv(c, "(concat[1] (sin ?f) (sin ?f))"));
}

}  // namespace
}  // namespace tangle::lemmas::testing
