// Rearrangement folding (src/lower/fold_rearrange.cpp) and the run-length
// element maps it composes (src/lower/run_map.cpp).
#include "../fx_text.h"
#include "lgraph_testing.h"
#include "lower/fold_rearrange.h"

#include <gtest/gtest.h>

#include <random>

#include "import/fx_importer.h"
#include "lower/run_map.h"
#include "ops/ops.h"

namespace tangle {
namespace {

// An FSDP-style step on each of two ranks: two shards flattened into one
// buffer, all-gathered, viewed as [ranks, buffer], each parameter's columns
// sliced out and viewed back as the parameter.
std::vector<Graph> flatBufferRanks(const std::string& use) {
  std::vector<Graph> g;
  for (int r = 0; r < 2; ++r) {
    std::string body =
        "fx: \"f32[8]\" = torch.ops.aten.view.default(x, [8])\n"
        "fw: \"f32[4]\" = torch.ops.aten.view.default(w, [4])\n"
        "flat: \"f32[12]\" = torch.ops.aten.cat.default([fx, fw])\n"
        "ag: \"f32[24]\" = torch.ops._c10d_functional.all_gather_into_tensor.default(flat, 2, '0')\n"
        "v: \"f32[2, 12]\" = torch.ops.aten.view.default(ag, [2, 12])\n"
        "sx: \"f32[2, 8]\" = torch.ops.aten.slice.Tensor(v, 1, 0, 8)\n"
        "sw: \"f32[2, 4]\" = torch.ops.aten.slice.Tensor(v, 1, 8, 12)\n" +
        use;
    g.push_back(importFxText(testing::fxModuleText("x: \"f32[2, 4]\", w: \"f32[2, 2]\"", body),
                             "r" + std::to_string(r) + ".py"));
  }
  return g;
}

using testing::defOf;
using testing::node;

// The same graphs lowered with `option fold = 0`: the definitions as captured.
LGraph lowerUnfolded(const std::vector<Graph>& g) {
  LowerOptions off;
  off.fold = false;
  sym::Context symbols;
  return lowerImpl(g, off, symbols);
}

bool reads(const LGraph& lg, const std::string& user, const std::string& operand) {
  for (int u : lg.users[static_cast<size_t>(*lg.find(operand))])
    if (lg.node(u).name == user) return true;
  return false;
}

TEST(FoldRearrangements, AGatheredParameterIsTheConcatOfTheRanksShards) {
  auto g = flatBufferRanks(
      "px: \"f32[4, 4]\" = torch.ops.aten.view.default(sx, [4, 4])\n"
      "pw: \"f32[4, 2]\" = torch.ops.aten.view.default(sw, [4, 2])\n"
      "y: \"f32[4, 4]\" = torch.ops.aten.mm.default(pw, w)\n"
      "z: \"f32[4, 4]\" = torch.ops.aten.add.Tensor(px, y)\n"
      "return (z,)");
  sym::Context symbols;
  LGraph lg = lowerImpl(g, {}, symbols);
  // rows 0-1 of the parameter are rank 0's shard, rows 2-3 rank 1's
  EXPECT_EQ(defOf(lg, "D0.px"), "concat(D0.x, D1.x)");
  EXPECT_EQ(defOf(lg, "D1.px"), "concat(D0.x, D1.x)");
  EXPECT_EQ(defOf(lg, "D0.pw"), "concat(D0.w, D1.w)");
  // the buffer chain feeds nothing live any more: the search does not reach it
  EXPECT_FALSE(reads(lg, "D0.fx", "D0.x"));
  EXPECT_TRUE(reads(lg, "D0.px", "D0.x"));
  EXPECT_TRUE(reads(lg, "D1.px", "D0.x"));

  LGraph unfolded = lowerUnfolded(g);
  EXPECT_EQ(defOf(unfolded, "D0.px"), "reshape(D0.sx)");
  EXPECT_TRUE(reads(unfolded, "D0.fx", "D0.x"));
}

TEST(FoldRearrangements, ARangeAcrossAShardsRowsIsLeftAlone) {
  // columns 2-10 of the buffer: each rank's piece starts inside a row of x and runs into w
  auto g = flatBufferRanks(
      "s: \"f32[2, 8]\" = torch.ops.aten.slice.Tensor(v, 1, 2, 10)\n"
      "p: \"f32[4, 4]\" = torch.ops.aten.view.default(s, [4, 4])\n"
      "z: \"f32[4, 4]\" = torch.ops.aten.mm.default(p, p)\n"
      "return (z,)");
  sym::Context symbols;
  LGraph lg = lowerImpl(g, {}, symbols);
  EXPECT_EQ(defOf(lg, "D0.p"), "reshape(D0.s)");
}

// An FSDP-style gradient step on each of two ranks: the gradients g [4, 2] and
// b [2] packed as chunk_cat packs them (each rank's rows side by side), the
// buffer pre-divided, reduce-scattered with sum, post-divided and cast, and the
// rank's shards viewed out of its slice. `pack[r]`: the pieces of rank r's buffer, in order.
std::vector<Graph> reduceScatterRanks(const std::vector<std::string>& pack) {
  std::vector<Graph> g;
  for (int r = 0; r < 2; ++r) {
    std::string body =
        "pg: \"f32[2, 4]\" = torch.ops.aten.view.default(g, [2, 4])\n"
        "pb: \"f32[2, 1]\" = torch.ops.aten.view.default(b, [2, 1])\n"
        "buf: \"f32[2, 5]\" = torch.ops.aten.cat.default([" + pack[static_cast<size_t>(r)] + "], 1)\n"
        "flat: \"f32[10]\" = torch.ops.aten.view.default(buf, [10])\n"
        "pre: \"f32[10]\" = torch.ops.aten.div.Tensor(flat, 2)\n"
        "rs: \"f32[5]\" = torch.ops._c10d_functional.reduce_scatter_tensor.default(pre, 'sum', 2, '0')\n"
        "post: \"f32[5]\" = torch.ops.aten.div.Tensor(rs, 2.0)\n"
        "c: \"f16[5]\" = torch.ops.aten._to_copy.default(post, dtype = torch.float16)\n"
        "s4: \"f16[4]\" = torch.ops.aten.slice.Tensor(c, 0, 0, 4)\n"
        "sg: \"f16[2, 2]\" = torch.ops.aten.view.default(s4, [2, 2])\n"
        "sb: \"f16[1]\" = torch.ops.aten.slice.Tensor(c, 0, 4, 5)\n"
        "return (sg, sb)";
    g.push_back(importFxText(testing::fxModuleText("g: \"f32[4, 2]\", b: \"f32[2]\"", body),
                             "r" + std::to_string(r) + ".py"));
  }
  return g;
}


TEST(FoldRearrangements, AReduceScatteredShardIsTheSliceOfTheReducedGradient) {
  auto g = reduceScatterRanks({"pg, pb", "pg, pb"});
  sym::Context symbols;
  LGraph lg = lowerImpl(g, {}, symbols);
  // rank 1's shard of g: rows 2-3 of cast(div(sum(div(D0.g, 2), div(D1.g, 2)), 2)), every rank's gradient whole
  EXPECT_EQ(defOf(lg, "D1.sg"), "slice(D0.g, D1.g)");
  EXPECT_EQ(defOf(lg, "D0.sb"), "slice(D0.b, D1.b)");
  const LNode& sg = node(lg, "D1.sg");
  ASSERT_EQ(sg.def.nodes.size(), 6u);  // div, div, sum, div, cast, slice: g's rows are the shard's rows
  EXPECT_EQ(eg::toString(sg.def.nodes.back().attrs), "0, 2, 4, 1");
  // the reduce-scatter chain feeds nothing live any more: the search does not reach it
  EXPECT_FALSE(reads(lg, "D1.pre", "D1.flat"));
  EXPECT_FALSE(reads(lg, "D1.rs", "D1.pre"));
  EXPECT_TRUE(reads(lg, "D1.sg", "D0.g"));

  LGraph unfolded = lowerUnfolded(g);
  EXPECT_EQ(defOf(unfolded, "D1.sg"), "reshape(D1.s4)");
}

TEST(FoldRearrangements, ShardsOfBuffersPackedDifferentlyAreLeftAlone) {
  // rank 1 packs b first: rank 0's slice of the sum adds rank 1's b[0] and g's first elements to
  // rank 0's g, and rank 0's b[0] to an element of rank 1's g: no same rows of every rank's tensor
  auto g = reduceScatterRanks({"pg, pb", "pb, pg"});
  sym::Context symbols;
  LGraph lg = lowerImpl(g, {}, symbols);
  EXPECT_EQ(defOf(lg, "D0.sg"), "reshape(D0.s4)");
  EXPECT_EQ(defOf(lg, "D0.sb"), "slice(D0.c)");
  EXPECT_EQ(defOf(lg, "D1.sb"), "slice(D1.c)");
}

// Each run-length map, expanded element by element, is the op's element gather.
std::vector<std::pair<int, int64_t>> expand(const runs::Runs& rs) {
  std::vector<std::pair<int, int64_t>> out;
  for (const runs::Run& r : rs)
    for (int64_t k = 0; k < r.len; ++k) out.emplace_back(r.src, r.off + k);
  return out;
}

void expectMatchesGather(eg::Symbol op, const eg::AttrList& attrs, const std::vector<interp::Shape>& kids) {
  auto m = runs::opMap(op, attrs, kids, 1 << 20);
  auto g = ops::gatherOf(eg::ENode{op, eg::internAttrs(attrs), {}}, kids);
  ASSERT_EQ(m.has_value(), g.has_value()) << eg::symbolName(op) << " " << eg::toString(attrs);
  if (!m) return;
  EXPECT_EQ(m->shape, g->shape);
  auto e = expand(m->runs);
  ASSERT_EQ(e.size(), g->child.size());
  for (size_t i = 0; i < e.size(); ++i) {
    EXPECT_EQ(e[i].first, static_cast<int>(g->child[i])) << i;
    EXPECT_EQ(e[i].second, g->offset[i]) << i;
  }
}

TEST(RunMap, SliceConcatReshapeTransposeMatchTheirElementGathers) {
  std::mt19937 rng(7);
  auto uni = [&](int64_t a, int64_t b) { return std::uniform_int_distribution<int64_t>(a, b)(rng); };
  const ops::Syms& s = ops::syms();
  for (int trial = 0; trial < 200; ++trial) {
    interp::Shape x;
    for (int64_t d = 0, r = uni(1, 4); d < r; ++d) x.push_back(uni(0, 4));
    int64_t rank = static_cast<int64_t>(x.size()), d = uni(0, rank - 1);
    int64_t lo = uni(0, x[d]), hi = uni(lo, x[d]), step = uni(1, 3);
    expectMatchesGather(s.slice, {eg::Attr::integer(d), eg::Attr::integer(lo), eg::Attr::integer(hi), eg::Attr::integer(step)},
                        {x});
    std::vector<interp::Shape> parts;
    for (int64_t k = 0, n = uni(1, 4); k < n; ++k) {
      parts.push_back(x);
      parts.back()[d] = uni(0, 3);
    }
    expectMatchesGather(s.concat, {eg::Attr::integer(d)}, parts);
    int64_t n = 1;
    for (int64_t v : x) n *= v;
    expectMatchesGather(s.reshape, {eg::Attr::ints({n})}, {x});
    if (rank >= 2)
      expectMatchesGather(s.transpose, {eg::Attr::integer(0), eg::Attr::integer(rank - 1)}, {x});
  }
}

// A map is refused exactly when it has more runs than allowed, whether the
// count is known before building it (partial slices, concats) or not.
TEST(RunMap, RefusesExactlyTheMapsOfMoreRunsThanAllowed) {
  std::mt19937 rng(11);
  auto uni = [&](int64_t a, int64_t b) { return std::uniform_int_distribution<int64_t>(a, b)(rng); };
  const ops::Syms& s = ops::syms();
  auto check = [&](eg::Symbol op, const eg::AttrList& attrs, const std::vector<interp::Shape>& kids) {
    auto full = runs::opMap(op, attrs, kids, 1 << 20);
    ASSERT_TRUE(full.has_value());
    for (size_t limit = 0; limit <= full->runs.size() + 1; ++limit) {
      auto m = runs::opMap(op, attrs, kids, limit);
      EXPECT_EQ(m.has_value(), full->runs.size() <= limit) << eg::symbolName(op) << " " << eg::toString(attrs) << " limit " << limit;
      if (m) {
        EXPECT_EQ(m->runs, full->runs);
      }
    }
  };
  for (int trial = 0; trial < 300; ++trial) {
    interp::Shape x;
    for (int64_t d = 0, r = uni(1, 4); d < r; ++d) x.push_back(uni(0, 5));
    int64_t rank = static_cast<int64_t>(x.size()), d = uni(0, rank - 1);
    int64_t lo = uni(0, x[d]), hi = uni(lo, x[d]), step = uni(1, 3);
    check(s.slice, {eg::Attr::integer(d), eg::Attr::integer(lo), eg::Attr::integer(hi), eg::Attr::integer(step)}, {x});
    std::vector<interp::Shape> parts;
    for (int64_t k = 0, n = uni(1, 4); k < n; ++k) {
      parts.push_back(x);
      parts.back()[d] = uni(0, 3);
    }
    check(s.concat, {eg::Attr::integer(d)}, parts);
  }
}

TEST(RunMap, ComposeTakesEachRunsRangeOfItsChild) {
  // child 0 is [a0..a3, b0..b3], child 1 is [c5..c7]
  runs::Runs k0{{10, 0, 4}, {11, 0, 4}}, k1{{12, 5, 3}};
  runs::Runs m{{1, 1, 2}, {0, 2, 4}, {0, 7, 1}};
  auto c = runs::compose(m, {&k0, &k1}, 100);
  ASSERT_TRUE(c.has_value());
  runs::Runs want{{12, 6, 2}, {10, 2, 2}, {11, 0, 2}, {11, 3, 1}};
  EXPECT_EQ(*c, want);
  EXPECT_FALSE(runs::compose(runs::Runs{{0, 6, 4}}, {&k0}, 100).has_value());  // past the child's end
}

}  // namespace
}  // namespace tangle
