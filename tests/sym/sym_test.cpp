#include <gtest/gtest.h>

#include "sym/context.h"
#include "sym/expr.h"

namespace tangle::sym {
namespace {

std::string qualifyS(std::string_view n) { return "S." + std::string(n); }
ExprId P(std::string_view text) {
  std::string err;
  auto e = parse(text, qualifyS, &err);
  EXPECT_TRUE(e) << err;
  return e ? *e : constant(0);
}

TEST(SymExpr, NormalFormMakesEqualExpressionsOneId) {
  EXPECT_EQ(P("s0 + s1"), P("s1 + s0"));
  EXPECT_EQ(P("2*s77"), P("s77 + s77"));
  EXPECT_EQ(P("s77 - ((s77//2)) + (s77//2)"), P("s77"));
  EXPECT_EQ(P("(s0 + 1)*(s0 - 1)"), P("s0**2 - 1"));
  EXPECT_NE(P("s0"), P("s1"));
  EXPECT_EQ(constantValue(P("3*4 - 2")), 10);
}

TEST(SymExpr, FloorDivisionPullsOutMultiplesOfTheDivisor) {
  EXPECT_EQ(P("(2*s0 + 4)//2"), P("s0 + 2"));
  EXPECT_EQ(P("(4*s0 + 1)//2"), P("2*s0"));  // floor((4s+1)/2) = 2s
  EXPECT_EQ(P("((s0//2)//3)"), P("s0//6"));
  EXPECT_EQ(P("FloorDiv(s0, 2)"), P("s0//2"));
  EXPECT_EQ(P("s0 % 2"), P("s0 - 2*(s0//2)"));
  EXPECT_EQ(P("Mod(2*s0, 2)"), constant(0));
  EXPECT_EQ(constantValue(P("-7//2")), -4);  // Python floor semantics
  EXPECT_EQ(constantValue(P("-7 % 2")), 1);
}

TEST(SymExpr, UnknownCallsAreOpaqueAtomsAndPrintQualified) {
  ExprId m = P("Max(1, s0)");
  EXPECT_EQ(m, P("Max(1,s0)"));
  EXPECT_EQ(toString(m), "Max(1, S.s0)");
  EXPECT_EQ(toString(P("2*s77 - (s77//2) + 1")), "2*S.s77 - (S.s77//2) + 1");
  EXPECT_EQ(toString(P("s0 // s1")), "(S.s0//S.s1)");  // division by a symbol: opaque
}

TEST(SymExpr, SyntaxErrorsAreReported) {
  std::string err;
  EXPECT_FALSE(parse("s0 +", qualifyS, &err));
  EXPECT_NE(err.find("s0 +"), std::string::npos);
  EXPECT_FALSE(parse("s0 $ 2", qualifyS, &err));
}

TEST(SymExpr, DimsEncodeSymbolicExpressionsAsNegatives) {
  EXPECT_EQ(toDim(constant(7)), 7);
  EXPECT_EQ(toDim(constant(-1)), std::nullopt);
  auto d = toDim(P("s0"));
  ASSERT_TRUE(d && *d < 0);
  EXPECT_EQ(fromDim(*d), P("s0"));
  EXPECT_EQ(dimToString(*d), "S.s0");
}

TEST(SymContext, EqualitiesBecomeSubstitutions) {
  Context c;
  ExprId s = var("S.n"), a = var("D0.n"), b = var("D1.n");
  ASSERT_TRUE(c.assumeEqual(s, add(a, b), nullptr));
  EXPECT_EQ(c.canon(s), add(a, b));  // the spec symbol is eliminated first
  ASSERT_TRUE(c.assumeEqual(a, b, nullptr));
  EXPECT_EQ(c.canon(s), mul(constant(2), a));
  EXPECT_TRUE(c.proveEqual(*floorDiv(s, 2), a));
  EXPECT_FALSE(c.proveEqual(s, a));
}

TEST(SymContext, ContradictionsAreRefused) {
  Context c;
  ExprId n = var("S.n");
  c.noteSize(n);
  std::string why;
  ASSERT_TRUE(c.assumeEqual(n, mul(constant(2), var("D0.m")), nullptr));
  // n is even now: n = 2m + 1 has no solution.
  EXPECT_FALSE(c.assumeEqual(n, add(mul(constant(2), var("D1.m")), constant(1)), &why));
  EXPECT_NE(why.find("contradicts"), std::string::npos) << why;
  EXPECT_FALSE(c.assumeEqual(constant(3), constant(4), &why));
  // A size is never negative.
  EXPECT_FALSE(c.assumeLE(n, constant(-1), false, &why));
}

TEST(SymContext, InequalitiesGoThroughZ3) {
  Context c;
  ExprId n = var("S.n");
  c.noteSize(n);
  EXPECT_TRUE(c.proveLE(*floorDiv(n, 2), n));  // from n >= 0
  EXPECT_FALSE(c.proveLT(*floorDiv(n, 2), n));  // n = 0
  ASSERT_TRUE(c.assumeLE(constant(1), n, false, nullptr));
  EXPECT_TRUE(c.proveLT(*floorDiv(n, 2), n));
  // Evenness is a fact Z3 uses: 2*(n//2) == n.
  EXPECT_FALSE(c.proveEqual(mul(constant(2), *floorDiv(n, 2)), n));
  ASSERT_TRUE(c.assumeEqual(*mod(n, 2), constant(0), nullptr));
  EXPECT_TRUE(c.proveEqual(mul(constant(2), *floorDiv(n, 2)), n));
}

TEST(SymContext, DimHelpersUseTheCurrentContext) {
  Context c;
  int64_t n = *toDim(var("S.n")), m = *toDim(var("D0.m"));
  EXPECT_FALSE(dimEqual(n, m));
  {
    Scope scope(c);
    ASSERT_TRUE(c.assumeEqual(fromDim(n), fromDim(m), nullptr));
    EXPECT_TRUE(dimEqual(n, m));
    EXPECT_EQ(dimSub(n, m), 0);
    EXPECT_EQ(dimSub(4, 5), std::nullopt);
    EXPECT_EQ(dimAdd(3, 4), 7);
  }
  EXPECT_FALSE(dimEqual(n, m));  // the scope ended
}

}  // namespace
}  // namespace tangle::sym
