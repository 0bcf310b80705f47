// Typed scalar constants (src/lemmas/typed_const.cpp), the identity lemmas
// (x + 0, x * 1; arange.cpp) and the search control that keeps identity
// operands from moving through rearrangements (isIdentityOperand).
#include "lemma_fixture.h"

#include "lemmas/lemma_util.h"

namespace tangle::lemmas::testing {
namespace {

using TypedConst = LemmaTest;

TEST_F(TypedConst, AMaskedZeroOfAnIntegerDtypeMeetsTheLiteral) {
  // Megatron's vocab-parallel embedding: masked_input[mask] = 0 lowers to
  // where(mask, cast[i64](const 0), t); the vocab lemmas build where(.., 0, ..).
  leaf("m", {4, 8}, DType::Bool);
  leaf("t", {4, 8}, DType::I64);
  constant("zero", 0);
  eg::Id typed = term("(where ?m (cast[\"i64\"] ?zero) ?t)");
  run({"where-untype-const-then"});
  EXPECT_TRUE(equiv(typed, "(where ?m ?zero ?t)"));
  EXPECT_EQ(type(typed)->dtype, DType::I64);
  EXPECT_EQ(type(vars.classes["zero"])->dtype, DType::Unknown);  // the literal stays dtype-less
}

TEST_F(TypedConst, ArithmeticOnEitherSide) {
  leaf("x", {4, 8});
  constant("two", 2);
  eg::Id a = term("(mul (cast[\"f32\"] ?two) ?x)");
  eg::Id b = term("(sub ?x (cast[\"f32\"] ?two))");
  run({"mul-untype-const-lhs", "sub-untype-const-rhs"});
  EXPECT_TRUE(equiv(a, "(mul ?two ?x)"));
  EXPECT_TRUE(equiv(b, "(sub ?x ?two)"));
}

TEST_F(TypedConst, AValueTheDtypeRoundsStaysTyped) {
  leaf("x", {4, 8}, DType::F16);
  leaf("i", {4, 8}, DType::I64);
  leaf("f", {4, 8});
  constant("tenth", 0.1);
  constant("half", 0.5);
  constant("big", 16777217.0);  // 2^24 + 1: not an f32
  term("(add ?x (cast[\"f16\"] ?tenth))");
  term("(add ?i (cast[\"i64\"] ?half))");
  term("(add ?f (cast[\"f32\"] ?big))");
  auto r = run({"add-untype-const-rhs"});
  EXPECT_EQ(r.firings["add-untype-const-rhs"], 0u);
}

TEST_F(TypedConst, AConstantThatChangesTheResultDtypeStaysTyped) {
  // i64 + 0-d f32 tensor is f32; i64 + literal 2 is i64.
  leaf("i", {4, 8}, DType::I64);
  constant("two", 2);
  eg::Id s = term("(add ?i (cast[\"f32\"] ?two))");
  auto r = run({"add-untype-const-rhs"});
  EXPECT_EQ(r.firings["add-untype-const-rhs"], 0u);
  EXPECT_EQ(type(s)->dtype, DType::F32);
}

TEST_F(TypedConst, HoldsExactly) {
  using detail::holdsExactly;
  EXPECT_TRUE(holdsExactly(DType::F16, 0.5));
  EXPECT_TRUE(holdsExactly(DType::F16, 65504));
  EXPECT_FALSE(holdsExactly(DType::F16, 65505));
  EXPECT_FALSE(holdsExactly(DType::F16, 2049));        // 11 significant bits
  EXPECT_TRUE(holdsExactly(DType::F16, 0x1p-24));      // the smallest subnormal
  EXPECT_FALSE(holdsExactly(DType::F16, 0x1p-25));
  EXPECT_TRUE(holdsExactly(DType::BF16, 256));
  EXPECT_FALSE(holdsExactly(DType::BF16, 257));
  EXPECT_TRUE(holdsExactly(DType::F32, 16777216));
  EXPECT_FALSE(holdsExactly(DType::F32, 16777217));
  EXPECT_FALSE(holdsExactly(DType::F32, 0.1));
  EXPECT_TRUE(holdsExactly(DType::F64, 0.1));
  EXPECT_TRUE(holdsExactly(DType::I8, -128));
  EXPECT_FALSE(holdsExactly(DType::U8, -1));
  EXPECT_FALSE(holdsExactly(DType::I64, 0.5));
  EXPECT_TRUE(holdsExactly(DType::Bool, 1));
  EXPECT_FALSE(holdsExactly(DType::Bool, 2));
}

// --- identities ---

TEST_F(TypedConst, IdentityOpsAreRemoved) {
  leaf("x", {8, 4});
  constant("zero", 0);
  constant("one", 1);
  eg::Id a = term("(add ?zero ?x)");
  eg::Id b = term("(sub ?x ?zero)");
  eg::Id c = term("(div ?x ?one)");
  run({"add-zero-lhs", "sub-zero", "div-one"});
  EXPECT_TRUE(equiv(a, "?x"));
  EXPECT_TRUE(equiv(b, "?x"));
  EXPECT_TRUE(equiv(c, "?x"));
}

TEST_F(TypedConst, ZeroMinusXAndAPromotingZeroAreNoIdentity) {
  leaf("x", {8, 4});
  leaf("i", {8, 4}, DType::I64);
  constant("zero", 0);
  constant("one", 1);
  term("(sub ?zero ?x)");                  // -x
  term("(div ?one ?x)");                   // 1/x
  term("(add ?i (cast[\"f32\"] ?zero))");  // f32, not i
  auto r = run({"sub-zero", "div-one", "add-zero-rhs"});
  EXPECT_EQ(r.firings["sub-zero"] + r.firings["div-one"] + r.firings["add-zero-rhs"], 0u);
}

TEST_F(TypedConst, AnIdentityOperandDoesNotMoveThroughRearrangements) {
  // HF's arange(T) + 0: moving the +0 onto every slice / reshape of the range
  // only multiplies e-nodes (HF TP=8); a real shift still moves.
  leaf("x", {8, 4});
  constant("zero", 0);
  constant("one", 1);
  constant("three", 3);
  term("(add (slice[0, 0, 4, 1] ?x) ?zero)");
  term("(mul (reshape[[32]] ?x) ?one)");
  term("(add ?zero (permute[[1, 0]] ?x))");
  term("(add (concat[0] ?x ?x) ?zero)");
  eg::Id shifted = term("(add (slice[0, 0, 4, 1] ?x) ?three)");
  auto r = run({"add-scalar-slice", "mul-scalar-reshape", "add-scalar-permute-rhs", "add-concat-lhs"}, 2);
  EXPECT_EQ(r.firings["add-scalar-reshape"] + r.firings["mul-scalar-reshape"] + r.firings["add-scalar-permute-rhs"] +
                r.firings["add-concat-lhs"],
            0u);
  EXPECT_GE(r.firings["add-scalar-slice"], 1u);
  EXPECT_TRUE(equiv(shifted, "(slice[0, 0, 4, 1] (add ?x ?three))"));
}

}  // namespace
}  // namespace tangle::lemmas::testing
