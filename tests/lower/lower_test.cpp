// Rank joining and collective lowering (src/lower/lower.cpp).
#include "../fx_text.h"
#include "lgraph_testing.h"
#include "lower/lower.h"

#include <gtest/gtest.h>

#include "import/fx_importer.h"
#include "ops/ops.h"

namespace tangle {
namespace {

Graph rank(const std::string& params, const std::string& body, const std::string& file) {
  std::string text = testing::fxModuleText(params, body);
  return importFxText(text, file);
}

using testing::defOf;
using testing::node;

std::vector<Graph> twoRanks(const std::string& body) {
  std::vector<Graph> g;
  for (int r = 0; r < 2; ++r) g.push_back(rank("x: \"f32[4, 2]\"", body, "r" + std::to_string(r) + ".py"));
  return g;
}

// Lowering a collective teaches the given context (and only it) that the
// ranks' inputs have one size: another check's context, or an e-graph's own
// empty one, never learns it.
TEST(Lower, CollectiveSizeFactsStayInTheirContext) {
  std::vector<Graph> g;
  for (int r = 0; r < 2; ++r) {
    g.push_back(rank("x: \"f32[s0, 2]\"",
                     "a: \"f32[s0, 2]\" = torch.ops._c10d_functional.all_reduce.default(x, 'sum', '0')\n"
                     "return (a,)",
                     "r" + std::to_string(r) + ".py"));
    qualifySymbols(g.back(), Owner::impl(r));
  }
  sym::ExprId d0 = sym::var("D0.s0"), d1 = sym::var("D1.s0");
  sym::Context first, second;
  lowerImpl(g, {}, first);
  EXPECT_TRUE(first.proveEqual(d0, d1));
  EXPECT_FALSE(second.proveEqual(d0, d1));
  EXPECT_FALSE(eg::EGraph().symbols().proveEqual(d0, d1));
  lowerImpl(g, {}, second);  // a second check of the same graphs
  EXPECT_TRUE(second.proveEqual(d0, d1));
  sym::Context third;
  EXPECT_FALSE(third.proveEqual(d0, d1));
}

TEST(Lower, AllReduceIsASumOverTheGroupAndWaitIsAnAlias) {
  sym::Context symbols;
  auto g = twoRanks(
      "a: \"f32[4, 2]\" = torch.ops._c10d_functional.all_reduce.default(x, 'sum', '0')\n"
      "w: \"f32[4, 2]\" = torch.ops._c10d_functional.wait_tensor.default(a)\n"
      "return (w,)");
  LGraph lg = lowerImpl(g, {}, symbols);
  EXPECT_EQ(defOf(lg, "D1.w"), "sum(D0.x, D1.x)");
  EXPECT_EQ(lg.resolve(*lg.find("D1.w")), lg.resolve(*lg.find("D1.a")));
  EXPECT_TRUE(node(lg, "D0.a").isOutput);
  EXPECT_EQ(node(lg, "D0.a").leafName, "D0.w");  // the returned alias names the value
}

TEST(Lower, VllmAllReduceIsASum) {
  sym::Context symbols;
  auto g = twoRanks(
      "a: \"f32[4, 2]\" = torch.ops.vllm.all_reduce.default(x, 'tp:0')\n"
      "return (a,)");
  LGraph lg = lowerImpl(g, {}, symbols);
  EXPECT_EQ(defOf(lg, "D0.a"), "sum(D0.x, D1.x)");
}

TEST(Lower, ReduceScatterIsThisRanksSliceOfTheSum) {
  sym::Context symbols;
  auto g = twoRanks(
      "rs: \"f32[2, 2]\" = torch.ops._c10d_functional.reduce_scatter_tensor.default(x, 'sum', 2, '0')\n"
      "return (rs,)");
  LGraph lg = lowerImpl(g, {}, symbols);
  const LNode& n = node(lg, "D1.rs");
  ASSERT_EQ(n.def.nodes.size(), 2u);
  EXPECT_EQ(n.def.nodes[1].op, ops::syms().slice);
  EXPECT_EQ(n.def.nodes[1].attrs[1].i, 2);  // rank 1 holds rows [2, 4)
  EXPECT_EQ(n.def.nodes[1].attrs[2].i, 4);
  EXPECT_EQ(n.def.nodes[0].op, ops::syms().sum);
}

// FSDP2 reduce-scatters gradients with 'avg': this rank's slice of the sum, divided by the group size.
TEST(Lower, ReduceScatterAvgDividesTheSliceByTheGroupSize) {
  sym::Context symbols;
  auto g = twoRanks(
      "rs: \"f32[2, 2]\" = torch.ops._c10d_functional.reduce_scatter_tensor.default(x, 'avg', 2, '0')\n"
      "return (rs,)");
  LGraph lg = lowerImpl(g, {}, symbols);
  const LNode& n = node(lg, "D0.rs");
  ASSERT_EQ(n.def.nodes.size(), 3u);
  EXPECT_EQ(n.def.nodes[0].op, ops::syms().sum);
  EXPECT_EQ(n.def.nodes[1].op, ops::syms().slice);
  EXPECT_EQ(n.def.nodes[2].op, ops::syms().div);
  EXPECT_EQ(n.def.nodes[2].children[1].scalar, 2.0);
}

TEST(Lower, AllGatherConcatsAlongDimZeroAndBroadcastAliasesTheSource) {
  sym::Context symbols;
  auto g = twoRanks(
      "ag: \"f32[8, 2]\" = torch.ops._c10d_functional.all_gather_into_tensor.default(x, 2, '0')\n"
      "b: \"f32[4, 2]\" = torch.ops._c10d_functional.broadcast.default(x, 0, '0')\n"
      "return (ag, b)");
  LGraph lg = lowerImpl(g, {}, symbols);
  EXPECT_EQ(defOf(lg, "D1.ag"), "concat(D0.x, D1.x)");
  EXPECT_EQ(lg.resolve(*lg.find("D1.b")), lg.resolve(*lg.find("D0.x")));
}

TEST(Lower, MismatchedCollectivesAreInputErrors) {
  sym::Context symbols;
  std::vector<Graph> g;
  g.push_back(rank("x: \"f32[4, 2]\"", "a: \"f32[4, 2]\" = torch.ops._c10d_functional.all_reduce.default(x, 'sum', '0')\nreturn (a,)", "r0.py"));
  g.push_back(rank("x: \"f32[4, 2]\"", "a: \"f32[8, 2]\" = torch.ops._c10d_functional.all_gather_into_tensor.default(x, 2, '0')\nreturn (a,)", "r1.py"));
  try {
    lowerImpl(g, {}, symbols);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("r1.py:"), std::string::npos) << e.what();
  }
}

TEST(Lower, GroupsDefaultToTheRanksThatUseThem) {
  sym::Context symbols;
  // Each rank's data-parallel group of one: an identity, not a cross-rank sum.
  std::vector<Graph> g;
  for (int r = 0; r < 2; ++r)
    g.push_back(rank("x: \"f32[4, 2]\"",
                     "a: \"f32[4, 2]\" = torch.ops._c10d_functional.all_reduce.default(x, 'sum', 'dp" + std::to_string(r) +
                         "')\nreturn (a,)",
                     "r" + std::to_string(r) + ".py"));
  LGraph lg = lowerImpl(g, {}, symbols);
  EXPECT_EQ(lg.resolve(*lg.find("D1.a")), lg.resolve(*lg.find("D1.x")));
  // Stated groups win.
  LowerOptions opts;
  opts.groups["dp0"] = {0, 1};
  EXPECT_THROW(lowerImpl(g, opts, symbols), InputError);  // rank 1 never joins dp0's collective
}

TEST(Lower, VllmOutVariantKernelsBecomeTheirResults) {
  sym::Context symbols;
  Graph s = rank("x: \"f32[4, 8]\", w: \"f32[8]\", r: \"f32[4, 8]\", pos: \"i64[4]\", cache: \"f32[16, 4]\"",
                 "e: \"f32[4, 8]\" = torch.ops.aten.empty_like.default(x)\n"
                 "af = torch.ops.higher_order.auto_functionalized(torch.ops._C.rms_norm.default, result = e, input = x, weight = w, epsilon = 1e-06)\n"
                 "n: \"f32[4, 8]\" = af[1]\n"
                 "af2 = torch.ops.higher_order.auto_functionalized(torch.ops._C.fused_add_rms_norm.default, input = x, residual = r, weight = w, epsilon = 1e-06)\n"
                 "n2: \"f32[4, 8]\" = af2[1]\n"
                 "res: \"f32[4, 8]\" = af2[2]\n"
                 "o: \"f32[4, 4]\" = torch.ops.aten.empty.memory_format([4, 4])\n"
                 "af3 = torch.ops.higher_order.auto_functionalized(torch.ops._C.silu_and_mul.default, out = o, input = x)\n"
                 "sm: \"f32[4, 4]\" = af3[1]\n"
                 "af4 = torch.ops.higher_order.auto_functionalized(torch.ops._C.rotary_embedding.default, positions = pos, query = x, key = r, head_size = 4, cos_sin_cache = cache, is_neox = True)\n"
                 "q: \"f32[4, 8]\" = af4[1]\n"
                 "k: \"f32[4, 8]\" = af4[2]\n"
                 "return (n, n2, res, sm, q, k)",
                 "s.py");
  LGraph lg = lowerSpec(s, {}, symbols);
  EXPECT_EQ(defOf(lg, "S.n"), "rms_norm(S.x, S.w)");  // the empty result buffer is not read
  EXPECT_EQ(defOf(lg, "S.n2"), "rms_norm(S.x, S.r, S.w)");
  EXPECT_EQ(defOf(lg, "S.res"), "add(S.x, S.r)");
  EXPECT_EQ(defOf(lg, "S.sm"), "mul(S.x)");
  EXPECT_EQ(defOf(lg, "S.q"), "rotary(S.pos, S.x, S.cache)");
  EXPECT_EQ(defOf(lg, "S.k"), "rotary(S.pos, S.r, S.cache)");
  checkAnnotatedShapes(lg, symbols);  // the canonical forms compute the annotated shapes
}

TEST(Lower, DebugTagsNameTheirTensorAndCutsMakeInputs) {
  sym::Context symbols;
  Graph s = rank("x: \"f32[4, 2]\"",
                 "c: \"f32[4, 2]\" = torch.ops.aten.clone.default(x)\n"
                 "l: \"f32[4, 2]\" = torch.ops.tg.log_tensor.default(c, 'hidden')\n"
                 "y: \"f32[4, 2]\" = torch.ops.aten.exp.default(l)\n"
                 "return (y,)",
                 "s.py");
  LowerOptions opts;
  opts.cutSpec = {"y"};
  LGraph lg = lowerSpec(s, opts, symbols);
  EXPECT_EQ(lg.resolve(*lg.find("S.hidden")), lg.resolve(*lg.find("S.x")));
  EXPECT_TRUE(node(lg, "S.y").isInput);
  opts.cutSpec = {"nope"};
  EXPECT_THROW(lowerSpec(s, opts, symbols), InputError);
}

}  // namespace
}  // namespace tangle

