// End-to-end: the CPU flash-attention op and its backward, and the math path
// with _safe_softmax (examples/attn):
// head-split grouped-query attention refines, forward outputs and gradients
// alike, and holds on values (--replay); a rank reading another group's kv
// head, or k/v split along the sequence, is a violation at the attention call.
#include <gtest/gtest.h>

#include <algorithm>

#include "cli_support.h"

namespace tangle::e2e {
namespace {

RunResult check(const std::string& name, std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"check", examplePath("attn/" + name + "/check.rel")};
  args.insert(args.end(), extra.begin(), extra.end());
  return runTangle(args);
}

TEST(SdpaExamples, HeadSplitForwardAndBackwardRefine) {
  RunResult r = check("sdpa_heads");
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  auto rel = outputRelation(r.out);
  for (const char* line : {"S.out = concat(D0.out, D1.out, dim=1)", "S.dq = concat(D0.dq, D1.dq, dim=1)",
                           "S.dk = concat(D0.dk, D1.dk, dim=1)", "S.dv = concat(D0.dv, D1.dv, dim=1)"})
    EXPECT_NE(std::find(rel.begin(), rel.end(), line), rel.end()) << line << "\n" << r.out;
}

TEST(SdpaExamples, HeadSplitHoldsOnValues) {
  RunResult r = check("sdpa_heads", {"--replay"});
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  auto lines = splitLines(r.out);
  auto at = findLine(lines, "replay: ");
  ASSERT_TRUE(at) << r.out;
  EXPECT_TRUE(startsWith(lines[*at], "replay: 4 outputs match")) << lines[*at];
}

TEST(SdpaExamples, MathPathWithSafeSoftmaxRefines) {
  RunResult r = check("sdpa_math_heads", {"--replay"});
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  auto rel = outputRelation(r.out);
  EXPECT_NE(std::find(rel.begin(), rel.end(), "S.view_5 = concat(D0.view_5, D1.view_5, dim=1)"), rel.end()) << r.out;
  EXPECT_TRUE(contains(r.out, "replay: 1 outputs match")) << r.out;
}

TEST(SdpaExamples, WrongPairingsAreViolations) {
  for (const char* name : {"sdpa_wrong_group", "sdpa_kv_by_sequence"}) {
    RunResult r = check(name);
    EXPECT_EQ(r.exitCode, 1) << name << "\n" << r.out << r.err;
    EXPECT_EQ(firstLine(r.out), "verdict: violation") << name;
    EXPECT_TRUE(contains(r.out, "failing operator: S.fa (aten._scaled_dot_product_flash_attention_for_cpu.default)"))
        << name << "\n" << r.out;
  }
}

}  // namespace
}  // namespace tangle::e2e
