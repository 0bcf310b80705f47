// `tangle check --jobs N` end to end: one and two threads give the same exit
// code, text report (relations included) and JSON report, timings aside, on
// every example and artifact relation file (refinements, violations and bad
// input); the pipelined reuse gate rolls back where a prediction was wrong
// (the artifact GPT's last layer) and still gives the sequential result; a bug
// planted in layer k of n is found at layer k with two threads.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli_support.h"

namespace {

namespace fs = std::filesystem;
using namespace tangle::e2e;

const fs::path kArtifact = fs::path(TANGLE_SOURCE_DIR) / "../shared/data/entangle-artifact";


struct Report {
  RunResult run;
  std::string json;
};

Report check(const std::string& rel, int jobs, std::vector<std::string> extra = {}) {
  fs::path json = tempPath("report.json");
  std::vector<std::string> args{"check", rel, "--relations", "--jobs", std::to_string(jobs), "--json", json.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  Report r{runTangle(args), fs::exists(json) ? jsonWithoutTimes(json) : std::string()};
  fs::remove(json);
  return r;
}

void expectSame(const Report& one, const Report& two) {
  EXPECT_EQ(one.run.exitCode, two.run.exitCode) << one.run.err << two.run.err;
  EXPECT_EQ(withoutTimes(one.run.out), withoutTimes(two.run.out));
  EXPECT_EQ(one.run.err, two.run.err);
  EXPECT_EQ(one.json, two.json);
}

TEST(JobsE2E, EveryExampleGivesTheSameReportsWithOneAndTwoJobs) {
  std::vector<fs::path> rels;
  for (const auto& e : fs::recursive_directory_iterator(examplePath("")))
    if (e.path().extension() == ".rel") rels.push_back(e.path());
  std::sort(rels.begin(), rels.end());
  size_t refines = 0, violations = 0;
  for (const fs::path& rel : rels) {
    if (rel.string().find("/artifact/") != std::string::npos && !fs::exists(kArtifact)) continue;
    SCOPED_TRACE(rel.string());
    Report one = check(rel.string(), 1), two = check(rel.string(), 2);
    expectSame(one, two);
    refines += one.run.exitCode == 0;
    violations += one.run.exitCode == 1;
  }
  EXPECT_GT(refines, 10u);
  EXPECT_GT(violations, 5u);
}

// The artifact GPT, TP=2 x 8 layers: the gates predicted for the residual add
// and the attention getitem fail at the last layer (other users), the walk
// rolls back there, and the report is the sequential one.
TEST(JobsE2E, WrongGatePredictionRollsBackToTheSequentialResult) {
  fs::path rel = examplePath("artifact/gpt/paral2_layer8.rel");
  if (!fs::exists(kArtifact)) GTEST_SKIP() << "no artifact data at " << kArtifact;
  Report one = check(rel.string(), 1);
  setenv("TANGLE_TRACE_OPS", "1", 1);
  Report two = check(rel.string(), 2);
  unsetenv("TANGLE_TRACE_OPS");
  EXPECT_EQ(one.run.exitCode, 0) << one.run.out << one.run.err;
  EXPECT_NE(two.run.err.find("rolling back"), std::string::npos) << two.run.err;
  EXPECT_EQ(withoutTimes(one.run.out), withoutTimes(two.run.out));
  EXPECT_EQ(one.json, two.json);
}

// GPT TP=2 x 8 layers with rank 1's gelu of layer k computing a relu: the
// violation is at the spec's layer-k gelu with one and with two threads.
TEST(JobsE2E, BugPlantedInLayerKOfNIsFoundAtLayerK) {
  fs::path data = kArtifact / "gpt";
  if (!fs::exists(data / "paral2_layer8")) GTEST_SKIP() << "no artifact data at " << kArtifact;
  for (int k : {1, 5, 7}) {
    SCOPED_TRACE("layer " + std::to_string(k));
    fs::path dir = tempPath("planted");
    fs::create_directories(dir);
    fs::copy_file(data / "paral2_layer8/fw.g0.r0.py", dir / "r0.py");
    std::string r1 = readFile(data / "paral2_layer8/fw.g0.r1.py");
    const std::string gelu = "torch.ops.aten.gelu.default(";
    size_t at = 0;
    for (int layer = 0; layer <= k; ++layer) at = r1.find(gelu, layer == 0 ? 0 : at + 1);
    ASSERT_NE(at, std::string::npos);
    r1.replace(at, gelu.size(), "torch.ops.aten.relu.default(");
    std::ofstream(dir / "r1.py") << r1;
    std::string rel = "spec " + (data / "paral1_layer8/fw.g0.r0.py").string() + "\nimpl " +
                      (dir / "r{rank}.py").string() + " ranks 2\n";
    for (const std::string& line : splitLines(readFile(examplePath("artifact/gpt/paral2_layer8.rel"))))
      if (line.rfind("spec ", 0) != 0 && line.rfind("impl ", 0) != 0) rel += line + "\n";
    std::ofstream(dir / "bug.rel") << rel;
    Report one = check((dir / "bug.rel").string(), 1), two = check((dir / "bug.rel").string(), 2);
    fs::remove_all(dir);
    EXPECT_EQ(two.run.exitCode, 1) << two.run.out << two.run.err;
    std::string at_k = "failing operator: S.gelu" + (k == 0 ? std::string() : "_" + std::to_string(k)) + " (aten.gelu.default)";
    EXPECT_NE(two.run.out.find(at_k), std::string::npos) << two.run.out;
    expectSame(one, two);
  }
}

TEST(JobsE2E, BadJobsCountIsRefused) {
  RunResult r = runTangle({"check", examplePath("mlp/column_row/check.rel"), "--jobs", "0"});
  EXPECT_EQ(r.exitCode, 2) << r.err;
}

}  // namespace
