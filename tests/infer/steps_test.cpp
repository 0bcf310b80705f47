// The steps of one operator's search (src/infer/operator_search.h), run one
// by one on small problems.
#include "infer/operator_search.h"
#include "infer_support.h"

namespace tangle::testing {
namespace {

const char* kMmBody = "mm: \"f32[4, 6]\" = torch.ops.aten.mm.default(A, B)\nreturn (mm,)";

std::unique_ptr<Check> innerShardedMatmul() {
  return makeCheck(fx("A: \"f32[4, 8]\", B: \"f32[8, 6]\"", kMmBody), fx("A: \"f32[4, 4]\", B: \"f32[4, 6]\"", kMmBody), 2,
                   "S.A = shard(D*.A, dim=1)\nS.B = shard(D*.B, dim=0)\n");
}

std::vector<std::string> implNames(const Check& c, const std::vector<int>& nodes) {
  std::vector<std::string> out;
  for (int d : nodes) out.push_back(c.implName(d));
  return out;
}

TEST(InferSteps, SeedSaturateExploreConclude) {
  auto c = innerShardedMatmul();
  std::vector<SpecOp> order;
  auto st = prepareState(*c, {}, order);
  ASSERT_EQ(order.size(), 1u);
  EXPECT_EQ(c->specName(order[0].node), "S.mm");
  InferStats stats;
  st->marks.nextOperator();
  OperatorSearch s(order[0]);

  // seed: the inputs' relations name the implementation inputs: T_rel's start.
  ASSERT_FALSE(seed(*st, s));
  auto related = implNames(*c, s.related);
  std::sort(related.begin(), related.end());
  EXPECT_EQ(related, (std::vector<std::string>{"D0.A", "D0.B", "D1.A", "D1.B"}));
  EXPECT_TRUE(s.explored.empty());

  // saturate: mm over the concats becomes a sum of per-rank products, which
  // are not clean until the implementation's mm nodes join the e-graph.
  saturate(*st, s, stats);
  EXPECT_TRUE(s.clean.empty());
  EXPECT_FALSE(s.limitHit);
  EXPECT_GT(stats.firings.at("mm-concat-inner"), 0u);

  // explore T_rel: D0.mm and D1.mm read only related tensors.
  exploreRelated(*st, s, stats);
  auto explored = implNames(*c, s.explored);
  std::sort(explored.begin(), explored.end());
  EXPECT_EQ(explored, (std::vector<std::string>{"D0.mm", "D1.mm"}));
  EXPECT_TRUE(contains(formatted(s.clean), "sum(D0.mm, D1.mm)"));
  EXPECT_FALSE(s.detours);
  EXPECT_TRUE(contains(implNames(*c, s.related), "D0.mm"));  // used by a clean expression: related

  // conclude: R gets the clean expressions; stats are recorded.
  EXPECT_FALSE(conclude(*st, s, stats));
  EXPECT_TRUE(contains(formatted(st->rels[order[0].node]), "sum(D0.mm, D1.mm)"));
  EXPECT_TRUE(contains(formatted(st->outRels[order[0].node]), "sum(D0.mm, D1.mm)"));  // graph output: R_o
  EXPECT_EQ(stats.enodesTotal, s.g.numNodes());
  EXPECT_EQ(stats.exploredImplNodes, 2u);
}

// A value computed from a relation file's declared constant only (a backward
// seed 1/n from `const D*.n = 8`) is input-free, as one computed from a source
// is: the constants are known once the relation is loaded, after the state's
// constructor first marked input-free tensors.
TEST(InferSteps, DeclaredConstantsMakeTheirValuesInputFree) {
  std::string spec = fx("x: \"f32[4]\"", "y: \"f32[4]\" = torch.ops.aten.neg.default(x)\nreturn (y,)");
  std::string impl = fx("x: \"f32[4]\", n: \"f32[]\"",
                        "r: \"f32[]\" = torch.ops.aten.reciprocal.default(n)\n"
                        "s: \"f32[4]\" = torch.ops.aten.mul.Tensor(x, r)\n"
                        "y: \"f32[4]\" = torch.ops.aten.neg.default(x)\n"
                        "return (y, s)");
  auto c = makeCheck(spec, impl, 2, "S.x = D*.x\nconst D*.n = 8\n");
  InferState st(c->problem(), lemmas::allLemmas(), {});
  loadInputRelations(st);
  EXPECT_TRUE(st.implInputFree[static_cast<size_t>(c->implId("D1.n"))]);
  EXPECT_TRUE(st.implInputFree[static_cast<size_t>(c->implId("D1.r"))]);  // 1/n
  EXPECT_FALSE(st.implInputFree[static_cast<size_t>(c->implId("D1.s"))]);  // reads x
  EXPECT_FALSE(st.implInputFree[static_cast<size_t>(c->implId("D1.x"))]);
}

TEST(InferSteps, NextBatchTakesUsersWhoseInputsAreAllRelated) {
  // D.mm2 also reads C, which no relation names: it is not explored.
  const char* impl = "mm: \"f32[4, 6]\" = torch.ops.aten.mm.default(A, B)\n"
                     "mm2: \"f32[4, 6]\" = torch.ops.aten.mm.default(A, C)\nreturn (mm, mm2)";
  auto c = makeCheck(fx("A: \"f32[4, 8]\", B: \"f32[8, 6]\"", kMmBody),
                     fx("A: \"f32[4, 4]\", B: \"f32[4, 6]\", C: \"f32[4, 6]\"", impl), 2,
                     "S.A = shard(D*.A, dim=1)\nS.B = shard(D*.B, dim=0)\noutput S.mm\n");
  std::vector<SpecOp> order;
  auto st = prepareState(*c, {}, order);
  st->marks.nextOperator();
  OperatorSearch s(order[0]);
  ASSERT_FALSE(seed(*st, s));
  EXPECT_FALSE(inRel(*st, c->implId("D0.C")));
  EXPECT_TRUE(inRel(*st, c->implId("D0.A")));
  auto batch = implNames(*c, nextBatch(*st, s, false));
  std::sort(batch.begin(), batch.end());
  EXPECT_EQ(batch, (std::vector<std::string>{"D0.mm", "D1.mm"}));
  EXPECT_TRUE(s.frontier.empty());
  EXPECT_TRUE(nextBatch(*st, s, false).empty());  // nothing newly related
}

// The implementation adds x to b after a detour through a buffer that also
// holds a tensor no relation names (junk): Listing 3 never reaches the add,
// the detour phase does (same operator as the spec, some inputs related).
std::unique_ptr<Check> detourThroughBuffer() {
  return makeCheck(fx("x: \"f32[4, 8]\", b: \"f32[4, 8]\"", "add: \"f32[4, 8]\" = torch.ops.aten.add.Tensor(x, b)\nreturn (add,)"),
                   fx("x: \"f32[4, 8]\", b: \"f32[4, 8]\", junk: \"f32[4, 8]\"",
                      "cat: \"f32[4, 16]\" = torch.ops.aten.cat.default([b, junk], 1)\n"
                      "slice_1: \"f32[4, 8]\" = torch.ops.aten.slice.Tensor(cat, 1, 0, 8)\n"
                      "add: \"f32[4, 8]\" = torch.ops.aten.add.Tensor(x, slice_1)\nreturn (add,)"),
                   2, "S.x = D*.x\nS.b = D*.b\n");
}

TEST(InferSteps, DetoursAddSameOperatorNodesAfterTheDefinitionsBehindThem) {
  auto c = detourThroughBuffer();
  std::vector<SpecOp> order;
  auto st = prepareState(*c, {}, order);
  ASSERT_EQ(order.size(), 1u);
  EXPECT_NE(detourOperator(*st, order[0]), 0u);  // add is not a rearrangement
  EXPECT_TRUE(isDetour(*st, c->implId("D0.add"), detourOperator(*st, order[0])));
  EXPECT_FALSE(isDetour(*st, c->implId("D0.cat"), detourOperator(*st, order[0])));
  st->marks.nextOperator();
  OperatorSearch s(order[0]);
  ASSERT_FALSE(seed(*st, s));
  InferStats stats;
  saturate(*st, s, stats);
  EXPECT_TRUE(nextBatch(*st, s, false).empty());  // Listing 3 alone: nothing to add
  auto batch = implNames(*c, startDetours(*st, s));
  EXPECT_TRUE(s.detours);
  // Operands before their users: cat, slice, then the add itself, per rank.
  EXPECT_EQ(batch, (std::vector<std::string>{"D0.cat", "D0.slice_1", "D0.add", "D1.cat", "D1.slice_1", "D1.add"}));
}

TEST(InferSteps, DetourFindsTheRelation) {
  auto c = detourThroughBuffer();
  const InferResult& res = c->infer();
  EXPECT_EQ(res.verdict, Verdict::Refines) << (res.failure ? res.failure->reason : "");
  ASSERT_EQ(res.outputs.size(), 1u);
  auto out = formatted(res.outputs[0].exprs);
  EXPECT_TRUE(contains(out, "D0.add")) << ::testing::PrintToString(out);
}

TEST(InferSteps, DeferredChainTakesTheLongestAndEarliestInput) {
  auto c = makeCheck(fx("x: \"f32[4, 6]\"", "a: \"f32[4, 6]\" = torch.ops.aten.relu.default(x)\n"
                                           "b: \"f32[4, 6]\" = torch.ops.aten.neg.default(x)\n"
                                           "c: \"f32[4, 6]\" = torch.ops.aten.add.Tensor(a, b)\nreturn (c,)"),
                     fx("x: \"f32[4, 6]\"", "c: \"f32[4, 6]\" = torch.ops.aten.neg.default(x)\nreturn (c,)"), 2, "S.x = D*.x\n");
  std::vector<SpecOp> order;
  auto st = prepareState(*c, {}, order);
  ASSERT_EQ(order.size(), 3u);
  const SpecOp& add = order[2];
  int a = c->specId("S.a"), b = c->specId("S.b");
  EXPECT_EQ(deferredChain(*st, add).depth, 0u);
  EXPECT_EQ(deferredChain(*st, add).origin, add.reported);
  st->deferredDepth[b] = 2;
  st->deferredOrigin[b] = b;
  st->deferredDepth[a] = 1;
  st->deferredOrigin[a] = a;
  DeferredChain chain = deferredChain(*st, add);
  EXPECT_EQ(chain.depth, 2u);
  EXPECT_EQ(chain.origin, std::min(a, b));
  Failure f;
  blameChainOrigin(*st, add, chain, f);
  EXPECT_EQ(f.node, std::min(a, b));
  EXPECT_EQ(f.gaveUpAt, add.reported);
}

}  // namespace
}  // namespace tangle::testing
