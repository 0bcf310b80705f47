// Lemmas of elementwise ops.
#include "lemma_fixture.h"

namespace tangle::lemmas::testing {
namespace {

using Elementwise = LemmaTest;

// Every unary op: over concat, slice, transpose, permute, reshape.
struct UnaryCase {
  const char* op;  // as written in a term, with attributes
  const char* name;
};
class UnaryLemmas : public LemmaTest, public ::testing::WithParamInterface<UnaryCase> {};

TEST_P(UnaryLemmas, DistributeOverRearrangements) {
  const std::string f = GetParam().op;
  const std::string n = GetParam().name;
  leaf("a", {2, 3});
  leaf("b", {4, 3});
  eg::Id c = term("(" + f + " (concat[0] ?a ?b))");
  eg::Id s = term("(" + f + " (slice[0, 1, 3, 1] ?b))");
  eg::Id t = term("(" + f + " (transpose[0, 1] ?b))");
  eg::Id p = term("(" + f + " (permute[[1, 0]] ?b))");
  eg::Id r = term("(" + f + " (reshape[[12]] ?b))");
  run({n + "-concat", n + "-slice", n + "-transpose", n + "-permute", n + "-reshape"}, 3);
  EXPECT_TRUE(equiv(c, "(concat[0] (" + f + " ?a) (" + f + " ?b))"));
  EXPECT_TRUE(equiv(s, "(slice[0, 1, 3, 1] (" + f + " ?b))"));
  EXPECT_TRUE(equiv(t, "(transpose[0, 1] (" + f + " ?b))"));
  EXPECT_TRUE(equiv(p, "(permute[[1, 0]] (" + f + " ?b))"));
  EXPECT_TRUE(equiv(r, "(reshape[[12]] (" + f + " ?b))"));
}

INSTANTIATE_TEST_SUITE_P(All, UnaryLemmas,
                         ::testing::Values(UnaryCase{"neg", "neg"}, UnaryCase{"exp", "exp"}, UnaryCase{"log", "log"},
                                           UnaryCase{"gelu[\"tanh\"]", "gelu"}, UnaryCase{"silu", "silu"},
                                           UnaryCase{"relu", "relu"}, UnaryCase{"tanh", "tanh"},
                                           UnaryCase{"sigmoid", "sigmoid"}, UnaryCase{"rsqrt", "rsqrt"},
                                           UnaryCase{"sqrt", "sqrt"}, UnaryCase{"pow_scalar[2.0]", "pow_scalar"},
                                           UnaryCase{"cast[\"f16\"]", "cast"}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST_F(Elementwise, UnaryKeepsAttributes) {
  leaf("a", {2});
  leaf("b", {2});
  eg::Id c = term("(gelu[\"tanh\"] (concat[0] ?a ?b))");
  run({"gelu-concat"});
  EXPECT_TRUE(equiv(c, "(concat[0] (gelu[\"tanh\"] ?a) (gelu[\"tanh\"] ?b))"));
  EXPECT_FALSE(equiv(c, "(concat[0] (gelu[\"none\"] ?a) (gelu[\"none\"] ?b))"));
}

TEST_F(Elementwise, NegOverSum) {
  leaf("a", {2});
  leaf("b", {2});
  eg::Id n = term("(neg (sum ?a ?b))");
  run({"neg-sum"});
  EXPECT_TRUE(equiv(n, "(sum (neg ?a) (neg ?b))"));
}

// A cast between float dtypes is the identity on values (over the reals): it moves through sums,
// the four arithmetic ops and other float casts.
TEST_F(Elementwise, FloatCastMovesThroughSumsAndArithmetic) {
  leaf("a", {2}, DType::BF16);
  leaf("b", {2}, DType::BF16);
  leaf("x", {2}, DType::F32);
  eg::Id s = term("(cast[\"f32\"] (sum ?a ?b))");
  eg::Id m = term("(cast[\"bf16\"] (mul ?x ?x))");
  eg::Id c = term("(cast[\"f32\"] (cast[\"bf16\"] ?x))");
  run({"cast-sum", "cast-mul", "cast-cast"});
  EXPECT_TRUE(equiv(s, "(sum (cast[\"f32\"] ?a) (cast[\"f32\"] ?b))"));
  EXPECT_TRUE(equiv(m, "(mul (cast[\"bf16\"] ?x) (cast[\"bf16\"] ?x))"));
  EXPECT_TRUE(equiv(c, "?x"));
}

// A cast to an integer (truncation) or from one is not exact: none of these apply.
TEST_F(Elementwise, IntegerCastIsNotTreatedAsExact) {
  leaf("a", {2}, DType::F32);
  leaf("b", {2}, DType::F32);
  leaf("i", {2}, DType::I64);
  leaf("j", {2}, DType::I64);
  eg::Id s = term("(cast[\"i64\"] (sum ?a ?b))");
  eg::Id d = term("(cast[\"i64\"] (div ?a ?b))");
  eg::Id c = term("(cast[\"f32\"] (cast[\"i64\"] ?a))");
  eg::Id f = term("(cast[\"f32\"] (sum ?i ?j))");
  run({"cast-sum", "cast-div", "cast-cast"});
  EXPECT_FALSE(equiv(s, "(sum (cast[\"i64\"] ?a) (cast[\"i64\"] ?b))"));
  EXPECT_FALSE(equiv(d, "(div (cast[\"i64\"] ?a) (cast[\"i64\"] ?b))"));
  EXPECT_FALSE(equiv(c, "?a"));
  EXPECT_FALSE(equiv(c, "(cast[\"f32\"] ?a)"));
  EXPECT_FALSE(equiv(f, "(sum (cast[\"f32\"] ?i) (cast[\"f32\"] ?j))"));
}

TEST_F(Elementwise, NonlinearUnaryDoesNotDistributeOverSum) {
  leaf("a", {2});
  leaf("b", {2});
  eg::Id e = term("(exp (sum ?a ?b))");
  run({"exp-concat", "exp-slice", "exp-transpose", "exp-permute", "exp-reshape", "neg-sum"});
  EXPECT_FALSE(equiv(e, "(sum (exp ?a) (exp ?b))"));
}

TEST_F(Elementwise, BinaryBothConcatSameSplit) {
  leaf("a1", {2, 3});
  leaf("a2", {4, 3});
  leaf("b1", {2, 3});
  leaf("b2", {4, 3});
  eg::Id x = term("(sub (concat[0] ?a1 ?a2) (concat[0] ?b1 ?b2))");
  run({"sub-concat-lhs"});
  EXPECT_TRUE(equiv(x, "(concat[0] (sub ?a1 ?b1) (sub ?a2 ?b2))"));
}

TEST_F(Elementwise, BinaryOtherSideSlicedWhenSplitDiffers) {
  leaf("a1", {2, 3});
  leaf("a2", {4, 3});
  leaf("b1", {3, 3});
  leaf("b2", {3, 3});
  eg::Id x = term("(add (concat[0] ?a1 ?a2) (concat[0] ?b1 ?b2))");
  run({"add-concat-lhs"});
  EXPECT_TRUE(equiv(x, "(concat[0] (add ?a1 (slice[0, 0, 2, 1] (concat[0] ?b1 ?b2))) "
                       "(add ?a2 (slice[0, 2, 6, 1] (concat[0] ?b1 ?b2))))"));
}

TEST_F(Elementwise, BinaryConcatOnTheRightKeepsOperandOrder) {
  leaf("a1", {2, 3});
  leaf("a2", {4, 3});
  leaf("y", {6, 3});
  eg::Id add = term("(add ?y (concat[0] ?a1 ?a2))");
  eg::Id sub = term("(sub ?y (concat[0] ?a1 ?a2))");
  eg::Id div = term("(div (concat[0] ?a1 ?a2) ?y)");
  run({"add-concat-rhs", "sub-concat-rhs", "div-concat-lhs"});
  EXPECT_TRUE(equiv(add, "(concat[0] (add (slice[0, 0, 2, 1] ?y) ?a1) (add (slice[0, 2, 6, 1] ?y) ?a2))"));
  EXPECT_TRUE(equiv(sub, "(concat[0] (sub (slice[0, 0, 2, 1] ?y) ?a1) (sub (slice[0, 2, 6, 1] ?y) ?a2))"));
  EXPECT_FALSE(equiv(sub, "(concat[0] (sub ?a1 (slice[0, 0, 2, 1] ?y)) (sub ?a2 (slice[0, 2, 6, 1] ?y)))"));
  EXPECT_TRUE(equiv(div, "(concat[0] (div ?a1 (slice[0, 0, 2, 1] ?y)) (div ?a2 (slice[0, 2, 6, 1] ?y)))"));
}

TEST_F(Elementwise, BinaryWithBroadcastOperand) {
  leaf("a", {2, 3});
  leaf("b", {4, 3});
  leaf("row", {3});      // no dim at the concat dim
  leaf("one", {1, 3});   // size 1 at the concat dim
  constant("k", 0.5);
  eg::Id m = term("(mul (concat[0] ?a ?b) ?row)");
  eg::Id d = term("(div ?one (concat[0] ?a ?b))");
  eg::Id s = term("(mul ?k (concat[0] ?a ?b))");
  run({"mul-concat-lhs", "mul-concat-rhs", "div-concat-rhs"});
  EXPECT_TRUE(equiv(m, "(concat[0] (mul ?a ?row) (mul ?b ?row))"));
  EXPECT_TRUE(equiv(d, "(concat[0] (div ?one ?a) (div ?one ?b))"));
  EXPECT_TRUE(equiv(s, "(concat[0] (mul ?k ?a) (mul ?k ?b))"));
}

TEST_F(Elementwise, BinaryConcatDimShiftsWithBroadcastRank) {
  leaf("a", {2, 3});
  leaf("b", {2, 3});
  leaf("y", {5, 4, 3});
  eg::Id x = term("(add (concat[0] ?a ?b) ?y)");
  run({"add-concat-lhs"});
  // Result [5, 4, 3]: the concat dim 0 of [4, 3] is dim 1 of the result; y is sliced along 1.
  EXPECT_TRUE(equiv(x, "(concat[1] (add ?a (slice[1, 0, 2, 1] ?y)) (add ?b (slice[1, 2, 4, 1] ?y)))"));
}

TEST_F(Elementwise, BroadcastConcatSideIsLeftAlone) {
  leaf("a", {1, 3});
  leaf("y", {4, 3});
  term("(add (concat[0] ?a) ?y)");  // the concat has size 1 along d and is broadcast
  auto r = run({"add-concat-lhs"});
  EXPECT_EQ(r.firings["add-concat-lhs"], 0u);
}

TEST_F(Elementwise, MulDivOverSum) {
  leaf("a", {2, 3});
  leaf("b", {2, 3});
  leaf("y", {3});
  eg::Id l = term("(mul (sum ?a ?b) ?y)");
  eg::Id r = term("(mul ?y (sum ?a ?b))");
  eg::Id d = term("(div (sum ?a ?b) ?y)");
  eg::Id bad = term("(div ?y (sum ?a ?b))");
  run({"mul-sum-lhs", "mul-sum-rhs", "div-sum"});
  EXPECT_TRUE(equiv(l, "(sum (mul ?a ?y) (mul ?b ?y))"));
  EXPECT_TRUE(equiv(r, "(sum (mul ?y ?a) (mul ?y ?b))"));
  EXPECT_TRUE(equiv(d, "(sum (div ?a ?y) (div ?b ?y))"));
  EXPECT_FALSE(equiv(bad, "(sum (div ?y ?a) (div ?y ?b))"));
}

TEST_F(Elementwise, AddOverSumIsNotDistributive) {
  leaf("a", {2});
  leaf("b", {2});
  leaf("y", {2});
  eg::Id x = term("(add (sum ?a ?b) ?y)");
  run({"add-sum-sum", "sub-sum-sum", "mul-sum-lhs", "mul-sum-rhs", "div-sum", "neg-sum", "sum-flatten"});
  EXPECT_FALSE(equiv(x, "(sum (add ?a ?y) (add ?b ?y))"));
  EXPECT_EQ(g.eclass(x).nodes.size(), 1u);
}

TEST_F(Elementwise, AddSubOfTwoSums) {
  leaf("a1", {2});
  leaf("a2", {2});
  leaf("b1", {2});
  leaf("b2", {2});
  leaf("b3", {2});
  eg::Id x = term("(add (sum ?a1 ?a2) (sum ?b1 ?b2))");
  eg::Id y = term("(sub (sum ?a1 ?a2) (sum ?b1 ?b2))");
  eg::Id z = term("(add (sum ?a1 ?a2) (sum ?b1 ?b2 ?b3))");
  run({"add-sum-sum", "sub-sum-sum"});
  EXPECT_TRUE(equiv(x, "(sum (add ?a1 ?b1) (add ?a2 ?b2))"));
  EXPECT_TRUE(equiv(y, "(sum (sub ?a1 ?b1) (sub ?a2 ?b2))"));
  EXPECT_EQ(g.eclass(z).nodes.size(), 1u);  // unequal arity: untouched
}

}  // namespace
}  // namespace tangle::lemmas::testing
