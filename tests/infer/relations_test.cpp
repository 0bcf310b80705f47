// The relations the inference finds (R and R_o), through inferRelations.
#include "infer_support.h"

namespace tangle::testing {
namespace {

const char* kMmBody = "mm: \"f32[4, 6]\" = torch.ops.aten.mm.default(A, B)\nreturn (mm,)";

// The paper's Figure 1 without the all-reduce: A split by columns, B by rows.
std::unique_ptr<Check> innerShardedMatmul(const std::string& extra = "") {
  return makeCheck(fx("A: \"f32[4, 8]\", B: \"f32[8, 6]\"", kMmBody),
                   fx("A: \"f32[4, 4]\", B: \"f32[4, 6]\"", kMmBody), 2,
                   "S.A = shard(D*.A, dim=1)\nS.B = shard(D*.B, dim=0)\n" + extra);
}

TEST(InferRelations, InnerShardedMatmulIsTheSumOfPartialProducts) {
  auto c = innerShardedMatmul();
  const InferResult& res = c->infer();
  EXPECT_EQ(res.verdict, Verdict::Refines);
  ASSERT_FALSE(res.failure);
  EXPECT_TRUE(contains(relationsFound(res, "S.mm"), "sum(D0.mm, D1.mm)")) << ::testing::PrintToString(relationsFound(res, "S.mm"));
  ASSERT_EQ(res.outputs.size(), 1u);
  EXPECT_EQ(res.outputs[0].tensor, "S.mm");
  EXPECT_TRUE(contains(formatted(res.outputs[0].exprs), "sum(D0.mm, D1.mm)"));
  EXPECT_FALSE(res.outputs[0].deferred);
  EXPECT_EQ(res.stats.specOps, 1u);
  EXPECT_EQ(res.stats.implOps, 2u);
  EXPECT_EQ(res.stats.opsProcessed, 1u);
  EXPECT_GT(res.stats.firings.at("mm-concat-inner"), 0u);
}

TEST(InferRelations, ColumnParallelMatmulIsAConcat) {
  auto c = makeCheck(fx("x: \"f32[4, 8]\", w: \"f32[8, 6]\"", "mm: \"f32[4, 6]\" = torch.ops.aten.mm.default(x, w)\nreturn (mm,)"),
                     fx("x: \"f32[4, 8]\", w: \"f32[8, 3]\"", "mm: \"f32[4, 3]\" = torch.ops.aten.mm.default(x, w)\nreturn (mm,)"), 2,
                     "S.x = D*.x\nS.w = shard(D*.w, dim=1)\n");
  const InferResult& res = c->infer();
  EXPECT_EQ(res.verdict, Verdict::Refines);
  ASSERT_EQ(res.outputs.size(), 1u);
  EXPECT_TRUE(contains(formatted(res.outputs[0].exprs), "concat(D0.mm, D1.mm, dim=1)"))
      << ::testing::PrintToString(formatted(res.outputs[0].exprs));
}

// With the all-reduce every rank holds the full product: the output relation
// is over the implementation outputs (the returned wait_tensor).
TEST(InferRelations, AllReducedMatmulIsEachRanksResult) {
  auto c = makeCheck(fx("A: \"f32[4, 8]\", B: \"f32[8, 6]\"", kMmBody),
                     fx("A: \"f32[4, 4]\", B: \"f32[4, 6]\"",
                        "mm: \"f32[4, 6]\" = torch.ops.aten.mm.default(A, B)\n"
                        "all_reduce: \"f32[4, 6]\" = torch.ops._c10d_functional.all_reduce.default(mm, 'sum', '0')\n"
                        "wait_tensor: \"f32[4, 6]\" = torch.ops._c10d_functional.wait_tensor.default(all_reduce)\n"
                        "return (wait_tensor,)"),
                     2, "S.A = shard(D*.A, dim=1)\nS.B = shard(D*.B, dim=0)\n");
  const InferResult& res = c->infer();
  EXPECT_EQ(res.verdict, Verdict::Refines);
  ASSERT_EQ(res.outputs.size(), 1u);
  auto out = formatted(res.outputs[0].exprs);
  EXPECT_TRUE(contains(out, "D0.wait_tensor")) << ::testing::PrintToString(out);
  EXPECT_TRUE(contains(out, "D1.wait_tensor")) << ::testing::PrintToString(out);
  EXPECT_FALSE(contains(out, "sum(D0.mm, D1.mm)"));  // not returned by the implementation
  EXPECT_TRUE(contains(relationsFound(res, "S.mm"), "sum(D0.mm, D1.mm)"));
}

// Every rank's own relation is kept for a replicated value (cleanRelations).
TEST(InferRelations, ReplicatedValueKeepsARelationOnEveryRank) {
  const char* body = "neg: \"f32[4, 6]\" = torch.ops.aten.neg.default(x)\nreturn (neg,)";
  auto c = makeCheck(fx("x: \"f32[4, 6]\"", body), fx("x: \"f32[4, 6]\"", body), 2, "S.x = D*.x\n");
  const InferResult& res = c->infer();
  EXPECT_EQ(res.verdict, Verdict::Refines);
  auto found = relationsFound(res, "S.neg");
  EXPECT_TRUE(contains(found, "D0.neg")) << ::testing::PrintToString(found);
  EXPECT_TRUE(contains(found, "D1.neg")) << ::testing::PrintToString(found);
}

// Data parallelism over two replicas times tensor parallelism over two
// ranks: a value replicated within each tensor-parallel group keeps one
// relation per position in the groups (each rank's own copies throughout),
// not one per rank that mixes a rank's copy with another position's.
TEST(InferRelations, ReplicasKeepOneRelationPerPositionInTheirGroups) {
  const char* body = "neg: \"f32[%d, 6]\" = torch.ops.aten.neg.default(x)\nreturn (neg,)";
  char spec[128], impl[128];
  std::snprintf(spec, sizeof spec, body, 4);
  std::snprintf(impl, sizeof impl, body, 2);
  auto c = makeCheck(fx("x: \"f32[4, 6]\"", spec), fx("x: \"f32[2, 6]\"", impl), 4,
                     "S.x = concat(D0.x, D2.x, dim=0)\nS.x = concat(D1.x, D3.x, dim=0)\n");
  const InferResult& res = c->infer();
  EXPECT_EQ(res.verdict, Verdict::Refines);
  auto found = relationsFound(res, "S.neg");
  EXPECT_TRUE(contains(found, "concat(D0.neg, D2.neg, dim=0)")) << ::testing::PrintToString(found);
  EXPECT_TRUE(contains(found, "concat(D1.neg, D3.neg, dim=0)")) << ::testing::PrintToString(found);
  EXPECT_FALSE(contains(found, "concat(D1.neg, D2.neg, dim=0)")) << ::testing::PrintToString(found);
  EXPECT_FALSE(contains(found, "concat(D0.neg, D3.neg, dim=0)")) << ::testing::PrintToString(found);
}

// A rank whose copies sit at different positions in their groups (rank 1 is
// the second copy of the first piece and the first of the second) keeps a
// term of its own; the others take their positions' terms.
TEST(InferRelations, ARankAtMixedPositionsKeepsItsOwnRelation) {
  const char* specBody = "neg: \"f32[4, 6]\" = torch.ops.aten.neg.default(x)\nreturn (neg,)";
  const char* implBody =
      "nx: \"f32[2, 6]\" = torch.ops.aten.neg.default(x)\n"
      "ny: \"f32[2, 6]\" = torch.ops.aten.neg.default(y)\nreturn (nx, ny)";
  auto c = makeCheck(fx("x: \"f32[4, 6]\"", specBody), fx("x: \"f32[2, 6]\", y: \"f32[2, 6]\"", implBody), 3,
                     "S.x = concat(D0.x, D1.y, dim=0)\nS.x = concat(D1.x, D2.y, dim=0)\n");
  const InferResult& res = c->infer();
  EXPECT_EQ(res.verdict, Verdict::Refines);
  auto found = relationsFound(res, "S.neg");
  EXPECT_TRUE(contains(found, "concat(D0.nx, D1.ny, dim=0)")) << ::testing::PrintToString(found);
  EXPECT_TRUE(contains(found, "concat(D1.nx, D2.ny, dim=0)")) << ::testing::PrintToString(found);
  EXPECT_TRUE(contains(found, "concat(D1.nx, D1.ny, dim=0)")) << ::testing::PrintToString(found);
}

// R_o: without `output` statements a graph output must be rebuilt from the
// implementation's outputs, not from tensors it computed and dropped.
TEST(InferRelations, GraphOutputsMustBeRebuiltFromImplementationOutputs) {
  std::string impl = fx("A: \"f32[4, 4]\", B: \"f32[4, 6]\"",
                        "mm: \"f32[4, 6]\" = torch.ops.aten.mm.default(A, B)\n"
                        "neg: \"f32[4, 6]\" = torch.ops.aten.neg.default(mm)\nreturn (neg,)");
  std::string spec = fx("A: \"f32[4, 8]\", B: \"f32[8, 6]\"", kMmBody);
  const char* rel = "S.A = shard(D*.A, dim=1)\nS.B = shard(D*.B, dim=0)\n";
  auto strict = makeCheck(spec, impl, 2, rel);
  const InferResult& res = strict->infer();
  EXPECT_EQ(res.verdict, Verdict::Violation);
  ASSERT_TRUE(res.failure);
  EXPECT_EQ(strict->specName(res.failure->tensor), "S.mm");
  EXPECT_FALSE(res.failure->limitReached);
  EXPECT_NE(res.failure->reason.find("that its graphs do not return: sum(D0.mm, D1.mm)"), std::string::npos)
      << res.failure->reason;

  // Named with `output`, any implementation tensor will do.
  auto named = makeCheck(spec, impl, 2, std::string(rel) + "output S.mm\n");
  const InferResult& ok = named->infer();
  EXPECT_EQ(ok.verdict, Verdict::Refines);
  ASSERT_EQ(ok.outputs.size(), 1u);
  EXPECT_TRUE(contains(formatted(ok.outputs[0].exprs), "sum(D0.mm, D1.mm)"));
}

// Listing 3: only the implementation nodes whose inputs are related are explored.
TEST(InferRelations, ExplorationCountsTheRelatedImplementationNodes) {
  auto c = innerShardedMatmul();
  EXPECT_EQ(c->infer().stats.exploredImplNodes, 2u);  // D0.mm and D1.mm
  EXPECT_GT(c->result.stats.enodesMax, 0u);
  EXPECT_GE(c->result.stats.enodesTotal, c->result.stats.enodesMax);
}

}  // namespace
}  // namespace tangle::testing
