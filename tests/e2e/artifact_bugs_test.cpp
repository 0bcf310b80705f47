// The three real bugs of the Entangle artifact: each must be refused, with the
// outcome the artifact's README describes. Skips when the data is absent.
#include <filesystem>

#include <gtest/gtest.h>

#include "cli_support.h"

namespace {

namespace fs = std::filesystem;
using namespace tangle::e2e;

bool haveData(const std::string& folder) {
  return fs::exists(fs::path(TANGLE_SOURCE_DIR) / ".." / "shared" / "data" / "entangle-artifact" / folder);
}

#define REQUIRE_DATA(folder) \
  if (!haveData(folder)) GTEST_SKIP() << "artifact data folder ../shared/data/entangle-artifact/" folder " is absent"

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

TEST(ArtifactBugs, GradAccumulationMissingScaleIsRefused) {
  REQUIRE_DATA("bug_grad_accumulation");
  auto r = runTangle({"check", examplePath("artifact/bug_grad_accumulation/2step.bug.rel")});
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "verdict: violation")) << r.out;
  // The spec sums the squared errors of all 8 samples; the implementation only
  // ever takes per-micro-batch means, so that sum is never formed.
  EXPECT_TRUE(contains(r.out, "failing operator: S.sum_1 (aten.sum.default)")) << r.out;
  EXPECT_TRUE(contains(r.out, "code: loss = ((y - labels) ** 2).sum()")) << r.out;
}

TEST(ArtifactBugs, MissingAllReduceIsLocalizedAtTheMatmul) {
  REQUIRE_DATA("bug_missing_allreduce_under_wrong_config");
  auto r = runTangle({"check", examplePath("artifact/bug_missing_allreduce_under_wrong_config/tp2.bug.rel")});
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "failing operator: S.mm_7 (aten.mm.default)")) << r.out;
  // Its input is known only as the never-reduced partial sum of the ranks.
  EXPECT_TRUE(contains(r.out, "S.view_46 = sum(D0.mm_5, D1.mm_5)")) << r.out;
}

TEST(ArtifactBugs, MissingLayerNormAllReduceRefusesTheExpectation) {
  REQUIRE_DATA("bug_missing_layernorm_allreduce");
  auto r = runTangle({"check", examplePath("artifact/bug_missing_layernorm_allreduce/tp2.bug.rel")});
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "S.getitem_58 = sum(D0.getitem_58, D1.getitem_58)")) << r.out;
  EXPECT_TRUE(contains(r.out, "expectation refused: S.getitem_58 = D0.getitem_58")) << r.out;
  EXPECT_TRUE(contains(r.out, "expectation refused: S.getitem_58 = D1.getitem_58")) << r.out;
  EXPECT_FALSE(contains(r.out, "failing operator")) << r.out;
}

}  // namespace
