// Operator reuse across repeated blocks (src/infer/reuse.cpp): the same
// verdicts and relations with reuse on and off, a planted bug in block k of n
// found at the same operator, and a one-operator difference in a later
// block's footprint defeating the reuse for that operator.
#include "infer_support.h"

#include "infer/reuse.h"
#include "lower/inplace.h"

namespace tangle::testing {
namespace {

// n Megatron-style MLP blocks x' = x + mm(relu(mm(x, w1)), w2), TP=2:
// w1 column-parallel, w2 row-parallel, an all-reduce per block.
enum class Plant { None, NegInsteadOfRelu, UnreducedResidual, ReshapedResidual, OtherScale };

// `scaled`: each block also scales relu's output by 2 (x' = x + mm(2 * relu(..), w2)).
std::string specBlocks(int n, bool scaled = false) {
  std::string params = "x0: \"f32[4, 8]\"", body;
  for (int i = 0; i < n; ++i) {
    std::string s = std::to_string(i), next = std::to_string(i + 1);
    params += ", w1_" + s + ": \"f32[8, 16]\", w2_" + s + ": \"f32[16, 8]\"";
    body += "h" + s + ": \"f32[4, 16]\" = torch.ops.aten.mm.default(x" + s + ", w1_" + s + ")\n";
    body += "r" + s + ": \"f32[4, 16]\" = torch.ops.aten.relu.default(h" + s + ")\n";
    std::string in = "r" + s;
    if (scaled) {
      body += "s" + s + ": \"f32[4, 16]\" = torch.ops.aten.mul.Tensor(r" + s + ", 2.0)\n";
      in = "s" + s;
    }
    body += "o" + s + ": \"f32[4, 8]\" = torch.ops.aten.mm.default(" + in + ", w2_" + s + ")\n";
    body += "x" + next + ": \"f32[4, 8]\" = torch.ops.aten.add.Tensor(x" + s + ", o" + s + ")\n";
  }
  return fx(params, body + "return (x" + std::to_string(n) + ",)");
}

// Rank `rank`'s graph; `plant` changes one operator of block `k` on rank 1.
std::string implBlocks(int n, int rank, Plant plant = Plant::None, int k = -1, bool scaled = false) {
  std::string params = "x0: \"f32[4, 8]\"", body;
  for (int i = 0; i < n; ++i) {
    std::string s = std::to_string(i), next = std::to_string(i + 1);
    bool here = rank == 1 && i == k;
    params += ", w1_" + s + ": \"f32[8, 8]\", w2_" + s + ": \"f32[8, 8]\"";
    body += "h" + s + ": \"f32[4, 8]\" = torch.ops.aten.mm.default(x" + s + ", w1_" + s + ")\n";
    std::string act = here && plant == Plant::NegInsteadOfRelu ? "neg" : "relu";
    body += "r" + s + ": \"f32[4, 8]\" = torch.ops.aten." + act + ".default(h" + s + ")\n";
    std::string in = "r" + s;
    if (scaled) {
      std::string factor = here && plant == Plant::OtherScale ? "3.0" : "2.0";
      body += "s" + s + ": \"f32[4, 8]\" = torch.ops.aten.mul.Tensor(r" + s + ", " + factor + ")\n";
      in = "s" + s;
    }
    body += "o" + s + ": \"f32[4, 8]\" = torch.ops.aten.mm.default(" + in + ", w2_" + s + ")\n";
    body += "ar" + s + ": \"f32[4, 8]\" = torch.ops._c10d_functional.all_reduce.default(o" + s + ", 'sum', '0')\n";
    body += "wt" + s + ": \"f32[4, 8]\" = torch.ops._c10d_functional.wait_tensor.default(ar" + s + ")\n";
    std::string operands = "x" + s + ", wt" + s;
    if (here && plant == Plant::UnreducedResidual) operands = "x" + s + ", o" + s;
    if (here && plant == Plant::ReshapedResidual) {
      body += "wv" + s + ": \"f32[32]\" = torch.ops.aten.view.default(wt" + s + ", [32])\n";
      body += "wb" + s + ": \"f32[4, 8]\" = torch.ops.aten.view.default(wv" + s + ", [4, 8])\n";
      operands = "x" + s + ", wb" + s;
    }
    body += "x" + next + ": \"f32[4, 8]\" = torch.ops.aten.add.Tensor(" + operands + ")\n";
  }
  return fx(params, body + "return (x" + std::to_string(n) + ",)");
}

// `restatedAt`: that block's w1 relation is given twice (true, but another list).
std::string blockRelation(int n, int restatedAt = -1) {
  std::string rel = "S.x0 = D*.x0\n";
  for (int i = 0; i < n; ++i) {
    std::string s = std::to_string(i);
    rel += "S.w1_" + s + " = shard(D*.w1_" + s + ", dim=1)\n";
    if (i == restatedAt) rel += "S.w1_" + s + " = concat(D0.w1_" + s + ", D1.w1_" + s + ", dim=1)\n";
    rel += "S.w2_" + s + " = shard(D*.w2_" + s + ", dim=0)\n";
  }
  return rel;
}

std::unique_ptr<Check> blocks(int n, Plant plant = Plant::None, int k = -1, int restatedAt = -1) {
  return makeCheck(specBlocks(n), {implBlocks(n, 0, plant, k), implBlocks(n, 1, plant, k)},
                   blockRelation(n, restatedAt));
}

InferOptions reuse(bool on) {
  InferOptions o;
  o.reuse = on;
  return o;
}

const TensorRelations* entry(const InferResult& res, const std::string& tensor) {
  for (auto& tr : res.all)
    if (tr.tensor == tensor) return &tr;
  return nullptr;
}

void expectSameRelations(const InferResult& on, const InferResult& off) {
  EXPECT_EQ(on.verdict, off.verdict);
  ASSERT_EQ(on.all.size(), off.all.size());
  for (size_t i = 0; i < on.all.size(); ++i) {
    EXPECT_EQ(on.all[i].tensor, off.all[i].tensor);
    EXPECT_EQ(formatted(on.all[i].exprs), formatted(off.all[i].exprs)) << on.all[i].tensor;
    EXPECT_EQ(on.all[i].deferred, off.all[i].deferred) << on.all[i].tensor;
  }
  ASSERT_EQ(on.outputs.size(), off.outputs.size());
  for (size_t i = 0; i < on.outputs.size(); ++i) EXPECT_EQ(formatted(on.outputs[i].exprs), formatted(off.outputs[i].exprs));
}

TEST(OperatorReuse, RepeatedBlocksGiveTheSameRelationsWithAndWithoutReuse) {
  auto c = blocks(6);
  InferResult on = c->infer(reuse(true));
  InferResult off = c->infer(reuse(false));
  EXPECT_EQ(on.verdict, Verdict::Refines);
  expectSameRelations(on, off);
  EXPECT_EQ(off.stats.operatorsReused, 0u);
  // Block 1 reads x1 (a relation found) where block 0 reads x0 (the user's):
  // from block 2 on every operator repeats an earlier one, but the graph
  // output x6, which is always searched; in block 1, the relu and the mm after it.
  EXPECT_EQ(on.stats.operatorsReused, 2u + 3u * 4u + 3u);
  EXPECT_FALSE(on.stats.reuseRerun);
  EXPECT_LT(on.stats.enodesTotal, off.stats.enodesTotal);
  const TensorRelations* r3 = entry(on, "S.r3");
  ASSERT_TRUE(r3);
  EXPECT_GE(r3->reusedFrom, 0);
  EXPECT_EQ(entry(on, "S.x6")->reusedFrom, -1);  // the only target: no earlier target to reuse
}

// A bug planted in one operator of block k on one rank is reported at the
// same operator as without reuse, after blocks that were reused.
TEST(OperatorReuse, PlantedBugInBlockKIsFoundAtTheSameOperator) {
  struct Case {
    Plant plant;
    int k;
    const char* failing;  // the spec operator blamed
    bool reusedBefore;    // operators before it were reused
  };
  for (Case cs : {Case{Plant::NegInsteadOfRelu, 1, "S.r1", false}, Case{Plant::NegInsteadOfRelu, 4, "S.r4", true},
                  Case{Plant::UnreducedResidual, 3, "S.h4", true}}) {
    SCOPED_TRACE(cs.failing);
    auto c = blocks(6, cs.plant, cs.k);
    InferResult on = c->infer(reuse(true));
    InferResult off = c->infer(reuse(false));
    EXPECT_EQ(on.verdict, Verdict::Violation);
    EXPECT_EQ(off.verdict, Verdict::Violation);
    ASSERT_TRUE(on.failure && off.failure);
    EXPECT_EQ(c->specName(on.failure->node), cs.failing);
    EXPECT_EQ(c->specName(off.failure->node), cs.failing);
    EXPECT_EQ(on.failure->reason, off.failure->reason);
    expectSameRelations(on, off);
    EXPECT_EQ(on.stats.reuseRerun, cs.reusedBefore);  // then the verdict was recomputed without reuse
  }
}

// The walk with reuse and no recomputation (infer.cpp's, step by step): the
// spec operators reused, and the one that failed (empty: none).
std::pair<std::vector<std::string>, std::string> firstPass(const Check& c) {
  std::vector<SpecOp> order;
  auto st = prepareState(c, reuse(true), order);
  OperatorReuse reuse;
  InferStats stats;
  std::vector<std::string> reused;
  for (const SpecOp& op : order) {
    std::unordered_set<int> inlined;
    std::vector<std::pair<int, int>> added;
    if (reuse.tryReuse(*st, op, inlined, added)) {
      reused.push_back(c.specName(op.node));
      continue;
    }
    st->marks.nextOperator();
    OperatorSearch s(op, st->symbols);
    std::optional<Failure> failure = seed(*st, s);
    if (!failure) {
      saturate(*st, s, stats);
      exploreRelated(*st, s, stats);
      failure = conclude(*st, s, stats);
    }
    if (failure) return {reused, c.specName(failure->node)};
    reuse.record(*st, s);
  }
  return {reused, ""};
}

// Before the verdict is recomputed, the walk with reuse also stops at the
// planted operator: its footprint does not match any earlier one's.
TEST(OperatorReuse, TheWalkWithReuseStopsAtThePlantedOperator) {
  auto [cleanReused, none] = firstPass(*blocks(6));
  EXPECT_EQ(none, "");
  for (const char* t : {"S.r1", "S.h2", "S.o3", "S.r4"}) EXPECT_TRUE(contains(cleanReused, t)) << t;
  auto [reused, failing] = firstPass(*blocks(6, Plant::NegInsteadOfRelu, 4));
  EXPECT_EQ(failing, "S.r4");
  EXPECT_TRUE(contains(reused, "S.x4"));  // block 3 (S.h4 sees the neg among its users: searched)
  EXPECT_FALSE(contains(reused, "S.r4"));
  const int n = 5, k = 3;
  auto scaled = makeCheck(specBlocks(n, true), {implBlocks(n, 0, Plant::OtherScale, k, true),
                                                implBlocks(n, 1, Plant::OtherScale, k, true)}, blockRelation(n));
  auto [scaledReused, scaledFailing] = firstPass(*scaled);
  EXPECT_EQ(scaledFailing, "S.s3");
  EXPECT_TRUE(contains(scaledReused, "S.r3"));
}

// A difference on one rank in block k (a correct program: the reduced value
// reshaped to a vector and back before the residual add) defeats the reuse
// of the operators whose footprint holds it, and of no other.
TEST(OperatorReuse, OneOperatorDifferenceInALaterBlockDefeatsItsReuse) {
  auto clean = blocks(6);
  auto viewed = blocks(6, Plant::ReshapedResidual, 3);
  InferResult ref = clean->infer(reuse(true));
  InferResult on = viewed->infer(reuse(true));
  InferResult off = viewed->infer(reuse(false));
  EXPECT_EQ(on.verdict, Verdict::Refines);
  expectSameRelations(on, off);
  for (const char* t : {"S.o3", "S.x4"}) {
    EXPECT_GE(entry(ref, t)->reusedFrom, 0) << t;
    EXPECT_EQ(entry(on, t)->reusedFrom, -1) << t;  // D1.ar3's user is a view, not an add
  }
  for (const char* t : {"S.h3", "S.r3", "S.r4", "S.o5"}) EXPECT_GE(entry(on, t)->reusedFrom, 0) << t;
  EXPECT_LT(on.stats.operatorsReused, ref.stats.operatorsReused);
}

// Another list of input relations for a read (block 2's w1 stated twice)
// defeats the reuse of the operator reading it.
TEST(OperatorReuse, ADifferentInputRelationDefeatsTheReuse) {
  auto c = blocks(4, Plant::None, -1, 2);
  InferResult on = c->infer(reuse(true));
  InferResult off = c->infer(reuse(false));
  EXPECT_EQ(on.verdict, Verdict::Refines);
  expectSameRelations(on, off);
  EXPECT_EQ(entry(on, "S.h2")->reusedFrom, -1);
  EXPECT_GE(entry(on, "S.h3")->reusedFrom, 0);
}

// A constant that differs on one rank in block k (a scale of 3 for 2) is
// not renamed away: the same violation, at the same operator, either way.
TEST(OperatorReuse, ADifferentConstantInBlockKIsFound) {
  const int n = 5, k = 3;
  for (Plant plant : {Plant::None, Plant::OtherScale}) {
    auto c = makeCheck(specBlocks(n, true), {implBlocks(n, 0, plant, k, true), implBlocks(n, 1, plant, k, true)},
                       blockRelation(n));
    InferResult on = c->infer(reuse(true));
    InferResult off = c->infer(reuse(false));
    expectSameRelations(on, off);
    if (plant == Plant::None) {
      EXPECT_EQ(on.verdict, Verdict::Refines);
      EXPECT_GE(entry(on, "S.s3")->reusedFrom, 0);
      continue;
    }
    EXPECT_EQ(on.verdict, Verdict::Violation);
    ASSERT_TRUE(on.failure && off.failure);
    EXPECT_EQ(c->specName(on.failure->node), "S.s3");
    EXPECT_EQ(c->specName(off.failure->node), "S.s3");
    EXPECT_TRUE(on.stats.reuseRerun);
  }
}

// The gate's implEqual part: an equality between implementation tensors that
// the earlier e-graph was seeded with (proved by an earlier operator) must hold
// renamed for the new operator, or the renamed relations could rest on an
// equality nobody proved (e.g. a replica computing something else).
TEST(OperatorReuse, ASeededImplEqualityMustHoldRenamed) {
  auto c = blocks(3);
  InferState st(c->problem(), lemmas::allLemmas(), reuse(true));
  Footprint f;
  const int a0 = c->implId("D0.wt0"), a1 = c->implId("D1.wt0");
  const int b0 = c->implId("D0.wt1"), b1 = c->implId("D1.wt1");
  f.mergedEqual = {{a0, a1}};
  Renaming phi(*c->implL);
  ASSERT_TRUE(phi.bindImpl(a0, b0));
  ASSERT_TRUE(phi.bindImpl(a1, b1));
  EXPECT_FALSE(preservesMergedEqualities(st, f, phi));  // nothing proved D0.wt1 = D1.wt1
  st.implEqual[b1].push_back(b0);
  EXPECT_FALSE(preservesMergedEqualities(st, f, phi));  // the pair is directed, as seed merges it
  st.implEqual[b0].push_back(b1);
  EXPECT_TRUE(preservesMergedEqualities(st, f, phi));
  Renaming partial(*c->implL);  // a tensor of the fact outside phi
  ASSERT_TRUE(partial.bindImpl(a0, b0));
  EXPECT_FALSE(preservesMergedEqualities(st, f, partial));
}

// implEqual's bulk paths: pairs grouped by their first tensor are applied once each (a pair
// repeated in a group too), and a long group's membership test (node marks) agrees with a short
// group's (a find) and with what was applied.
TEST(OperatorReuse, ImplEqualPairsApplyOnceAndHoldRenamedByGroup) {
  auto c = blocks(3);
  InferState st(c->problem(), lemmas::allLemmas(), reuse(true));
  ASSERT_GE(c->implL->nodes.size(), 10u);
  std::vector<std::pair<int, int>> pairs = {{0, 1}, {0, 2}, {0, 1}, {0, 3}, {0, 4}, {0, 5}, {0, 6}, {8, 9}};
  std::vector<std::pair<int, int>> added;
  applyImplEqualPairs(st, pairs, &added);
  EXPECT_EQ(added, (std::vector<std::pair<int, int>>{{0, 1}, {0, 2}, {0, 3}, {0, 4}, {0, 5}, {0, 6}, {8, 9}}));
  ASSERT_NE(st.implEqual.find(0), nullptr);
  EXPECT_EQ(*st.implEqual.find(0), (std::vector<int>{1, 2, 3, 4, 5, 6}));
  added.clear();
  applyImplEqualPairs(st, pairs, &added);
  EXPECT_TRUE(added.empty()) << "every pair is known";
  auto same = [](int d) -> const int* {
    static std::vector<int> ids(64);
    ids[static_cast<size_t>(d)] = d;
    return &ids[static_cast<size_t>(d)];
  };
  std::vector<std::pair<int, int>> longGroup = {{0, 1}, {0, 2}, {0, 3}, {0, 4}, {0, 5}, {0, 6}};
  EXPECT_TRUE(holdRenamed(st, longGroup, same));
  longGroup.emplace_back(0, 7);
  EXPECT_FALSE(holdRenamed(st, longGroup, same)) << "0 = 7 was never proved";
  EXPECT_TRUE(holdRenamed(st, {{0, 6}, {8, 9}}, same));
  EXPECT_FALSE(holdRenamed(st, {{9, 8}}, same)) << "pairs are directed";
  EXPECT_FALSE(holdRenamed(st, {{0, 1}}, [](int) -> const int* { return nullptr; })) << "a tensor without image";
  removeImplEqualPairs(st, {{0, 3}});
  EXPECT_FALSE(holdRenamed(st, {{0, 1}, {0, 2}, {0, 3}, {0, 4}, {0, 5}}, same)) << "removed on a rollback";
}

// Seeding a group of copies (each the others' implEqual partner) merges them
// once: the facts recorded for reuse's gate are the merges that joined two
// classes, a spanning set (k - 1 for k copies, not k (k - 1)), and the
// e-graph holds them all in one class.
TEST(OperatorReuse, SeededCopiesAreRecordedAsTheMergesThatJoinedClasses) {
  auto c = blocks(3);
  InferState st(c->problem(), lemmas::allLemmas(), reuse(true));
  ASSERT_GE(c->implL->nodes.size(), 4u);
  const std::vector<int> group = {0, 1, 2, 3};
  std::vector<std::pair<int, int>> all;
  for (int a : group)
    for (int b : group)
      if (a != b) all.emplace_back(a, b);
  applyImplEqualPairs(st, all);
  eg::EGraph g(ops::inferData, st.symbols);
  std::vector<std::pair<int, int>> merged;
  std::vector<int> added = mergeImplEqualities(st, g, group, &merged);
  EXPECT_EQ(merged.size(), group.size() - 1) << ::testing::PrintToString(merged);
  EXPECT_EQ(added.size(), group.size());  // every partner is listed, merged or not
  for (int d : group) EXPECT_EQ(g.find(addLeaf(g, st.impl, d)), g.find(addLeaf(g, st.impl, group[0])));
  EXPECT_TRUE(holdRenamed(st, merged, [](int d) -> const int* {
    static std::vector<int> ids(64);
    ids[static_cast<size_t>(d)] = d;
    return &ids[static_cast<size_t>(d)];
  }));
}

// A tensor an earlier e-graph held only as the partner of a seeded implEqual
// fact (rank 1's copy of a replicated activation, e.g. the input of a weight
// gradient on the other TP rank) maps to the partner of its mate's image.
TEST(OperatorReuse, ASeededPartnerMapsToThePartnerOfItsMatesImage) {
  auto c = blocks(3);
  InferState st(c->problem(), lemmas::allLemmas(), reuse(true));
  auto leaf = [&](int d) {
    eg::Term t;
    t.nodes.push_back({ops::syms().tensor, c->implL->nodes[d].leafAttrs, {}});
    return t;
  };
  const int x1 = c->specId("S.x1"), x2 = c->specId("S.x2");
  const int a0 = c->implId("D0.x1"), a1 = c->implId("D1.x1"), b0 = c->implId("D0.x2"), b1 = c->implId("D1.x2");
  st.rels[x1] = {leaf(a0)};
  st.rels[x2] = {leaf(b0)};
  st.implEqual[a0] = {a1};
  Footprint f;
  f.op = SpecOp{c->specId("S.h1"), c->specId("S.h1"), {x1, c->specId("S.w1_1")}};
  f.spec = {x1};
  f.impl = {a0, a1};
  f.implDef = {0, 0};
  f.mergedEqual = {{a0, a1}};
  const SpecOp op{c->specId("S.h2"), c->specId("S.h2"), {x2, c->specId("S.w1_2")}};
  {
    Renaming phi(*c->implL);  // rank 0's copy of x2 has no partner yet
    EXPECT_FALSE(buildRenaming(st, f, op, phi));
  }
  st.implEqual[b0] = {b1};
  Renaming phi(*c->implL);
  ASSERT_TRUE(buildRenaming(st, f, op, phi));
  ASSERT_TRUE(phi.implOf(a1));
  EXPECT_EQ(*phi.implOf(a1), b1);
  EXPECT_TRUE(preservesMergedEqualities(st, f, phi));
}

// A pipeline: block i of the MLP blocks above on stage i (ranks 2i, 2i+1, a
// TP pair), each stage receiving x_i from the previous one. Rank `bugRank`
// computes neg instead of relu.
std::string stageText(int stages, int rank, int bugRank) {
  const int i = rank / 2;
  const std::string s = std::to_string(i), next = std::to_string(i + 1);
  std::string params = "w1_" + s + ": \"f32[8, 8]\", w2_" + s + ": \"f32[8, 8]\"", body;
  if (i == 0) {
    params = "x0: \"f32[4, 8]\", " + params;
  } else {  // x_i arrives from the same TP position of the previous stage
    body += "c0: \"f32[4, 8]\" = self._tensor_constant0\npg = self._torchbind_obj0\n";
    body += "r0 = torch.ops.c10d.recv_.default([c0], pg, " + std::to_string(rank - 2) + ", 0)\n";
    body += "x" + s + ": \"f32[4, 8]\" = self._tensor_constant0\n";
  }
  body += "h" + s + ": \"f32[4, 8]\" = torch.ops.aten.mm.default(x" + s + ", w1_" + s + ")\n";
  body += "r" + s + ": \"f32[4, 8]\" = torch.ops.aten." + std::string(rank == bugRank ? "neg" : "relu") + ".default(h" + s + ")\n";
  body += "o" + s + ": \"f32[4, 8]\" = torch.ops.aten.mm.default(r" + s + ", w2_" + s + ")\n";
  body += "ar" + s + ": \"f32[4, 8]\" = torch.ops._c10d_functional.all_reduce.default(o" + s + ", 'sum', 'tp" + s + "')\n";
  body += "wt" + s + ": \"f32[4, 8]\" = torch.ops._c10d_functional.wait_tensor.default(ar" + s + ")\n";
  body += "x" + next + ": \"f32[4, 8]\" = torch.ops.aten.add.Tensor(x" + s + ", wt" + s + ")\n";
  if (i + 1 < stages) {
    body += "pg2 = self._torchbind_obj0\n";
    body += "s0 = torch.ops.c10d.send.default([x" + next + "], pg2, " + std::to_string(rank + 2) + ", 0)\n";
  }
  return fx(params, body + "return (x" + next + ",)");
}

std::unique_ptr<Check> pipeline(int stages, int bugRank = -1) {
  auto c = std::make_unique<Check>();
  c->spec = importFxText(specBlocks(stages), "spec.py");
  std::string rel = "S.x0 = D0.x0\nS.x0 = D1.x0\n";
  for (int i = 0; i < stages; ++i) {
    std::string s = std::to_string(i), a = std::to_string(2 * i), b = std::to_string(2 * i + 1);
    rel += "S.w1_" + s + " = concat(D" + a + ".w1_" + s + ", D" + b + ".w1_" + s + ", dim=1)\n";
    rel += "S.w2_" + s + " = concat(D" + a + ".w2_" + s + ", D" + b + ".w2_" + s + ", dim=0)\n";
  }
  for (int r = 0; r < 2 * stages; ++r) {
    c->impl.push_back(importFxText(stageText(stages, r, bugRank), "impl.r" + std::to_string(r) + ".py"));
    functionalizeInplace(c->impl.back());
  }
  c->relation = parseRelationText(rel, "check.rel").expand(2 * stages);
  LowerOptions lo;
  lo.groups = c->relation.groups;
  c->specL = std::make_unique<LGraph>(lowerSpec(c->spec, lo, c->symbols));
  c->implL = std::make_unique<LGraph>(lowerImpl(c->impl, lo, c->symbols));
  return c;
}

// A later stage repeats an earlier stage's block on other ranks: its operators
// that read only that stage's tensors are given the earlier block's relations,
// moved to those ranks (one bijection of ranks), with the same result as searching.
TEST(OperatorReuse, ALaterPipelineStageReusesAnEarlierStagesBlockOnItsOwnRanks) {
  auto c = pipeline(4);
  InferResult on = c->infer(reuse(true));
  InferResult off = c->infer(reuse(false));
  EXPECT_EQ(on.verdict, Verdict::Refines);
  expectSameRelations(on, off);
  EXPECT_FALSE(on.stats.reuseRerun);
  // Even the mm reading the received x3 (rank 4's tensor) with rank 6's w1_3:
  // block 2's (rank 2's x2, rank 4's w1_2) maps onto it by the shift r -> r + 2.
  for (const char* t : {"S.h2", "S.r2", "S.o2", "S.h3", "S.r3", "S.o3"}) {
    const TensorRelations* e = entry(on, t);
    ASSERT_TRUE(e) << t;
    EXPECT_GE(e->reusedFrom, 0) << t;
  }
}

// The same plan with rank 7 (stage 3) computing neg for relu: the same
// violation at the same operator, with and without reuse.
TEST(OperatorReuse, APlantedBugOnALaterStageIsFoundAtTheSameOperator) {
  auto c = pipeline(4, 7);
  InferResult on = c->infer(reuse(true));
  InferResult off = c->infer(reuse(false));
  EXPECT_EQ(on.verdict, Verdict::Violation);
  ASSERT_TRUE(on.failure && off.failure);
  EXPECT_EQ(c->specName(on.failure->node), "S.r3");
  EXPECT_EQ(c->specName(off.failure->node), "S.r3");
}

// n graph outputs y_i = mm(x, w_i), row-parallel over 2 ranks: each rank
// returns its all-reduced partial product and a relu of it, except for
// y_{unreturned}, whose product no rank returns (only the relu of it).
std::unique_ptr<Check> outputs(int n, int unreturned = -1) {
  std::string specParams = "x: \"f32[4, 8]\"", implParams = "x: \"f32[4, 4]\"", specBody, implBody, specRet, implRet;
  std::string rel = "S.x = shard(D*.x, dim=1)\n";
  for (int i = 0; i < n; ++i) {
    std::string s = std::to_string(i);
    specParams += ", w_" + s + ": \"f32[8, 8]\"";
    implParams += ", w_" + s + ": \"f32[4, 8]\"";
    specBody += "y_" + s + ": \"f32[4, 8]\" = torch.ops.aten.mm.default(x, w_" + s + ")\n";
    implBody += "o_" + s + ": \"f32[4, 8]\" = torch.ops.aten.mm.default(x, w_" + s + ")\n";
    implBody += "ar_" + s + ": \"f32[4, 8]\" = torch.ops._c10d_functional.all_reduce.default(o_" + s + ", 'sum', '0')\n";
    implBody += "wt_" + s + ": \"f32[4, 8]\" = torch.ops._c10d_functional.wait_tensor.default(ar_" + s + ")\n";
    implBody += "u_" + s + ": \"f32[4, 8]\" = torch.ops.aten.relu.default(wt_" + s + ")\n";
    specRet += "y_" + s + ", ";
    implRet += (i == unreturned ? "" : "wt_" + s + ", ") + "u_" + s + ", ";
    rel += "S.w_" + s + " = shard(D*.w_" + s + ", dim=0)\n";
  }
  return makeCheck(fx(specParams, specBody + "return (" + specRet + ")"),
                   fx(implParams, implBody + "return (" + implRet + ")"), 2, rel);
}

// Graph outputs (targets) that repeat an earlier one reuse its relations, also
// those over the implementation's outputs, with the same result as searching.
TEST(OperatorReuse, ARepeatedGraphOutputReusesAnEarlierOne) {
  auto c = outputs(3);
  InferResult on = c->infer(reuse(true));
  InferResult off = c->infer(reuse(false));
  EXPECT_EQ(on.verdict, Verdict::Refines);
  expectSameRelations(on, off);
  EXPECT_EQ(entry(on, "S.y_0")->reusedFrom, -1);
  EXPECT_GE(entry(on, "S.y_1")->reusedFrom, 0);
  EXPECT_GE(entry(on, "S.y_2")->reusedFrom, 0);
}

// y_2's all-reduced value is computed but not returned: renamed from y_1, its
// relation over the outputs would name wt_2, which no graph returns. The reuse
// is refused and the search reports y_2 (reused, it would refine; a verdict
// other than refines is then recomputed without reuse, so `on` is that one).
TEST(OperatorReuse, AGraphOutputIsNotReusedOntoATensorNoGraphReturns) {
  auto c = outputs(3, 2);
  InferResult on = c->infer(reuse(true));
  InferResult off = c->infer(reuse(false));
  EXPECT_EQ(off.verdict, Verdict::Violation);
  EXPECT_EQ(on.verdict, Verdict::Violation);
  ASSERT_TRUE(on.failure && off.failure);
  EXPECT_EQ(c->specName(on.failure->node), "S.y_2");
  EXPECT_EQ(c->specName(off.failure->node), "S.y_2");
}

TEST(OperatorReuse, OptionTurnsItOff) {
  auto c = blocks(3);
  c->relation.options["reuse"] = "0";
  EXPECT_FALSE(inferOptionsFrom(c->relation).reuse);
  EXPECT_EQ(c->inferWithRelationOptions().stats.operatorsReused, 0u);
  c->relation.options["reuse"] = "2";
  EXPECT_THROW(inferOptionsFrom(c->relation), InputError);
}

// Renaming's map (reuse.h): the answers of an unordered_map, through growth
// and probe chains (keys that are multiples of a large power of two share
// the low bits a weak hash would use).
TEST(OperatorReuse, IntMapAnswersAsAnUnorderedMap) {
  IntMap m;
  std::unordered_map<int, int> ref;
  uint32_t x = 12345;
  for (int i = 0; i < 3000; ++i) {
    x = x * 1103515245u + 12345u;
    int key = i % 3 == 0 ? (i << 12) : static_cast<int>(x % 5000);
    int value = static_cast<int>(x >> 8);
    auto [held, inserted] = m.emplace(key, value);
    auto [it, refInserted] = ref.emplace(key, value);
    ASSERT_EQ(inserted, refInserted) << key;
    ASSERT_EQ(held, it->second) << key;
  }
  EXPECT_EQ(m.size(), ref.size());
  for (int key = 0; key < 6000; ++key) {
    const int* v = m.find(key);
    auto it = ref.find(key);
    ASSERT_EQ(v != nullptr, it != ref.end()) << key;
    if (v) {
      EXPECT_EQ(*v, it->second);
    }
  }
  for (auto [k, v] : ref) EXPECT_TRUE(m.find(k) && *m.find(k) == v);
  EXPECT_FALSE(IntMap().count(7));
}

}  // namespace
}  // namespace tangle::testing
