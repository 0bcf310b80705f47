// `tangle check --replay`: output relations replayed on random inputs for the
// refining examples, concrete counterexamples for the buggy ones.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "cli_support.h"

namespace tangle::e2e {
namespace {

struct Replayed {
  RunResult run;
  std::vector<std::string> lines;
};

Replayed replay(const std::string& example, std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"check", examplePath(example + "/check.rel"), "--replay"};
  args.insert(args.end(), extra.begin(), extra.end());
  Replayed r{runTangle(args), {}};
  r.lines = splitLines(r.run.out);
  return r;
}

// "counterexample: S.mm[0, 3] = 0.5 but concat(...)[0, 3] = 0.25  (seed 1)" ->
// subject "S.mm", candidate "concat(...)", both values.
struct Counterexample {
  std::string subject, candidate;
  double expected = 0, actual = 0;
};
std::vector<Counterexample> counterexamples(const std::vector<std::string>& lines) {
  std::vector<Counterexample> out;
  const std::string head = "counterexample: ";
  for (auto& l : lines) {
    std::string t = trim(l);
    if (!startsWith(t, head)) continue;
    t = t.substr(head.size());
    size_t but = t.find(" but "), eq1 = t.find(" = "), eq2 = t.rfind(" = "), seed = t.rfind("  (seed");
    if (but == std::string::npos || eq1 > but || eq2 < but || seed == std::string::npos) continue;
    Counterexample c;
    c.subject = t.substr(0, t.find('[') < eq1 ? t.find('[') : eq1);
    c.expected = std::stod(t.substr(eq1 + 3, but - eq1 - 3));
    std::string rhs = t.substr(but + 5, eq2 - but - 5);
    c.candidate = rhs.back() == ']' ? rhs.substr(0, rhs.rfind('[')) : rhs;
    c.actual = std::stod(t.substr(eq2 + 3, seed - eq2 - 3));
    out.push_back(c);
  }
  return out;
}

class ReplayRefines : public ::testing::TestWithParam<const char*> {};

TEST_P(ReplayRefines, OutputRelationsHoldOnRandomInputs) {
  Replayed r = replay(GetParam());
  ASSERT_EQ(r.run.exitCode, 0) << r.run.out << r.run.err;
  auto at = findLine(r.lines, "replay: ");
  ASSERT_TRUE(at) << r.run.out;
  const std::string& line = r.lines[*at];
  ASSERT_TRUE(startsWith(line, "replay: 1 outputs match (max abs error ")) << line;
  double err = std::stod(line.substr(line.rfind(' ') + 1));
  EXPECT_LT(err, 1e-9);
  EXPECT_TRUE(findLine(r.lines, "seeds 1, 2, 3;", *at)) << r.run.out;
}

INSTANTIATE_TEST_SUITE_P(Examples, ReplayRefines,
                         ::testing::Values("paper/matmul_sub", "paper/matmul_sub_rs", "mlp/column_row",
                                           "sp/layernorm_allgather", "sp/allgather_qkv_heads",
                                           "tp/column_gather_last_dim"));

TEST(ReplayViolation, OffDiagonalBlocksAreMissing) {
  Replayed r = replay("paper/bug4_offdiag");
  ASSERT_EQ(r.run.exitCode, 1) << r.run.out << r.run.err;
  EXPECT_TRUE(findLine(r.lines, "replay: counterexample for the failing operator S.mm")) << r.run.out;
  auto cs = counterexamples(r.lines);
  ASSERT_EQ(cs.size(), 1u) << r.run.out;
  EXPECT_EQ(cs[0].subject, "S.mm");
  // Rank r gathers A_r @ B_r for both r: the column blocks next to each other are the closest layout.
  EXPECT_EQ(cs[0].candidate, "concat(D0.wait_tensor, D1.wait_tensor, dim=1)");
  EXPECT_GT(std::abs(cs[0].expected - cs[0].actual), 1e-6);
}

TEST(ReplayViolation, MissingAllReduceLeavesAPartialSum) {
  Replayed r = replay("mlp/missing_allreduce");
  ASSERT_EQ(r.run.exitCode, 1) << r.run.out << r.run.err;
  auto cs = counterexamples(r.lines);
  ASSERT_EQ(cs.size(), 1u) << r.run.out;
  EXPECT_EQ(cs[0].subject, "S.add");
  EXPECT_EQ(cs[0].candidate, "D0.add");
  EXPECT_GT(std::abs(cs[0].expected - cs[0].actual), 1e-6);
  EXPECT_TRUE(findLine(r.lines, "the other candidates differ too: D1.add; sum(D0.add, D1.add)")) << r.run.out;
}

TEST(ReplayViolation, RefusedExpectationHasACounterexamplePerRank) {
  Replayed r = replay("expect/partial_grad");
  ASSERT_EQ(r.run.exitCode, 1) << r.run.out << r.run.err;
  auto cs = counterexamples(r.lines);
  ASSERT_EQ(cs.size(), 2u) << r.run.out;
  EXPECT_EQ(cs[0].subject, "S.mm");
  EXPECT_EQ(cs[0].candidate, "D0.mm");
  EXPECT_EQ(cs[1].candidate, "D1.mm");
  for (auto& c : cs) EXPECT_GT(std::abs(c.expected - c.actual), 1e-6);
  // The output relation that was found (S.mm = sum(D0.mm, D1.mm)) does hold.
  EXPECT_TRUE(findLine(r.lines, "1 outputs match their reported relations")) << r.run.out;
}

TEST(ReplayCli, SeedChangesTheInputs) {
  auto a = counterexamples(replay("paper/bug4_offdiag").lines);
  auto b = counterexamples(replay("paper/bug4_offdiag", {"--seed", "17"}).lines);
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_NE(a[0].expected, b[0].expected);
  auto again = counterexamples(replay("paper/bug4_offdiag").lines);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].expected, a[0].expected);  // deterministic for a seed
}

TEST(ReplayCli, JsonReportGainsAReplayObject) {
  fs::path json = tempPath("replay.json");
  Replayed r = replay("mlp/missing_allreduce", {"--json", json.string()});
  ASSERT_EQ(r.run.exitCode, 1) << r.run.err;
  auto j = nlohmann::json::parse(readFile(json));
  fs::remove(json);
  ASSERT_TRUE(j.contains("replay"));
  EXPECT_EQ(j["replay"]["status"], "counterexample");
  ASSERT_EQ(j["replay"]["counterexamples"].size(), 1u);
  EXPECT_EQ(j["replay"]["counterexamples"][0]["subject"], "S.add");

  fs::path plain = tempPath("plain.json");
  RunResult p = runTangle({"check", examplePath("mlp/missing_allreduce/check.rel"), "--json", plain.string()});
  EXPECT_EQ(p.exitCode, 1);
  EXPECT_FALSE(nlohmann::json::parse(readFile(plain)).contains("replay"));
  EXPECT_FALSE(contains(p.out, "\nreplay"));  // no replay section (paths may contain the word)
  fs::remove(plain);
}

TEST(ReplayCli, SeedNeedsReplay) {
  RunResult r = runTangle({"check", examplePath("paper/matmul_sub/check.rel"), "--seed", "3"});
  EXPECT_EQ(r.exitCode, 2) << r.out;
}

}  // namespace
}  // namespace tangle::e2e
