// Shape-reduced replay of real Entangle artifact configurations (issue 14):
// the GPT certificate replays at sizes solved per role, and a real bug gives a
// counterexample at reduced sizes. Skips when the data is absent.
#include <cstdlib>
#include <filesystem>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_support.h"

namespace tangle::e2e {
namespace {

bool haveData(const std::string& folder) {
  return fs::exists(fs::path(TANGLE_SOURCE_DIR) / ".." / "shared" / "data" / "entangle-artifact" / folder);
}

#define REQUIRE_DATA(folder) \
  if (!haveData(folder)) GTEST_SKIP() << "artifact data folder ../shared/data/entangle-artifact/" folder " is absent"

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

nlohmann::json replayOf(const std::string& rel, RunResult& run) {
  fs::path json = tempPath("artifact_replay.json");
  run = runTangle({"check", examplePath(rel), "--replay", "--json", json.string()});
  nlohmann::json out = fs::exists(json) ? nlohmann::json::parse(readFile(json))["replay"] : nlohmann::json(nullptr);
  std::error_code ec;
  fs::remove(json, ec);
  return out;
}

// Sets an environment variable for one scope.
struct ScopedEnv {
  std::string name;
  ScopedEnv(const char* n, const char* v) : name(n) { ::setenv(n, v, 1); }
  ~ScopedEnv() { ::unsetenv(name.c_str()); }
};

TEST(ArtifactReplay, GptCertificateReplaysAtReducedSizes) {
  REQUIRE_DATA("gpt/paral2_layer1");
  RunResult run;
  nlohmann::json r = replayOf("artifact/gpt/paral2_layer1.rel", run);
  ASSERT_EQ(run.exitCode, 0) << run.out << run.err;
  ASSERT_TRUE(r.is_object()) << run.out;
  EXPECT_EQ(r["status"], "matched") << run.out;
  std::string sizes = r["reduced_sizes"];
  // Heads (24), head dim (32) and the fused qkv width (2304 = 24 x 96) are scaled together.
  EXPECT_TRUE(contains(sizes, "one size per role")) << sizes;
  EXPECT_TRUE(contains(sizes, "2304 -> ")) << sizes;
  EXPECT_TRUE(contains(sizes, "24 -> ")) << sizes;
}

TEST(ArtifactReplay, MissingLayerNormAllReduceHasACounterexampleAtReducedSizes) {
  REQUIRE_DATA("bug_missing_layernorm_allreduce");
  RunResult run;
  nlohmann::json r = replayOf("artifact/bug_missing_layernorm_allreduce/tp2.bug.rel", run);
  ASSERT_EQ(run.exitCode, 1) << run.out << run.err;
  ASSERT_TRUE(r.is_object()) << run.out;
  EXPECT_EQ(r["status"], "counterexample") << run.out;
  EXPECT_FALSE(r["reduced_sizes"].is_null()) << run.out;
}

// GPT TP=4 has no small instance with one size per value (3072 = 384 x 8 = 4 x 768 chains every
// size); one size per dim class finds one and the certificate replays there.
TEST(ArtifactReplay, GptTp4CertificateReplaysAtReducedSizesByDimClass) {
  REQUIRE_DATA("gpt/paral4_layer1");
  ScopedEnv classes("TANGLE_SIZE_CLASSES", "first");
  RunResult run;
  nlohmann::json r = replayOf("artifact/gpt/paral4_layer1.rel", run);
  ASSERT_EQ(run.exitCode, 0) << run.out << run.err;
  ASSERT_TRUE(r.is_object()) << run.out;
  EXPECT_EQ(r["status"], "matched") << run.out;
  std::string sizes = r["reduced_sizes"];
  EXPECT_TRUE(contains(sizes, "one size per dim class")) << sizes;
  EXPECT_TRUE(contains(sizes, "98304 -> ")) << sizes;  // the vocabulary shrinks with its shards
}

// Qwen2's rotary step writes the rotated k back into the fused qkv with a slice_scatter (a concat
// of [0, 1536), k, [1792, 2048)) that its readers split as [1536, 256, 256]. By dim class the
// slice bounds were reduced apart from the split's boundaries, the reduced spec wrote k over the end
// of q, and the certificate replay reported a false mismatch (exit 4) on a correct certificate.
TEST(ArtifactReplay, Qwen2CertificateReplaysByDimClass) {
  REQUIRE_DATA("qwen2/paral2_layer1");
  ScopedEnv classes("TANGLE_SIZE_CLASSES", "first");
  RunResult run;
  nlohmann::json r = replayOf("artifact/qwen2/paral2_layer1.rel", run);
  ASSERT_EQ(run.exitCode, 0) << run.out << run.err;
  ASSERT_TRUE(r.is_object()) << run.out;
  EXPECT_EQ(r["status"], "matched") << run.out;
  std::string sizes = r["reduced_sizes"];
  EXPECT_TRUE(contains(sizes, "one size per dim class")) << sizes;
  EXPECT_TRUE(contains(sizes, "17920 -> ")) << sizes;  // the fused gate/up shrinks with its shards
}

}  // namespace
}  // namespace tangle::e2e
