#include <gtest/gtest.h>

#include <random>

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

// The fuzz targets reset the tables between inputs (their growth over millions of inputs was an
// out-of-memory report): afterwards ids start again from nothing and the normal form still holds.
TEST(SymExpr, ResetInterningStartsTheTablesAfresh) {
  for (int i = 0; i < 200; ++i) P("s" + std::to_string(i) + "*" + std::to_string(i + 3));
  resetInterning();
  ExprId e = P("7*s5");
  EXPECT_LT(e, 8u);  // var, constant, product: a handful of entries, not the 600 interned before
  EXPECT_EQ(toString(e), "7*S.s5");
  EXPECT_EQ(P("s5 + 6*s5"), e);
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

// Found by fuzz/sym_fuzz.cpp: each of these overflowed the stack, wrapped a
// signed integer (UB, and a wrong size) or took exponential time.
TEST(SymExpr, HostileTextIsAnErrorNotACrashOrAHang) {
  std::string err;
  EXPECT_FALSE(parse(std::string(100000, '(') + "s0" + std::string(100000, ')'), qualifyS, &err));
  EXPECT_NE(err.find("nested more than 200"), std::string::npos) << err;
  EXPECT_FALSE(parse(std::string(100000, '-') + "s0", qualifyS, &err));
  EXPECT_TRUE(parse(std::string(150, '(') + "s0" + std::string(150, ')'), qualifyS, &err)) << err;

  EXPECT_FALSE(parse("4611686018427387904*4", qualifyS, &err));
  EXPECT_NE(err.find("overflows"), std::string::npos) << err;
  EXPECT_FALSE(parse("s0*4611686018427387904*4", qualifyS, &err));
  EXPECT_FALSE(parse("922337203685477580*10 + 922337203685477580*10", qualifyS, &err));

  std::string product;  // (s0+s1)*(s1+s2)*...: 2^20 terms when multiplied out
  for (int i = 0; i < 20; ++i) product += (i ? "*" : "") + ("(s" + std::to_string(i) + "+s" + std::to_string(i + 1) + ")");
  EXPECT_FALSE(parse(product, qualifyS, &err));
  EXPECT_NE(err.find("too large"), std::string::npos) << err;
  std::string power = "s0";
  for (int i = 0; i < 100; ++i) power += "*s0";
  EXPECT_FALSE(parse(power, qualifyS, &err));
  EXPECT_TRUE(parse("s0*s0*s1*s2*s3*(s4 + 1)*(s5 + 2)", qualifyS, &err)) << err;

  // Shared subterms: each level multiplies an opaque `x % s9` into 4 terms, so the written-out
  // tree grows 4x per level while the text grows by a constant (printing it took seconds).
  auto nested = [](int levels) {
    std::string e = "(s0 + s1)";
    for (int i = 0; i < levels; ++i) e = "((" + e + " % s9)*(s1 + s2 + s3 + s4))";
    return e;
  };
  EXPECT_FALSE(parse(nested(12), qualifyS, &err));
  EXPECT_NE(err.find("too large"), std::string::npos) << err;
  EXPECT_FALSE(parse("s0 != " + nested(12), qualifyS, &err));  // the right side of a comparison too
  EXPECT_TRUE(parse(nested(2), qualifyS, &err)) << err;
}

TEST(SymExpr, ArithmeticNeverWraps) {
  ExprId big = constant(INT64_MAX);
  EXPECT_THROW(add(big, constant(1)), Overflow);
  EXPECT_THROW(mul(P("2*s0"), big), Overflow);
  EXPECT_THROW(neg(constant(INT64_MIN)), Overflow);
  EXPECT_EQ(evaluate(mul(P("s0"), P("s1")), [](AtomId) { return std::optional<int64_t>(INT64_MAX); }), std::nullopt);
  EXPECT_EQ(toString(add(P("s0"), constant(INT64_MIN))), "S.s0 - 9223372036854775808");
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

TEST(SymContext, DimHelpersUseTheGivenContext) {
  Context c, other;
  int64_t n = *toDim(var("S.n")), m = *toDim(var("D0.m"));
  EXPECT_FALSE(dimEqual(c, n, m));
  ASSERT_TRUE(c.assumeEqual(fromDim(n), fromDim(m), nullptr));
  EXPECT_TRUE(dimEqual(c, n, m));
  EXPECT_EQ(dimSub(c, n, m), 0);
  EXPECT_EQ(dimSub(c, 4, 5), std::nullopt);
  EXPECT_EQ(dimAdd(c, 3, 4), 7);
  EXPECT_FALSE(dimEqual(other, n, m));  // a fact of c only
  EXPECT_EQ(dimSub(other, n, m), std::nullopt);
}

}  // namespace
}  // namespace tangle::sym

