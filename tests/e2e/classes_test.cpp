// End-to-end: the known failing classes of issue 11 (examples/classes):
// GQA with kv heads replicated over groups of ranks.
#include <gtest/gtest.h>

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
