// `tangle check --replay` after a violation: value-guided localization names
// the first implementation operator that computes a wrong value (issue 14),
// and graphs too large to interpret are replayed at reduced sizes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_support.h"

namespace tangle::e2e {
namespace {

std::string localizePath(const std::string& rel) { return sourcePath("tests/data/localize/" + rel); }

struct Located {
  RunResult run;
  nlohmann::json replay;
};

Located check(const std::string& rel) {
  fs::path json = tempPath("report.json");
  Located l{runTangle({"check", rel, "--replay", "--json", json.string()}), nullptr};
  if (fs::exists(json)) l.replay = nlohmann::json::parse(readFile(json))["replay"];
  std::error_code ec;
  fs::remove(json, ec);
  return l;
}

TEST(Localize, DroppedAllReduceAtItsConsumerOnTheRank) {
  // Rank 1 keeps its partial product instead of the all-reduce's sum; rank 0 is right.
  Located l = check(localizePath("dropped_allreduce/check.rel"));
  ASSERT_EQ(l.run.exitCode, 1) << l.run.out << l.run.err;
  EXPECT_TRUE(contains(l.run.out, "localization: first wrong implementation operator D1.add (aten.add.Tensor) at "))
      << l.run.out;
  const auto& loc = l.replay["localization"];
  ASSERT_TRUE(loc["found"].get<bool>()) << l.run.out;
  EXPECT_EQ(loc["first"]["tensor"], "D1.add");
  EXPECT_EQ(loc["first"]["rank"], 1);
  EXPECT_TRUE(endsWith(loc["first"]["location"].get<std::string>(), "impl.r1.py:24")) << loc.dump(2);
  EXPECT_TRUE(contains(loc["first"]["source"].get<std::string>(), "y = y + self.b2")) << loc.dump(2);
  EXPECT_EQ(loc["first"]["reads"], nlohmann::json::array({"D1.b2"}));
  // Its operand is a partial sum: the missing all-reduce is visible in the report.
  EXPECT_TRUE(contains(loc["first"]["operands"][0].get<std::string>(), "(a partial sum)")) << loc.dump(2);
  EXPECT_TRUE(loc["others"].empty()) << loc.dump(2);
}

TEST(Localize, ShiftedSliceAtTheSlice) {
  Located l = check(localizePath("shifted_slice/check.rel"));
  ASSERT_EQ(l.run.exitCode, 1) << l.run.out << l.run.err;
  const auto& loc = l.replay["localization"];
  ASSERT_TRUE(loc["found"].get<bool>()) << l.run.out;
  EXPECT_EQ(loc["first"]["tensor"], "D1.slice_1") << l.run.out;
  EXPECT_EQ(loc["first"]["op"], "aten.slice.Tensor");
  EXPECT_EQ(loc["first"]["reads"], nlohmann::json::array({"D1.w"}));
  EXPECT_TRUE(contains(l.run.out, "localization: first wrong implementation operator D1.slice_1")) << l.run.out;
  // Next to inference's failing spec operator, the matmul that reads the slice.
  EXPECT_TRUE(contains(loc["spec_operator"].get<std::string>(), "S.mm (aten.mm.default)")) << loc.dump(2);
}

TEST(Localize, AWrongViewIsBlamedOnTheFirstOperatorComputingWithIt) {
  // Rank 1 slices the transposed weight: the transpose has no spec counterpart to be
  // judged by, so the slice that reads it is named, with the view as its operand.
  Located l = check(localizePath("wrong_transpose/check.rel"));
  ASSERT_EQ(l.run.exitCode, 1) << l.run.out << l.run.err;
  const auto& loc = l.replay["localization"];
  ASSERT_TRUE(loc["found"].get<bool>()) << l.run.out;
  EXPECT_EQ(loc["first"]["tensor"], "D1.slice_1") << l.run.out;
  EXPECT_EQ(loc["first"]["rank"], 1);
  EXPECT_TRUE(contains(loc["first"]["operands"][0].get<std::string>(), "D1.t: a view")) << loc.dump(2);
  EXPECT_TRUE(loc["others"].empty()) << loc.dump(2);
}

TEST(Localize, TheMissingAllReduceExampleOnBothRanks) {
  // Both ranks forget it: the first is rank 0's bias add, rank 1's is listed next to it.
  Located l = check(examplePath("mlp/missing_allreduce/check.rel"));
  ASSERT_EQ(l.run.exitCode, 1) << l.run.out << l.run.err;
  const auto& loc = l.replay["localization"];
  EXPECT_EQ(loc["first"]["tensor"], "D0.add") << l.run.out;
  ASSERT_EQ(loc["others"].size(), 1u) << l.run.out;
  EXPECT_EQ(loc["others"][0]["tensor"], "D1.add");
}

TEST(Localize, NotReportedForARefiningCheck) {
  Located l = check(examplePath("mlp/column_row/check.rel"));
  ASSERT_EQ(l.run.exitCode, 0) << l.run.out << l.run.err;
  EXPECT_TRUE(l.replay["localization"].is_null());
  EXPECT_FALSE(contains(l.run.out, "localization:"));
}

TEST(ReducedReplay, TheCertificateReplaysAtReducedSizes) {
  Located l = check(localizePath("big_column/check.rel"));
  ASSERT_EQ(l.run.exitCode, 0) << l.run.out << l.run.err;
  EXPECT_EQ(l.replay["status"], "matched") << l.run.out;
  EXPECT_TRUE(contains(l.replay["reduced_sizes"].get<std::string>(), "4096 -> ")) << l.run.out;
  EXPECT_TRUE(contains(l.run.out, "  at reduced sizes: 4096 -> ")) << l.run.out;
}

TEST(ReducedReplay, ACounterexampleAndTheShiftedSliceAtReducedSizes) {
  Located l = check(localizePath("big_shifted/check.rel"));
  ASSERT_EQ(l.run.exitCode, 1) << l.run.out << l.run.err;
  EXPECT_EQ(l.replay["status"], "counterexample") << l.run.out;
  EXPECT_FALSE(l.replay["reduced_sizes"].is_null()) << l.run.out;
  EXPECT_EQ(l.replay["localization"]["first"]["tensor"], "D1.slice_1") << l.run.out;
}

TEST(ReducedReplay, NoSmallerInstanceIsRefusedWithTheReason) {
  // Every size is 2 (the smallest a role may take): no smaller instance; and the graphs are too large to run.
  Located l = check(localizePath("small_sizes/check.rel"));
  ASSERT_EQ(l.run.exitCode, 0) << l.run.out << l.run.err;
  EXPECT_EQ(l.replay["status"], "skipped");
  std::string summary = l.replay["summary"];
  EXPECT_TRUE(startsWith(summary, "replay skipped: graphs too large (")) << summary;
  EXPECT_TRUE(contains(summary, "no smaller instance")) << summary;
}

TEST(ReducedReplay, AFlattenedProductOfTwoLargeSizesKeepsItsProduct) {
  // view [n, n] -> [n * n]: one size per role reduces n and keeps n * n its square.
  Located l = check(localizePath("flattened/check.rel"));
  ASSERT_EQ(l.run.exitCode, 0) << l.run.out << l.run.err;
  EXPECT_EQ(l.replay["status"], "matched") << l.run.out;
  std::string sizes = l.replay["reduced_sizes"];
  EXPECT_TRUE(contains(sizes, "one size per role")) << sizes;
  auto n = sizes.find("2048 -> "), nn = sizes.find("4194304 -> ");
  ASSERT_NE(n, std::string::npos) << sizes;
  ASSERT_NE(nn, std::string::npos) << sizes;
  int64_t a = std::stoll(sizes.substr(n + 8)), b = std::stoll(sizes.substr(nn + 11));
  EXPECT_EQ(a * a, b) << sizes;
}

TEST(Localize, AnIntermediateWhosePartsAreOverwrittenIsNotBlamed) {
  // slice_scatter's result matches no spec tensor and its overwritten columns are never read
  // (vLLM writes rotated q/k back into the fused qkv tensor the same way): before, it was named
  // on rank 0 although only rank 1's last add is wrong.
  Located l = check(localizePath("unread_part/check.rel"));
  ASSERT_EQ(l.run.exitCode, 1) << l.run.out << l.run.err;
  const auto& loc = l.replay["localization"];
  ASSERT_TRUE(loc["found"].get<bool>()) << l.run.out;
  EXPECT_EQ(loc["first"]["tensor"], "D1.add") << l.run.out;
  EXPECT_EQ(loc["first"]["rank"], 1);
}

}  // namespace
}  // namespace tangle::e2e
