// Value-guided localization on one-line edits of the real GPT TP=2 dumps
// (Entangle artifact), replayed at reduced sizes: the report names the edited
// operator, or the first one computing with it, on the edited rank. The
// edits are made at test time on a copy of rank 1's dump, as
// tests/mutation/mutate.py does. Skips when the data is absent.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_support.h"

namespace tangle::e2e {
namespace {

const fs::path kArtifact = fs::path(TANGLE_SOURCE_DIR) / ".." / "shared" / "data" / "entangle-artifact";
const fs::path kData = kArtifact / "gpt";

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

struct Mutant {
  RunResult run;
  nlohmann::json localization;
};

// Rank `rank`'s dump of `suite` (gpt, qwen2) with `from` replaced by `to` (exactly once), checked with --replay.
Mutant checkEdited(const std::string& from, const std::string& to, const std::string& suite = "gpt", int rank = 1) {
  const fs::path data = kArtifact / suite;
  fs::path dir = tempPath("gpt_mutant");
  fs::create_directories(dir);
  for (int r = 0; r < 2; ++r) {
    std::string name = "fw.g0.r" + std::to_string(r) + ".py";
    std::string text = readFile(data / "paral2_layer1" / name);
    if (r == rank) {
      size_t at = text.find(from);
      EXPECT_NE(at, std::string::npos) << from;
      EXPECT_EQ(text.find(from, at + 1), std::string::npos) << "not unique: " << from;
      if (at != std::string::npos) text.replace(at, from.size(), to);
    }
    std::ofstream(dir / name) << text;
  }
  // The same relation, its graph lines pointed at the data and the edited copy.
  std::string rel = readFile(examplePath("artifact/" + suite + "/paral2_layer1.rel"));
  std::string out;
  for (const std::string& line : splitLines(rel)) {
    if (line.rfind("spec ", 0) == 0)
      out += "spec " + (data / "paral1_layer1" / "fw.g0.r0.py").string() + "\n";
    else if (line.rfind("impl ", 0) == 0)
      out += "impl " + (dir / "fw.g0.r{rank}.py").string() + " ranks 2\n";
    else
      out += line + "\n";
  }
  std::ofstream(dir / "check.rel") << out;
  fs::path json = dir / "report.json";
  Mutant m{runTangle({"check", (dir / "check.rel").string(), "--replay", "--json", json.string()}), nullptr};
  if (fs::exists(json)) m.localization = nlohmann::json::parse(readFile(json))["replay"]["localization"];
  std::error_code ec;
  fs::remove_all(dir, ec);
  return m;
}

#define REQUIRE_GPT()                                                                \
  if (!fs::exists(kData / "paral2_layer1") || !fs::exists(kData / "paral1_layer1")) \
  GTEST_SKIP() << "artifact data folder ../shared/data/entangle-artifact/gpt is absent"

TEST(ArtifactLocalize, ReduceScatterReplacedByTheOwnChunkAtItsConsumer) {
  REQUIRE_GPT();
  // Rank 1 takes its own rows of its partial sum instead of the reduce-scatter.
  // Rank 1's next reduce-scatter reads only its own (right) rows, and rank 0's
  // gathers read rank 1's output only in part: neither may vouch for it.
  Mutant m = checkEdited("torch.ops._c10d_functional.wait_tensor.default(reduce_scatter_tensor);",
                         "torch.ops.aten.slice.Tensor(view_17, 0, 768, 1536);");
  ASSERT_EQ(m.run.exitCode, 1) << m.run.out << m.run.err;
  ASSERT_TRUE(m.localization.is_object() && m.localization["found"].get<bool>()) << m.run.out;
  EXPECT_EQ(m.localization["first"]["tensor"], "D1.add_2") << m.run.out;  // the residual add reading it
  EXPECT_EQ(m.localization["first"]["rank"], 1);
}

TEST(ArtifactLocalize, AllGatherReplacedByTheOwnShardTwiceAtTheEdit) {
  REQUIRE_GPT();
  Mutant m = checkEdited("torch.ops._c10d_functional.wait_tensor.default(all_gather_into_tensor_1);",
                         "torch.ops.aten.cat.default([getitem_12, getitem_12], 0);");
  ASSERT_EQ(m.run.exitCode, 1) << m.run.out << m.run.err;
  ASSERT_TRUE(m.localization.is_object() && m.localization["found"].get<bool>()) << m.run.out;
  EXPECT_EQ(m.localization["first"]["tensor"], "D1.wait_tensor_3") << m.run.out;
  EXPECT_EQ(m.localization["first"]["op"], "aten.cat.default");
}

TEST(ArtifactLocalize, ADoubledLayerNormEpsAtTheLayerNorm) {
  REQUIRE_GPT();
  // eps 1e-5 -> 2e-5 moves the output by ~1e-6: within replay's verdict
  // tolerance, not within localization's.
  std::string line = readFile(kData / "paral2_layer1" / "fw.g0.r1.py");
  const std::string from = "fused_layer_norm_affine_fwd_1 = torch.ops.apex.fused_layer_norm_affine_fwd.default(";
  size_t at = line.find(from);
  ASSERT_NE(at, std::string::npos);
  std::string call = line.substr(at, line.find('\n', at) - at);
  std::string edited = call;
  size_t eps = edited.find("1e-05");
  ASSERT_NE(eps, std::string::npos) << call;
  edited.replace(eps, 5, "2e-05");
  Mutant m = checkEdited(call, edited);
  ASSERT_EQ(m.run.exitCode, 1) << m.run.out << m.run.err;
  ASSERT_TRUE(m.localization.is_object() && m.localization["found"].get<bool>()) << m.run.out;
  // The layer norm's result, read through getitem.
  EXPECT_EQ(m.localization["first"]["tensor"], "D1.getitem_12") << m.run.out;
}

TEST(ArtifactLocalize, ATranspositionThatBreaksTheMatmulIsBlamedOnTheMatmul) {
  REQUIRE_GPT();
  // The edited transpose (annotation updated) feeds the batched matmul
  // operands whose batch dims differ, so the matmul cannot compute: the first
  // operator that cannot is named, not a later one that computes nothing.
  Mutant m = checkEdited(
      "transpose_1: \"f32[96, 1536, 32]\" = torch.ops.aten.transpose.int(view_6, 0, 1);",
      "transpose_1: \"f32[32, 96, 1536]\" = torch.ops.aten.transpose.int(view_6, 0, 2);");
  ASSERT_EQ(m.run.exitCode, 1) << m.run.out << m.run.err;
  ASSERT_TRUE(m.localization.is_object() && m.localization["found"].get<bool>()) << m.run.out;
  EXPECT_EQ(m.localization["first"]["tensor"], "D1.baddbmm") << m.run.out;
  EXPECT_EQ(m.localization["first"]["rank"], 1);
}

TEST(ArtifactLocalize, AMovedSecondWriteIntoTheFusedQkvAtThatWrite) {
  if (!fs::exists(kArtifact / "qwen2" / "paral2_layer1") || !fs::exists(kArtifact / "qwen2" / "paral1_layer1"))
    GTEST_SKIP() << "artifact data folder ../shared/data/entangle-artifact/qwen2 is absent";
  // vLLM writes the rotated q, then k, back into the fused qkv (slice_scatter)
  // and splits it again. Rank 1 writes k 8 columns too far right: k and v are
  // wrong, q is not. The first write has no spec counterpart and its only
  // reader (the second write) is wrong, but what it wrote reaches the q split
  // intact, and q agrees: the moved write is named, not the first one.
  Mutant m = checkEdited("slice_scatter.default(slice_scatter, getitem_7, 1, 768, 896)",
                         "slice_scatter.default(slice_scatter, getitem_7, 1, 776, 904)", "qwen2");
  ASSERT_EQ(m.run.exitCode, 1) << m.run.out << m.run.err;
  ASSERT_TRUE(m.localization.is_object() && m.localization["found"].get<bool>()) << m.run.out;
  EXPECT_EQ(m.localization["first"]["tensor"], "D1.slice_scatter_1") << m.run.out;
  EXPECT_EQ(m.localization["first"]["rank"], 1);
}

// The vocabulary-parallel embedding's mask on one rank starts 16 tokens late
// (rank 1) or early (rank 0's lower bound). The masks are bool and every
// float tensor after them is wrong, so by value both ranks' `lt` are as
// suspect. Moving one rank's inputs at a time breaks the tie: moving the
// edited rank's changes how the other rank's masked share differs from the
// spec's embedding, moving the other rank's does not.
TEST(ArtifactLocalize, AVocabularyMaskRankTieIsBrokenTowardTheEditedRank) {
  REQUIRE_GPT();
  struct Edit {
    int rank;
    std::string from, to;
  };
  for (const Edit& e : {Edit{1, "aten.lt.Scalar(_to_copy, 49152)", "aten.lt.Scalar(_to_copy, 49168)"},
                        Edit{0, "aten.lt.Scalar(_to_copy, 0)", "aten.lt.Scalar(_to_copy, 16)"}}) {
    SCOPED_TRACE("rank " + std::to_string(e.rank));
    Mutant m = checkEdited(e.from, e.to, "gpt", e.rank);
    ASSERT_EQ(m.run.exitCode, 1) << m.run.out << m.run.err;
    ASSERT_TRUE(m.localization.is_object() && m.localization["found"].get<bool>()) << m.run.out;
    EXPECT_EQ(m.localization["first"]["tensor"], "D" + std::to_string(e.rank) + ".lt") << m.run.out;
    EXPECT_EQ(m.localization["first"]["rank"], e.rank);
    EXPECT_EQ(m.localization["tied_ranks"], nlohmann::json({0, 1}));
    ASSERT_TRUE(m.localization["tie_broken"].is_string()) << m.run.out;
    EXPECT_TRUE(has(m.localization["tie_broken"].get<std::string>(), "index_put_1 differs from S.index"))
        << m.localization["tie_broken"];
    EXPECT_TRUE(has(m.run.out, "rank " + std::to_string(e.rank) + " is named: moving rank")) << m.run.out;
  }
}

}  // namespace
}  // namespace tangle::e2e