namespace tangle::sym {
namespace {

// The normal form is a rewriting of integer expressions (floor divisions
// pulled apart, nested ones merged, mod expanded): checked against direct
// evaluation of random expression trees at random points.
struct Tree {
  enum Kind { Var, Const, Add, Sub, Mul, Div, Mod } kind;
  int var = 0;
  int64_t k = 0;
  std::vector<Tree> kids;

  int64_t eval(const std::vector<int64_t>& xs) const {
    auto fdiv = [](int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); };
    switch (kind) {
      case Var: return xs[var];
      case Const: return k;
      case Add: return kids[0].eval(xs) + kids[1].eval(xs);
      case Sub: return kids[0].eval(xs) - kids[1].eval(xs);
      case Mul: return kids[0].eval(xs) * kids[1].eval(xs);
      case Div: return fdiv(kids[0].eval(xs), k);
      case Mod: {
        int64_t a = kids[0].eval(xs);
        return a - k * fdiv(a, k);
      }
    }
    return 0;
  }
  ExprId build(const std::vector<ExprId>& vars) const {
    switch (kind) {
      case Var: return vars[var];
      case Const: return constant(k);
      case Add: return add(kids[0].build(vars), kids[1].build(vars));
      case Sub: return sub(kids[0].build(vars), kids[1].build(vars));
      case Mul: return mul(kids[0].build(vars), kids[1].build(vars));
      case Div: return *floorDiv(kids[0].build(vars), k);
      case Mod: return *mod(kids[0].build(vars), k);
    }
    return constant(0);
  }
};

Tree randomTree(std::mt19937& rng, int depth) {
  std::uniform_int_distribution<int> pick(0, depth <= 0 ? 1 : 6);
  Tree t{static_cast<Tree::Kind>(pick(rng))};
  std::uniform_int_distribution<int> var(0, 2);
  std::uniform_int_distribution<int64_t> small(-5, 5), divisor(1, 6);
  if (t.kind == Tree::Var) t.var = var(rng);
  if (t.kind == Tree::Const) t.k = small(rng);
  if (t.kind == Tree::Div || t.kind == Tree::Mod) {
    t.k = divisor(rng);
    t.kids.push_back(randomTree(rng, depth - 1));
  }
  if (t.kind == Tree::Add || t.kind == Tree::Sub || t.kind == Tree::Mul) {
    t.kids.push_back(randomTree(rng, depth - 1));
    t.kids.push_back(randomTree(rng, depth - 1));
  }
  return t;
}

TEST(SymExpr, NormalFormAgreesWithEvaluationOnRandomExpressions) {
  std::mt19937 rng(7);
  std::vector<ExprId> vars = {var("R.a"), var("R.b"), var("R.c")};
  std::uniform_int_distribution<int64_t> point(-20, 20);
  for (int i = 0; i < 2000; ++i) {
    Tree t = randomTree(rng, 4);
    ExprId e = t.build(vars);
    for (int j = 0; j < 5; ++j) {
      std::vector<int64_t> xs = {point(rng), point(rng), point(rng)};
      auto got = evaluate(e, [&](AtomId v) -> std::optional<int64_t> {
        for (size_t k = 0; k < vars.size(); ++k)
          if (poly(vars[k]).terms[0].atoms[0] == v) return xs[k];
        return std::nullopt;
      });
      ASSERT_EQ(got, t.eval(xs)) << toString(e) << " at " << xs[0] << ", " << xs[1] << ", " << xs[2];
    }
  }
}

// Substitutions learnt from equalities keep values: for points that satisfy
// the equalities, an expression and its normal form evaluate alike.
TEST(SymContext, SubstitutionsPreserveValuesOnSolutions) {
  std::mt19937 rng(11);
  ExprId a = var("Q.a"), b = var("Q.b"), c = var("Q.c");
  Context ctx;
  // a = 2*b + c, c = b + 3: solutions are (b, b + 3, 3b + 3).
  ASSERT_TRUE(ctx.assumeEqual(a, add(mul(constant(2), b), c), nullptr));
  ASSERT_TRUE(ctx.assumeEqual(c, add(b, constant(3)), nullptr));
  std::uniform_int_distribution<int64_t> point(-20, 20);
  for (int i = 0; i < 500; ++i) {
    Tree t = randomTree(rng, 4);
    ExprId e = t.build({a, b, c});
    int64_t bv = point(rng);
    std::vector<int64_t> xs = {3 * bv + 3, bv, bv + 3};
    auto at = [&](AtomId v) -> std::optional<int64_t> {
      if (v == poly(a).terms[0].atoms[0]) return xs[0];
      if (v == poly(b).terms[0].atoms[0]) return xs[1];
      if (v == poly(c).terms[0].atoms[0]) return xs[2];
      return std::nullopt;
    };
    ASSERT_EQ(evaluate(ctx.canon(e), at), t.eval(xs)) << toString(e) << " -> " << toString(ctx.canon(e));
  }
}

}  // namespace
}  // namespace tangle::sym