namespace tangle {
namespace {

// Within one graph, a node defined like an earlier one is its alias (after
// its operands are merged); random draws, other ranks' nodes and nodes that
// differ in any attribute stay apart, and users read the first copy.
TEST(Lower, DuplicateNodesOfAGraphAreMerged) {
  const char* body =
      "a: \"f32[4, 2]\" = torch.ops.aten.neg.default(x)\n"
      "b: \"f32[4, 2]\" = torch.ops.aten.neg.default(x)\n"
      "ua: \"f32[4, 1, 2]\" = torch.ops.aten.unsqueeze.default(a, 1)\n"
      "ub: \"f32[4, 1, 2]\" = torch.ops.aten.unsqueeze.default(b, 1)\n"
      "uc: \"f32[4, 2, 1]\" = torch.ops.aten.unsqueeze.default(b, 2)\n"
      "r1: \"f32[4, 2]\" = torch.ops.aten.rand_like.default(x)\n"
      "r2: \"f32[4, 2]\" = torch.ops.aten.rand_like.default(x)\n"
      "s: \"f32[4, 1, 2]\" = torch.ops.aten.add.Tensor(ub, ua)\n"
      "return (s, uc, r1, r2)";
  sym::Context ctx;
  LGraph lg = lowerImpl(twoRanks(body), {}, ctx);
  auto id = [&](const std::string& n) { return lg.resolve(lg.find(n).value()); };
  EXPECT_EQ(id("D0.b"), id("D0.a"));
  EXPECT_EQ(id("D0.ub"), id("D0.ua"));  // equal once b is a
  EXPECT_NE(id("D0.uc"), id("D0.ua"));  // another dim
  EXPECT_NE(id("D0.r1"), id("D0.r2"));  // random draws are never equal
  EXPECT_NE(id("D0.a"), id("D1.a"));    // each rank keeps its own tensors
  EXPECT_EQ(defOf(lg, "D0.s"), "add(D0.ua)");
  const LNode& s = node(lg, "D0.s");
  ASSERT_EQ(s.operands.size(), 1u);  // both operands are the one copy
  EXPECT_EQ(s.operands[0], id("D0.ua"));
}

// A node can read a later one (a pipeline's stage receives what a later rank
// sends back): merging that one gives the reader a new key, and the readers
// merge in another round.
TEST(Lower, ReadersOfALaterRanksMergedNodesMergeToo) {
  std::vector<Graph> g;
  g.push_back(rank("x: \"f32[4, 2]\"",
                   "c0: \"f32[4, 2]\" = self._tensor_constant0\n"
                   "pg = self._torchbind_obj0\n"
                   "r0 = torch.ops.c10d.recv_.default([c0], pg, 1, 0)\n"
                   "c1: \"f32[4, 2]\" = self._tensor_constant1\n"
                   "r1 = torch.ops.c10d.recv_.default([c1], pg, 1, 0)\n"
                   "u0: \"f32[4, 2]\" = self._tensor_constant0\n"
                   "u1: \"f32[4, 2]\" = self._tensor_constant1\n"
                   "y0: \"f32[4, 2]\" = torch.ops.aten.relu.default(u0)\n"
                   "y1: \"f32[4, 2]\" = torch.ops.aten.relu.default(u1)\n"
                   "return (y0, y1)",
                   "r0.py"));
  g.push_back(rank("x: \"f32[4, 2]\"",
                   "a: \"f32[4, 2]\" = torch.ops.aten.neg.default(x)\n"
                   "b: \"f32[4, 2]\" = torch.ops.aten.neg.default(x)\n"
                   "pg = self._torchbind_obj0\n"
                   "s0 = torch.ops.c10d.send.default([a], pg, 0, 0)\n"
                   "s1 = torch.ops.c10d.send.default([b], pg, 0, 0)\n"
                   "return (x,)",
                   "r1.py"));
  sym::Context ctx;
  LGraph lg = lowerImpl(g, {}, ctx);
  auto id = [&](const std::string& n) { return lg.resolve(lg.find(n).value()); };
  EXPECT_EQ(id("D0.u1"), id("D1.a"));
  EXPECT_EQ(id("D0.y1"), id("D0.y0"));
}

// The shape check infers each distinct definition over distinct operand
// types once; a node like a checked one but annotated otherwise, on another
// rank or the same one, is still checked.
TEST(Lower, AnAnnotationUnlikeAnEqualDefinitionsIsStillChecked) {
  sym::Context symbols;
  const std::string good = "a: \"f32[4, 4]\" = torch.ops.aten.mm.default(x, w)\n";
  auto ranks = [&](const std::string& second) {
    std::vector<Graph> g;
    g.push_back(rank("x: \"f32[4, 2]\", w: \"f32[2, 4]\"", good + "return (a,)", "r0.py"));
    g.push_back(rank("x: \"f32[4, 2]\", w: \"f32[2, 4]\"", second, "r1.py"));
    return g;
  };
  auto shapeError = [&](const std::vector<Graph>& g) -> std::string {
    LGraph lg = lowerImpl(g, {}, symbols);
    try {
      checkAnnotatedShapes(lg, symbols);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(shapeError(ranks(good + "return (a,)")), "");
  std::string other = shapeError(ranks("a: \"f32[4, 5]\" = torch.ops.aten.mm.default(x, w)\nreturn (a,)"));
  EXPECT_NE(other.find("r1.py"), std::string::npos) << other;
  EXPECT_NE(other.find("annotated f32[4, 5]"), std::string::npos) << other;
  std::string same = shapeError(ranks(good + "b: \"f32[4, 3]\" = torch.ops.aten.mm.default(x, w)\nreturn (a, b)"));
  EXPECT_NE(same.find("node 'b' is annotated f32[4, 3]"), std::string::npos) << same;
}

}  // namespace
}  // namespace tangle

namespace tangle {
namespace {

// IdIndex keeps a dense range of ids in an array and ids far from it aside:
// lookups must not depend on which of the two holds an id.
TEST(IdIndex, FirstNodeOfAnIdWinsWhereverTheIdLies) {
  IdIndex index;
  index.reserve(4);
  EXPECT_TRUE(index.emplace(1000, 0));
  EXPECT_TRUE(index.emplace(1001, 1));
  EXPECT_TRUE(index.emplace(3, 2));          // below the range
  EXPECT_TRUE(index.emplace(9000000, 3));    // far above it
  EXPECT_TRUE(index.emplace(1500, 4));       // within reach: the range grows
  EXPECT_FALSE(index.emplace(1001, 9));
  EXPECT_FALSE(index.emplace(3, 9));
  EXPECT_FALSE(index.emplace(9000000, 9));
  EXPECT_EQ(index.size(), 5u);
  EXPECT_EQ(index.find(1000), 0);
  EXPECT_EQ(index.find(1001), 1);
  EXPECT_EQ(index.find(3), 2);
  EXPECT_EQ(index.find(9000000), 3);
  EXPECT_EQ(index.find(1500), 4);
  for (uint32_t missing : {0u, 2u, 999u, 1002u, 1499u, 1501u, 8999999u, 9000001u})
    EXPECT_FALSE(index.find(missing).has_value()) << missing;
  // Many consecutive ids, as a graph's names are interned.
  IdIndex names;
  for (uint32_t i = 0; i < 100000; ++i) ASSERT_TRUE(names.emplace(50 + 2 * i, static_cast<int>(i)));
  for (uint32_t i = 0; i < 100000; ++i) {
    ASSERT_EQ(names.find(50 + 2 * i), static_cast<int>(i));
    ASSERT_FALSE(names.find(51 + 2 * i).has_value());
  }
}

}  // namespace
}  // namespace tangle

namespace tangle {
namespace {

// Ranks whose definitions need operator names interned by no earlier lowering
// (opaque ops, named after their targets): rank r calls op_r (rank 3 op_0), and
// rank 2 also op_1. Rank 0 reaches its name last: a parallel run without frozen
// interning would intern rank 1's first.
std::vector<Graph> ranksWithNewOps(const std::string& tag) {
  std::vector<Graph> g;
  for (int r = 0; r < 4; ++r) {
    std::string op = "torch.ops.test_" + tag + ".op_" + std::to_string(r % 3) + ".default";
    std::string body = "a: \"f32[4, 2]\" = torch.ops.aten.neg.default(x)\n";
    for (int k = 0; r == 0 && k < 20000; ++k)
      body += "n" + std::to_string(k) + ": \"f32[4, 2]\" = torch.ops.aten.neg.default(x)\n";
    body += "b: \"f32[4, 2]\" = " + op + "(a)\n";
    if (r == 2) body += "c: \"f32[4, 2]\" = torch.ops.test_" + tag + ".op_1.default(b)\n";
    else body += "c: \"f32[4, 2]\" = torch.ops.aten.neg.default(b)\n";
    body += "return (c,)";
    g.push_back(rank("x: \"f32[4, 2]\"", body, "r" + std::to_string(r) + ".py"));
  }
  return g;
}

// With --jobs, ranks are defined in parallel under frozen interning and the
// ranks that need new names are redone in rank order: names are interned in
// the order a serial run interns them, and the definitions are the same.
TEST(Lower, ParallelDefinitionsInternInTheSerialOrder) {
  for (size_t jobs : {size_t{1}, size_t{2}}) {
    std::string tag = "frozen" + std::to_string(jobs);
    auto g = ranksWithNewOps(tag);
    sym::Context symbols;
    LowerOptions opts;
    opts.jobs = jobs;
    LGraph lg = lowerImpl(g, opts, symbols);
    auto id = [&](int k) { return eg::findSymbol("test_" + tag + ".op_" + std::to_string(k) + ".default"); };
    ASSERT_TRUE(id(0) && id(1) && id(2)) << jobs;
    EXPECT_LT(*id(0), *id(1)) << jobs;  // rank 0's name first, then rank 1's, then rank 2's
    EXPECT_LT(*id(1), *id(2)) << jobs;
    EXPECT_EQ(defOf(lg, "D2.c"), "test_" + tag + ".op_1.default(D2.b)");
    EXPECT_EQ(defOf(lg, "D3.b"), "test_" + tag + ".op_0.default(D3.a)");
    EXPECT_EQ(defOf(lg, "D1.c"), "neg(D1.b)");
  }
}

// The error reported is the first rank's, whether the ranks were defined in
// parallel or not (rank 0 also needs a new name before its error).
TEST(Lower, ParallelDefinitionsReportTheFirstRanksError) {
  for (size_t jobs : {size_t{1}, size_t{2}}) {
    std::vector<Graph> g;
    for (int r = 0; r < 3; ++r) {
      std::string body = "a: \"f32[4, 2]\" = torch.ops.test_error" + std::to_string(jobs) + ".op.default(x)\n";
      if (r >= 1) body += "b: \"f32[4, 2]\" = torch.ops.aten.slice.Tensor(a, 'zero', 0, 2)\n";
      else body += "b: \"f32[4, 2]\" = torch.ops.aten.neg.default(a)\n";
      body += "return (b,)";
      g.push_back(rank("x: \"f32[4, 2]\"", body, "r" + std::to_string(r) + ".py"));
    }
    sym::Context symbols;
    LowerOptions opts;
    opts.jobs = jobs;
    try {
      lowerImpl(g, opts, symbols);
      ADD_FAILURE() << "no error with jobs " << jobs;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("r1.py"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace tangle
