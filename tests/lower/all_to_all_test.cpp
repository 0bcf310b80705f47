// all_to_all_single lowering (src/lower/all_to_all.cpp): each rank's output
// is the concat of the blocks the members send it, even and uneven.
#include "../fx_text.h"
#include "lower/lower.h"

#include <gtest/gtest.h>

#include "import/fx_importer.h"
#include "ops/ops.h"

namespace tangle {
namespace {

Graph rankGraph(const std::string& params, const std::string& body, int r) {
  return importFxText(testing::fxModuleText(params, body), "r" + std::to_string(r) + ".py");
}

// "concat(slice[0:1](D0.x), slice[0:3](D1.x))": the definition, blocks spelled out.
std::string blocks(const LGraph& lg, const std::string& name) {
  const LNode& n = lg.node(lg.resolve(*lg.find(name)));
  std::string out;
  for (const auto& tn : n.def.nodes) {
    if (tn.op != ops::syms().slice) continue;
    EXPECT_EQ(tn.attrs[0].i, 0);
    out += (out.empty() ? "" : ", ") + std::string("slice[") + std::to_string(tn.attrs[1].i) + ":" +
           std::to_string(tn.attrs[2].i) + "](" + lg.node(tn.children[0].operand).name + ")";
  }
  bool cat = !n.def.nodes.empty() && n.def.nodes.back().op == ops::syms().concat;
  return cat ? "concat(" + out + ")" : out;
}

// Rank 0 has 3 rows and keeps 1, sends 2; rank 1 has 4 rows, sends 3, keeps 1.
std::vector<Graph> uneven(const std::string& r0out, const std::string& r1out) {
  std::vector<Graph> g;
  g.push_back(rankGraph("x: \"f32[3, 2]\"",
                        "a: \"f32[4, 2]\" = torch.ops._c10d_functional.all_to_all_single.default(x, " + r0out +
                            ", [1, 2], '0')\nw: \"f32[4, 2]\" = torch.ops._c10d_functional.wait_tensor.default(a)\n"
                            "return (w,)",
                        0));
  g.push_back(rankGraph("x: \"f32[4, 2]\"",
                        "a: \"f32[3, 2]\" = torch.ops._c10d_functional.all_to_all_single.default(x, " + r1out +
                            ", [3, 1], '0')\nw: \"f32[3, 2]\" = torch.ops._c10d_functional.wait_tensor.default(a)\n"
                            "return (w,)",
                        1));
  return g;
}

TEST(AllToAll, UnevenSplitsConcatTheSendersBlocks) {
  sym::Context symbols;
  LGraph lg = lowerImpl(uneven("[1, 3]", "[2, 1]"), {}, symbols);
  EXPECT_EQ(blocks(lg, "D0.w"), "concat(slice[0:1](D0.x), slice[0:3](D1.x))");
  EXPECT_EQ(blocks(lg, "D1.w"), "concat(slice[1:3](D0.x), slice[3:4](D1.x))");
}

TEST(AllToAll, EqualSplitsByDefault) {
  sym::Context symbols;
  std::vector<Graph> g;
  for (int r = 0; r < 2; ++r)
    g.push_back(rankGraph("x: \"f32[4, 2]\"",
                          "a: \"f32[4, 2]\" = torch.ops._c10d_functional.all_to_all_single.default(x, None, None, '0')\n"
                          "return (a,)",
                          r));
  LGraph lg = lowerImpl(g, {}, symbols);
  EXPECT_EQ(blocks(lg, "D0.a"), "concat(slice[0:2](D0.x), slice[0:2](D1.x))");
  EXPECT_EQ(blocks(lg, "D1.a"), "concat(slice[2:4](D0.x), slice[2:4](D1.x))");
}

TEST(AllToAll, ZeroRowBlocksAreLeftOut) {
  sym::Context symbols;
  std::vector<Graph> g;
  g.push_back(rankGraph("x: \"f32[2, 2]\"",
                        "a: \"f32[2, 2]\" = torch.ops._c10d_functional.all_to_all_single.default(x, [2, 0], [2, 0], '0')\n"
                        "return (a,)",
                        0));
  g.push_back(rankGraph("x: \"f32[2, 2]\"",
                        "a: \"f32[2, 2]\" = torch.ops._c10d_functional.all_to_all_single.default(x, [0, 2], [0, 2], '0')\n"
                        "return (a,)",
                        1));
  LGraph lg = lowerImpl(g, {}, symbols);
  EXPECT_EQ(blocks(lg, "D0.a"), "slice[0:2](D0.x)");
  EXPECT_EQ(blocks(lg, "D1.a"), "slice[0:2](D1.x)");
}

void expectInputError(const std::vector<Graph>& g, const std::string& part) {
  sym::Context symbols;
  try {
    lowerImpl(g, {}, symbols);
    FAIL() << "expected an InputError containing " << part;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
  }
}

TEST(AllToAll, SplitsThatDisagreeAcrossRanksAreInputErrors) {
  // rank 0 expects 2 rows from rank 1, which sends it 3
  expectInputError(uneven("[1, 2]", "[2, 1]"), "sends 3");
  // input splits that do not cover the input
  std::vector<Graph> g = uneven("[1, 3]", "[2, 1]");
  g[0] = rankGraph("x: \"f32[5, 2]\"",
                   "a: \"f32[4, 2]\" = torch.ops._c10d_functional.all_to_all_single.default(x, [1, 3], [1, 2], '0')\n"
                   "return (a,)",
                   0);
  expectInputError(g, "sum to 3");
}

TEST(AllToAll, DataDependentSplitSizesAreRefused) {
  std::vector<Graph> g;
  for (int r = 0; r < 2; ++r)
    g.push_back(rankGraph("x: \"f32[4, 2]\", u0: \"Sym(u0)\"",
                          "a: \"f32[4, 2]\" = torch.ops._c10d_functional.all_to_all_single.default(x, [2, 2], [u0, 2], '0')\n"
                          "return (a,)",
                          r));
  expectInputError(g, "data-dependent split sizes");
}

}  // namespace
}  // namespace tangle
