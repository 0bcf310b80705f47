// E-graph growth and relation budgets on replicated computations, the two
// failure classes HF transformers' causal-mask construction showed: a vector
// related to its own shift (torch.diff with prepend) and values every rank
// computes several times over.
#include "infer_support.h"

namespace tangle::testing {
namespace {

// d = x[1:] - x[:-1] over the prepended vector cat([x[:1] - 1, x]), then a mask.
const char* kDiffBody =
    "slice_1: \"i64[1, 1]\" = torch.ops.aten.slice.Tensor(x, 1, 0, 1)\n"
    "sub: \"i64[1, 1]\" = torch.ops.aten.sub.Tensor(slice_1, 1)\n"
    "cat: \"i64[1, 17]\" = torch.ops.aten.cat.default([sub, x], -1)\n"
    "slice_2: \"i64[1, 16]\" = torch.ops.aten.slice.Tensor(cat, -1, 0, 16)\n"
    "slice_3: \"i64[1, 16]\" = torch.ops.aten.slice.Tensor(cat, -1, 1, 17)\n"
    "sub_1: \"i64[1, 16]\" = torch.ops.aten.sub.Tensor(slice_3, slice_2)\n"
    "ne: \"b8[1, 16]\" = torch.ops.aten.ne.Scalar(sub_1, 1)\n"
    "return (ne,)";

TEST(InferGrowth, AVectorRelatedToItsOwnShiftStaysSmall) {
  auto c = makeCheck(fx("x: \"i64[1, 16]\"", kDiffBody), fx("x: \"i64[1, 16]\"", kDiffBody), 2, "S.x = D*.x\n");
  const InferResult& res = c->infer();
  EXPECT_EQ(res.verdict, Verdict::Refines);
  ASSERT_EQ(res.outputs.size(), 1u);
  auto out = formatted(res.outputs[0].exprs);
  EXPECT_TRUE(contains(out, "D0.ne")) << ::testing::PrintToString(out);
  EXPECT_TRUE(contains(out, "D1.ne")) << ::testing::PrintToString(out);
  // Enumerating the splits of the 17-element vector reached the node limit
  // (200,000 e-nodes) before the exploration was limited to rearrangements.
  EXPECT_LT(res.stats.enodesMax, 2000u);
}

// Each rank computes the same position vector three times (as HF does for
// the mask and the rotary embedding); the mask must keep a relation on every
// rank, or the rank-local add that uses it is never explored.
TEST(InferGrowth, EveryRankKeepsItsRelationsWhenItHasManyCopies) {
  const char* body =
      "arange: \"i64[8]\" = torch.ops.aten.arange.default(8, device = device(type='cpu'), pin_memory = False)\n"
      "arange_1: \"i64[8]\" = torch.ops.aten.arange.default(8, device = device(type='cpu'), pin_memory = False)\n"
      "arange_2: \"i64[8]\" = torch.ops.aten.arange.default(8, device = device(type='cpu'), pin_memory = False)\n"
      "unsqueeze: \"i64[8, 1]\" = torch.ops.aten.unsqueeze.default(arange_1, 1)\n"
      "le: \"b8[8, 8]\" = torch.ops.aten.le.Tensor(arange_2, unsqueeze)\n"
      "where: \"f32[8, 8]\" = torch.ops.aten.where.ScalarOther(le, s, -1.0)\n"
      "add: \"f32[8, 8]\" = torch.ops.aten.add.Tensor(where, arange)\n"
      "return (add,)";
  auto c = makeCheck(fx("s: \"f32[8, 8]\"", body), fx("s: \"f32[8, 8]\"", body), 4, "S.s = D*.s\n");
  const InferResult& res = c->infer();
  EXPECT_EQ(res.verdict, Verdict::Refines) << (res.failure ? res.failure->reason : "");
  auto rels = relationsFound(res, "S.where");
  for (int r = 0; r < 4; ++r)
    EXPECT_TRUE(contains(rels, "D" + std::to_string(r) + ".where")) << r << ": " << ::testing::PrintToString(rels);
}

}  // namespace
}  // namespace tangle::testing