namespace tangle::sym {
namespace {

TEST(SymContext, SamplesSatisfyTheFacts) {
  Context c;
  ExprId n = var("P.n"), m = var("P.m");
  c.noteSize(n);
  ASSERT_TRUE(c.assumeEqual(*mod(n, 3), constant(0), nullptr));   // n divisible by 3
  ASSERT_TRUE(c.assumeEqual(m, add(n, constant(1)), nullptr));     // m is n + 1: substituted
  // Sample the variable left after substitution (one of n, m).
  std::vector<AtomId> free = leaves(c.canon(add(n, m)));
  ASSERT_EQ(free.size(), 1u);
  auto samples = c.sample(free, 10, 1, 10);
  ASSERT_FALSE(samples.empty());
  for (auto& a : samples) {
    auto nv = c.valueOf(n, a), mv = c.valueOf(m, a);
    ASSERT_TRUE(nv && mv);
    EXPECT_EQ(*nv % 3, 0);
    EXPECT_EQ(*mv, *nv + 1);
  }
  EXPECT_LE(samples.size(), 4u);  // n in {0, 3, 6, 9} at most, given m = n + 1 in [1, 10]
}

}  // namespace
}  // namespace tangle::sym

namespace tangle::sym {
namespace {
// An equality between a spec size and a rank's size is kept as a substitution
// of the spec's variable; which variable is the spec's comes from the graph
// recorded for it (var(name, graph)), not from its name.
TEST(SymContext, SpecVariablesAreSubstitutedByGraphNotByName) {
  ExprId spec = var("Q.n", -1), rank = var("S.m", 0);  // names that would mislead a prefix test
  Context c;
  ASSERT_TRUE(c.assumeEqual(spec, rank, nullptr));
  EXPECT_EQ(c.canon(spec), rank);
  EXPECT_EQ(c.canon(rank), rank);
  EXPECT_EQ(varGraph(leaves(spec).at(0)), -1);
  EXPECT_EQ(varGraph(leaves(rank).at(0)), 0);
}
}  // namespace
}  // namespace tangle::sym
