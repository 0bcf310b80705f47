// Limits and expectations: a search stopped by a limit is inconclusive,
// never a violation or a pass; expectations are checked after the walk.
#include "infer_support.h"

namespace tangle::testing {
namespace {

const char* kMmBody = "mm: \"f32[4, 6]\" = torch.ops.aten.mm.default(A, B)\nreturn (mm,)";
const char* kRel = "S.A = shard(D*.A, dim=1)\nS.B = shard(D*.B, dim=0)\n";

std::unique_ptr<Check> innerShardedMatmul(const std::string& extra = "") {
  return makeCheck(fx("A: \"f32[4, 8]\", B: \"f32[8, 6]\"", kMmBody), fx("A: \"f32[4, 4]\", B: \"f32[4, 6]\"", kMmBody), 2,
                   kRel + extra);
}

std::unique_ptr<Check> allReducedMatmul(const std::string& extra) {
  return makeCheck(fx("A: \"f32[4, 8]\", B: \"f32[8, 6]\"", kMmBody),
                   fx("A: \"f32[4, 4]\", B: \"f32[4, 6]\"",
                      "mm: \"f32[4, 6]\" = torch.ops.aten.mm.default(A, B)\n"
                      "all_reduce: \"f32[4, 6]\" = torch.ops._c10d_functional.all_reduce.default(mm, 'sum', '0')\n"
                      "wait_tensor: \"f32[4, 6]\" = torch.ops._c10d_functional.wait_tensor.default(all_reduce)\n"
                      "return (wait_tensor,)"),
                   2, kRel + extra);
}

// The paper's Figure 2 (reduce-scatter variant): mm, then sub.
std::unique_ptr<Check> reduceScatterMatmulSub(const std::string& extra = "") {
  return makeCheck(fx("A: \"f32[4, 8]\", B: \"f32[8, 6]\", E: \"f32[4, 6]\"",
                      "mm: \"f32[4, 6]\" = torch.ops.aten.mm.default(A, B)\n"
                      "sub: \"f32[4, 6]\" = torch.ops.aten.sub.Tensor(mm, E)\nreturn (sub,)"),
                   fx("A: \"f32[4, 4]\", B: \"f32[4, 6]\", E: \"f32[2, 6]\"",
                      "mm: \"f32[4, 6]\" = torch.ops.aten.mm.default(A, B)\n"
                      "reduce_scatter_tensor: \"f32[2, 6]\" = torch.ops._c10d_functional.reduce_scatter_tensor.default(mm, 'sum', 2, '0')\n"
                      "wait_tensor: \"f32[2, 6]\" = torch.ops._c10d_functional.wait_tensor.default(reduce_scatter_tensor)\n"
                      "sub: \"f32[2, 6]\" = torch.ops.aten.sub.Tensor(wait_tensor, E)\nreturn (sub,)"),
                   2, kRel + std::string("S.E = shard(D*.E, dim=0)\n") + extra);
}

void expectInconclusive(const InferResult& res, const std::string& reason) {
  EXPECT_EQ(res.verdict, Verdict::Inconclusive);
  ASSERT_TRUE(res.failure);
  EXPECT_TRUE(res.failure->limitReached);
  EXPECT_NE(res.failure->reason.find(reason), std::string::npos) << res.failure->reason;
}

TEST(InferLimits, WithoutLimitsTheExampleRefines) {
  auto c = reduceScatterMatmulSub();
  const InferResult& res = c->infer();
  EXPECT_EQ(res.verdict, Verdict::Refines);
  ASSERT_EQ(res.outputs.size(), 1u);
  EXPECT_TRUE(contains(formatted(res.outputs[0].exprs), "concat(D0.sub, D1.sub, dim=0)"));
}

TEST(InferLimits, TinyNodeBudgetIsInconclusive) {
  auto c = reduceScatterMatmulSub();
  InferOptions opts;
  opts.maxNodes = 10;
  expectInconclusive(c->infer(opts), "search limit");
  EXPECT_EQ(c->specName(c->result.failure->node), "S.sub");
  EXPECT_TRUE(contains(relationsFound(c->result, "S.mm"), "sum(D0.mm, D1.mm)"));  // found before the limit
}

TEST(InferLimits, NoLemmaIterationIsInconclusive) {
  auto c = reduceScatterMatmulSub();
  InferOptions opts;
  opts.maxIterations = 0;
  expectInconclusive(c->infer(opts), "search limit");
}

TEST(InferLimits, OptionsFromTheRelationFile) {
  auto c = reduceScatterMatmulSub("option max_nodes = 10\n");
  expectInconclusive(c->inferWithRelationOptions(), "search limit");
}

// A limit only matters when nothing clean was found: a relation found is a
// proof whatever the search did not get to.
TEST(InferLimits, ARelationFoundBeforeTheLimitStands) {
  auto c = innerShardedMatmul();
  InferOptions opts;
  opts.maxNodes = 10;
  const InferResult& res = c->infer(opts);
  EXPECT_EQ(res.verdict, Verdict::Refines);
  EXPECT_TRUE(contains(relationsFound(res, "S.mm"), "sum(D0.mm, D1.mm)"));
}

TEST(InferLimits, RunTimeLimitStopsBeforeTheFirstOperator) {
  auto c = innerShardedMatmul();
  InferOptions opts;
  opts.totalSeconds = 0;
  expectInconclusive(c->infer(opts), "run's time limit");
  EXPECT_EQ(c->specName(c->result.failure->node), "S.mm");
  EXPECT_EQ(c->result.stats.opsProcessed, 0u);
}

TEST(InferExpectations, HoldsWhenEveryRankHasTheFullResult) {
  auto c = allReducedMatmul("expect S.mm = D*.wait_tensor\n");
  const InferResult& res = c->infer();
  EXPECT_EQ(res.verdict, Verdict::Refines);
  ASSERT_EQ(res.expectations.size(), 2u);  // one per rank
  for (auto& e : res.expectations) EXPECT_TRUE(e.holds);
  EXPECT_TRUE(res.uncheckedExpectations.empty());
}

// Expectations with one left side share an e-graph (expectations.cpp); a
// wrong one among right ones is still refused, and the results keep the
// relation file's order.
TEST(InferExpectations, AWrongOneAmongRightOnesWithTheSameLeftSideIsRefused) {
  auto c = allReducedMatmul("expect S.mm = D0.wait_tensor\nexpect S.mm = D1.mm\nexpect S.mm = D1.wait_tensor\n");
  const InferResult& res = c->infer();
  EXPECT_EQ(res.verdict, Verdict::Violation);
  ASSERT_EQ(res.expectations.size(), 3u);
  EXPECT_TRUE(res.expectations[0].holds);
  EXPECT_FALSE(res.expectations[1].holds);  // rank 1's partial product, before the all-reduce
  EXPECT_FALSE(res.expectations[1].limitReached);
  EXPECT_TRUE(res.expectations[2].holds);
  EXPECT_EQ(res.expectations[1].expectation->rhs.toString(), "D1.mm");
}

TEST(InferExpectations, RefusedWhileACleanSumExists) {
  auto c = innerShardedMatmul("expect S.mm = D*.mm\n");
  const InferResult& res = c->infer();
  EXPECT_EQ(res.verdict, Verdict::Violation);
  EXPECT_FALSE(res.failure);
  ASSERT_EQ(res.expectations.size(), 2u);
  for (auto& e : res.expectations) {
    EXPECT_FALSE(e.holds);
    EXPECT_TRUE(contains(formatted(e.known), "sum(D0.mm, D1.mm)")) << ::testing::PrintToString(formatted(e.known));
  }
  ASSERT_EQ(res.outputs.size(), 1u);
  EXPECT_TRUE(contains(formatted(res.outputs[0].exprs), "sum(D0.mm, D1.mm)"));
}

// The expectation's own e-graph is searched under the same limits. Here the
// walk needs no lemma (replicated inputs: S.mm = D*.mm by congruence) but the
// expectation does (slice of a concat): with no lemma iteration allowed it is
// not shown to hold, and that is inconclusive, not a refusal.
std::unique_ptr<Check> replicatedMatmul() {
  const char* body = "mm: \"f32[4, 6]\" = torch.ops.aten.mm.default(A, B)\nreturn (mm,)";
  return makeCheck(fx("A: \"f32[4, 8]\", B: \"f32[8, 6]\"", body), fx("A: \"f32[4, 8]\", B: \"f32[8, 6]\"", body), 2,
                   "S.A = D*.A\nS.B = D*.B\n"
                   "expect S.mm = slice(concat(D0.mm, D1.mm, dim=0), dim=0, start=0, end=4)\n");
}

TEST(InferExpectations, ExpectationNeedingALemmaHolds) {
  auto c = replicatedMatmul();
  const InferResult& res = c->infer();
  EXPECT_EQ(res.verdict, Verdict::Refines);
  ASSERT_EQ(res.expectations.size(), 1u);
  EXPECT_TRUE(res.expectations[0].holds);
}

// The same with two right sides sharing the left side: each is unproved, not refused.
TEST(InferExpectations, ACutSharedExpectationSearchIsInconclusive) {
  const char* body = "mm: \"f32[4, 6]\" = torch.ops.aten.mm.default(A, B)\nreturn (mm,)";
  auto c = makeCheck(fx("A: \"f32[4, 8]\", B: \"f32[8, 6]\"", body), fx("A: \"f32[4, 8]\", B: \"f32[8, 6]\"", body), 2,
                     "S.A = D*.A\nS.B = D*.B\n"
                     "expect S.mm = slice(concat(D0.mm, D1.mm, dim=0), dim=0, start=0, end=4)\n"
                     "expect S.mm = slice(concat(D1.mm, D0.mm, dim=0), dim=0, start=0, end=4)\n");
  InferOptions opts;
  opts.maxIterations = 0;
  const InferResult& res = c->infer(opts);
  ASSERT_EQ(res.expectations.size(), 2u);
  for (auto& e : res.expectations) {
    EXPECT_FALSE(e.holds);
    EXPECT_TRUE(e.limitReached);
  }
  EXPECT_EQ(res.verdict, Verdict::Inconclusive);
  EXPECT_EQ(c->infer().verdict, Verdict::Refines);  // with the lemmas, both hold
}

TEST(InferExpectations, ACutExpectationSearchIsInconclusive) {
  auto c = replicatedMatmul();
  InferOptions opts;
  opts.maxIterations = 0;
  const InferResult& res = c->infer(opts);
  EXPECT_FALSE(res.failure);
  ASSERT_EQ(res.expectations.size(), 1u);
  EXPECT_FALSE(res.expectations[0].holds);
  EXPECT_TRUE(res.expectations[0].limitReached);
  EXPECT_EQ(res.verdict, Verdict::Inconclusive);
}

// Megatron's loss ends in `div(loss, 1)` on both sides: div-one relates the
// spec output to the impl's input of that division. With `output S.div` the
// walk need not explore the impl's division, so the expectation's e-graph
// holds the named tensor's definition (a fact of the impl graph); with no
// output line (strict outputs) the walk explores it to reach an impl output.
// A division by 2 in the impl alone is a violation either way.
std::unique_ptr<Check> lossDividedBy(const std::string& implDivisor, const std::string& extra) {
  auto body = [](const std::string& d) {
    return "mm: \"f32[4, 6]\" = torch.ops.aten.mm.default(A, B)\n"
           "div: \"f32[4, 6]\" = torch.ops.aten.div.Tensor(mm, " + d + ")\nreturn (div,)";
  };
  return makeCheck(fx("A: \"f32[4, 8]\", B: \"f32[8, 6]\"", body("1")),
                   fx("A: \"f32[4, 8]\", B: \"f32[8, 6]\"", body(implDivisor)), 2,
                   "S.A = D*.A\nS.B = D*.B\n" + extra + "expect S.div = D*.div\n");
}

TEST(InferExpectations, AnIdentityOpOnTheNamedOutputHolds) {
  for (const char* extra : {"output S.div\n", ""}) {
    auto c = lossDividedBy("1", extra);
    const InferResult& res = c->infer();
    EXPECT_EQ(res.verdict, Verdict::Refines) << extra << (res.failure ? res.failure->reason : "");
    ASSERT_EQ(res.expectations.size(), 2u) << extra;
    for (auto& e : res.expectations) EXPECT_TRUE(e.holds) << extra;
  }
}

TEST(InferExpectations, ADifferentDivisorOnTheNamedOutputIsAViolation) {
  auto named = lossDividedBy("2", "output S.div\n");
  const InferResult& res = named->infer();
  EXPECT_EQ(res.verdict, Verdict::Violation);
  ASSERT_EQ(res.expectations.size(), 2u);
  for (auto& e : res.expectations) EXPECT_FALSE(e.holds);
  auto strict = lossDividedBy("2", "");
  EXPECT_EQ(strict->infer().verdict, Verdict::Violation);
}

// A refusal whose search saturated stays a violation, whatever else was cut.
TEST(InferExpectations, ASaturatedRefusalOutranksACutOne) {
  InferResult res;
  Expectation e1, e2;
  ExpectationResult cut, refused;
  cut.expectation = &e1;
  cut.limitReached = true;
  refused.expectation = &e2;
  res.expectations = {cut};
  EXPECT_EQ(verdictOf(res), Verdict::Inconclusive);
  res.expectations.push_back(refused);
  EXPECT_EQ(verdictOf(res), Verdict::Violation);
}

TEST(InferExpectations, UncheckedWhenAnOperatorFailsFirst) {
  auto c = makeCheck(fx("A: \"f32[4, 6]\", B: \"f32[6, 6]\"", "mm: \"f32[4, 6]\" = torch.ops.aten.mm.default(A, B)\nreturn (mm,)"),
                     fx("A: \"f32[2, 6]\", B: \"f32[6, 3]\"", "mm: \"f32[2, 3]\" = torch.ops.aten.mm.default(A, B)\nreturn (mm,)"), 2,
                     "S.A = shard(D*.A, dim=0)\nS.B = shard(D*.B, dim=1)\nexpect S.A = shard(D*.A, dim=0)\n");
  const InferResult& res = c->infer();
  EXPECT_EQ(res.verdict, Verdict::Violation);
  ASSERT_TRUE(res.failure);
  EXPECT_TRUE(res.expectations.empty());
  EXPECT_EQ(res.uncheckedExpectations.size(), 1u);
}

}  // namespace
}  // namespace tangle::testing
