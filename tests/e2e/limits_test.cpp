// Runaway search ends with an explicit "inconclusive" verdict (exit 3).
#include <gtest/gtest.h>

#include "cli_support.h"

namespace {
using namespace tangle::e2e;

TEST(Limits, ExhaustedNodeBudgetIsInconclusive) {
  auto r = runTangle({"check", sourcePath("tests/data/limits/tiny_budget.rel")});
  EXPECT_EQ(r.exitCode, 3) << r.out << r.err;
  EXPECT_EQ(splitLines(r.out).at(0), "verdict: inconclusive") << r.out;
  EXPECT_NE(r.out.find("search limit"), std::string::npos) << r.out;
}

TEST(Limits, UnknownOptionIsBadInput) {
  auto path = tempPath("bad_option") ;
  std::string text = readFile(sourcePath("tests/data/limits/tiny_budget.rel"));
  text.replace(text.find("max_nodes"), 9, "max_nodez");
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(text.c_str(), f);
    std::fclose(f);
  }
  auto r = runTangle({"check", path.string()});
  EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("max_nodez"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(path.string() + ":8:"), std::string::npos) << r.err;  // file:line of the option
}

// Found with the sanitizers: replay multiplied the declared sizes into an int64 that overflowed.
// The element count saturates, and shape reduction then replays the check at small sizes.
TEST(Limits, HugeDeclaredSizesAreCheckedAndReplayedAtReducedSizes) {
  auto r = runTangle({"check", sourcePath("tests/data/limits/huge_sizes/check.rel"), "--replay"});
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_EQ(splitLines(r.out).at(0), "verdict: refines") << r.out;
  EXPECT_NE(r.out.find("replay: 1 outputs match"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("elements instead of 9223372036854775807"), std::string::npos) << r.out;  // saturated
}

}  // namespace
