// End-to-end: the known failing classes of issue 11 (examples/classes):
// GQA with kv heads replicated over groups of ranks; sizes padded with zeros.
#include <gtest/gtest.h>

#include <fstream>

#include "cli_support.h"

namespace tangle::e2e {
namespace {

RunResult check(const std::string& rel, std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"check", examplePath(rel)};
  args.insert(args.end(), extra.begin(), extra.end());
  return runTangle(args);
}

std::string describe(const RunResult& r) {
  return "exit code " + std::to_string(r.exitCode) + "\n--- stdout:\n" + r.out + "--- stderr:\n" + r.err;
}

class Classes : public ::testing::TestWithParam<std::string> {};

TEST_P(Classes, GqaWithKvHeadsReplicatedOverRanksRefinesAndReplays) {
  auto r = check("classes/gqa_" + GetParam() + "/check.rel", {"--replay"});
  ASSERT_EQ(r.exitCode, 0) << describe(r);
  EXPECT_TRUE(startsWith(r.out, "verdict: refines")) << describe(r);
  EXPECT_TRUE(contains(r.out, "outputs match")) << describe(r);
}

TEST_P(Classes, GqaWithTheWrongKvGroupsIsAViolationAtTheFirstReaderOfK) {
  auto r = check("classes/gqa_" + GetParam() + "/wrong_groups.rel");
  ASSERT_EQ(r.exitCode, 1) << describe(r);
  EXPECT_TRUE(startsWith(r.out, "verdict: violation")) << describe(r);
  std::string op = GetParam() == "eager" ? "S.bmm (aten.bmm.default)"
                                         : "S._scaled_dot_product_flash_attention_for_cpu (";
  EXPECT_TRUE(contains(r.out, "failing operator: " + op)) << describe(r);
}

INSTANTIATE_TEST_SUITE_P(Forms, Classes, ::testing::Values("eager", "fused"));

}  // namespace
}  // namespace tangle::e2e

namespace tangle::e2e {
namespace {

void writeFile(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

void replaceOnce(std::string& s, const std::string& from, const std::string& to) {
  size_t at = s.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  s.replace(at, from.size(), to);
}

// Sizes not divisible by the degree, padded with zeros (examples/classes/pad_mlp).
TEST(ClassesPadding, ZeroPaddedMlpRefinesAndReplays) {
  auto r = check("classes/pad_mlp/check.rel", {"--replay"});
  ASSERT_EQ(r.exitCode, 0) << describe(r);
  EXPECT_TRUE(startsWith(r.out, "verdict: refines")) << describe(r);
  EXPECT_TRUE(contains(r.out, "outputs match")) << describe(r);
}

TEST(ClassesPadding, PaddingNotDeclaredZeroIsAViolationWithACounterexample) {
  auto r = check("classes/pad_mlp/no_zero.rel", {"--replay"});
  ASSERT_EQ(r.exitCode, 1) << describe(r);
  EXPECT_TRUE(startsWith(r.out, "verdict: violation")) << describe(r);
  EXPECT_TRUE(contains(r.out, "failing operator: S.mm_1 (aten.mm.default)")) << describe(r);
  EXPECT_TRUE(contains(r.out, "replay: counterexample")) << describe(r);
}

TEST(ClassesPadding, AZeroRegionOverRealWeightsCannotBeReplayed) {
  // Row 0 of rank 3's W1 is W1's row 9: the relations give it the spec's values.
  fs::path dir = fs::temp_directory_path() / "tangle_classes_pad";
  fs::create_directories(dir);
  std::string text = readFile(examplePath("classes/pad_mlp/check.rel"));
  std::string folder = examplePath("classes/pad_mlp");
  replaceOnce(text, "zero slice(D3.arg0_1, dim=0, start=1", "zero slice(D3.arg0_1, dim=0, start=0");
  replaceOnce(text, "spec spec.py", "spec " + folder + "/spec.py");
  replaceOnce(text, "impl impl.r", "impl " + folder + "/impl.r");
  writeFile(dir / "overlap.rel", text);
  auto r = runTangle({"check", (dir / "overlap.rel").string(), "--replay"});
  EXPECT_TRUE(contains(r.out, "is not zero on values that satisfy the input relations")) << describe(r);
}

TEST(ClassesPadding, ZeroOnAComputedTensorIsAnInputError) {
  fs::path dir = fs::temp_directory_path() / "tangle_classes_pad";
  fs::create_directories(dir);
  std::string folder = examplePath("classes/pad_mlp");
  writeFile(dir / "computed.rel", "spec " + folder + "/spec.py\nimpl " + folder +
                                      "/impl.r{rank}.py ranks 4\nS.arg1_1 = D*.arg1_1\nzero D3.mm\n");
  auto r = runTangle({"check", (dir / "computed.rel").string()});
  EXPECT_EQ(r.exitCode, 2) << describe(r);
  EXPECT_TRUE(contains(r.err, "computed.rel:4: error: zero names D3.mm, which its graph computes")) << describe(r);
}

}  // namespace
}  // namespace tangle::e2e

namespace tangle::e2e {
namespace {

// A computation replicated on both TP ranks (norms, a dense block) feeding an FFN-only TP MLP,
// the batch as two microbatches per rank (examples/classes/replicated_ffn): rank 1 keeps its own
// relation through the replicated chain, so its FFN shard is matched.
TEST(ClassesReplicated, ReplicatedChainBeforeAnFfnOnlyTpMlpRefinesAndReplays) {
  auto r = check("classes/replicated_ffn/check.rel", {"--replay"});
  ASSERT_EQ(r.exitCode, 0) << describe(r);
  EXPECT_TRUE(startsWith(r.out, "verdict: refines")) << describe(r);
  EXPECT_TRUE(contains(r.out, "outputs match")) << describe(r);
}

// Rank 1's norm weights swapped: rank 0 still computes the chain right, so the violation is at
// the first operator that needs rank 1's values, the FFN's gate matmul.
TEST(ClassesReplicated, OneRankWithTheWrongNormWeightIsAViolationAtItsFfnShard) {
  auto r = check("classes/replicated_ffn/wrong_norm_weight.rel");
  ASSERT_EQ(r.exitCode, 1) << describe(r);
  EXPECT_TRUE(startsWith(r.out, "verdict: violation")) << describe(r);
  EXPECT_TRUE(contains(r.out, "failing operator: S.mm_1 (aten.mm.default)")) << describe(r);
}

}  // namespace
}  // namespace tangle::e2e
