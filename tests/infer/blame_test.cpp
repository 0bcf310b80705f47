// Violations: which operator is blamed, with which input relations and
// which implementation nodes it was compared with; deferred chains blame
// their origin.
#include "infer_support.h"

namespace tangle::testing {
namespace {

// The paper's bug 4: A's rows and B's columns split, so each rank computes
// only a diagonal block of the product.
std::unique_ptr<Check> offDiagonalMatmul(const std::string& extra = "") {
  return makeCheck(fx("A: \"f32[4, 6]\", B: \"f32[6, 6]\"", "mm: \"f32[4, 6]\" = torch.ops.aten.mm.default(A, B)\nreturn (mm,)"),
                   fx("A: \"f32[2, 6]\", B: \"f32[6, 3]\"", "mm: \"f32[2, 3]\" = torch.ops.aten.mm.default(A, B)\nreturn (mm,)"), 2,
                   "S.A = shard(D*.A, dim=0)\nS.B = shard(D*.B, dim=1)\n" + extra);
}

std::vector<std::string> namesOf(const Check& c, const std::vector<int>& implNodes) {
  std::vector<std::string> out;
  for (int d : implNodes) out.push_back(c.implName(d));
  return out;
}

TEST(InferBlame, WrongShardingBlamesTheOperatorWithItsInputRelations) {
  auto c = offDiagonalMatmul();
  const InferResult& res = c->infer();
  EXPECT_EQ(res.verdict, Verdict::Violation);
  ASSERT_TRUE(res.failure);
  const Failure& f = *res.failure;
  EXPECT_EQ(c->specName(f.node), "S.mm");
  EXPECT_EQ(c->specName(f.tensor), "S.mm");
  EXPECT_EQ(f.gaveUpAt, -1);
  EXPECT_FALSE(f.limitReached);
  EXPECT_NE(f.reason.find("no clean expression"), std::string::npos) << f.reason;
  EXPECT_GT(f.enodes, 0u);
  ASSERT_EQ(f.inputRelations.size(), 2u);
  EXPECT_EQ(f.inputRelations[0].tensor, "S.A");
  EXPECT_EQ(formatted(f.inputRelations[0].exprs), std::vector<std::string>{"concat(D0.A, D1.A, dim=0)"});
  EXPECT_EQ(f.inputRelations[1].tensor, "S.B");
  EXPECT_EQ(formatted(f.inputRelations[1].exprs), std::vector<std::string>{"concat(D0.B, D1.B, dim=1)"});
  // The implementation operators it was compared with (T_rel's explored nodes).
  auto nearby = namesOf(*c, f.nearbyImpl);
  EXPECT_TRUE(contains(nearby, "D0.mm")) << ::testing::PrintToString(nearby);
  EXPECT_TRUE(contains(nearby, "D1.mm")) << ::testing::PrintToString(nearby);
  EXPECT_TRUE(res.all.empty());
  EXPECT_TRUE(res.outputs.empty());
}

// Without the all-reduce the partial products are related (a sum), and the
// bias add is the first operator that cannot be rebuilt.
TEST(InferBlame, MissingAllReduceBlamesTheBiasAdd) {
  auto c = makeCheck(fx("h: \"f32[4, 8]\", w: \"f32[8, 6]\", b: \"f32[6]\"",
                        "mm: \"f32[4, 6]\" = torch.ops.aten.mm.default(h, w)\n"
                        "add: \"f32[4, 6]\" = torch.ops.aten.add.Tensor(mm, b)\nreturn (add,)"),
                     fx("h: \"f32[4, 4]\", w: \"f32[4, 6]\", b: \"f32[6]\"",
                        "mm: \"f32[4, 6]\" = torch.ops.aten.mm.default(h, w)\n"
                        "add: \"f32[4, 6]\" = torch.ops.aten.add.Tensor(mm, b)\nreturn (add,)"),
                     2, "S.h = shard(D*.h, dim=1)\nS.w = shard(D*.w, dim=0)\nS.b = D*.b\n");
  const InferResult& res = c->infer();
  EXPECT_EQ(res.verdict, Verdict::Violation);
  ASSERT_TRUE(res.failure);
  EXPECT_EQ(c->specName(res.failure->node), "S.add");
  EXPECT_EQ(res.stats.opsProcessed, 2u);
  EXPECT_TRUE(contains(relationsFound(res, "S.mm"), "sum(D0.mm, D1.mm)"));
  ASSERT_EQ(res.failure->inputRelations.size(), 2u);
  EXPECT_EQ(res.failure->inputRelations[0].tensor, "S.mm");
  EXPECT_TRUE(contains(formatted(res.failure->inputRelations[0].exprs), "sum(D0.mm, D1.mm)"));
  EXPECT_EQ(res.failure->inputRelations[1].tensor, "S.b");
  EXPECT_TRUE(contains(namesOf(*c, res.failure->nearbyImpl), "D0.add"));
}

// relu in the spec, sigmoid in the implementation: S.a has no clean
// relation, is carried (deferred) to its consumer, which is an output and
// cannot be carried further: the chain's first operator is blamed.
std::unique_ptr<Check> wrongActivation() {
  return makeCheck(fx("x: \"f32[4, 6]\"", "a: \"f32[4, 6]\" = torch.ops.aten.relu.default(x)\n"
                                         "b: \"f32[4, 6]\" = torch.ops.aten.neg.default(a)\nreturn (b,)"),
                   fx("x: \"f32[4, 6]\"", "a: \"f32[4, 6]\" = torch.ops.aten.sigmoid.default(x)\n"
                                         "b: \"f32[4, 6]\" = torch.ops.aten.neg.default(a)\nreturn (b,)"),
                   2, "S.x = D*.x\n");
}

TEST(InferBlame, DeferredChainBlamesItsOrigin) {
  auto c = wrongActivation();
  const InferResult& res = c->infer();
  EXPECT_EQ(res.verdict, Verdict::Violation);
  ASSERT_TRUE(res.failure);
  const Failure& f = *res.failure;
  EXPECT_EQ(c->specName(f.node), "S.a");    // the chain's origin
  EXPECT_EQ(c->specName(f.tensor), "S.a");
  ASSERT_GE(f.gaveUpAt, 0);
  EXPECT_EQ(c->specName(f.gaveUpAt), "S.b");  // where the search stopped
  ASSERT_EQ(f.inputRelations.size(), 1u);    // the origin's inputs, not S.b's
  EXPECT_EQ(f.inputRelations[0].tensor, "S.x");
  // S.a was carried as one non-clean expression over implementation tensors.
  ASSERT_EQ(res.all.size(), 1u);
  EXPECT_EQ(res.all[0].tensor, "S.a");
  EXPECT_TRUE(res.all[0].deferred);
  ASSERT_EQ(res.all[0].exprs.size(), 1u);
  std::string carried = formatTerm(res.all[0].exprs[0]);
  EXPECT_NE(carried.find("relu("), std::string::npos) << carried;
  EXPECT_EQ(carried.find("S."), std::string::npos) << carried;
}

TEST(InferBlame, WithoutDeferringTheFirstOperatorFails) {
  auto c = wrongActivation();
  InferOptions opts;
  opts.maxDeferred = 0;
  const InferResult& res = c->infer(opts);
  EXPECT_EQ(res.verdict, Verdict::Violation);
  ASSERT_TRUE(res.failure);
  EXPECT_EQ(c->specName(res.failure->node), "S.a");
  EXPECT_EQ(res.failure->gaveUpAt, -1);
  EXPECT_EQ(res.stats.opsProcessed, 1u);
  EXPECT_TRUE(res.all.empty());
}

}  // namespace
}  // namespace tangle::testing
