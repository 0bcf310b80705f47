// Stage-parallel checking (src/infer/search_ahead.h) end to end: with
// `--jobs 2` a second thread searches operators ahead of the walk, and the
// walk takes a search only when what it read is what the walk has. Checked
// here: the artifact GPT configurations give the sequential text and JSON
// reports while searches ahead are taken; wrong speculated relations (a test
// hook corrupts the helper's copy of the relations) are detected and searched
// again, still giving the sequential report, for a refinement and for a
// violation planted in a middle layer (found at the same operator).
// (tests/e2e/jobs_test.cpp compares -j 1 and -j 2 on every example file.)
#include <cstdlib>
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

// With `trace`, TANGLE_TRACE_OPS is set (stderr then lists every operator);
// with `corrupt`, the helper's speculated relations are made wrong.
Report check(const std::string& rel, int jobs, bool trace = false, bool corrupt = false) {
  fs::path json = tempPath("stage.json");
  if (trace) setenv("TANGLE_TRACE_OPS", "1", 1);
  if (corrupt) setenv("TANGLE_TEST_CORRUPT_AHEAD", "1", 1);
  Report r{runTangle({"check", rel, "--relations", "--jobs", std::to_string(jobs), "--json", json.string()}),
           fs::exists(json) ? jsonWithoutTimes(json) : std::string()};
  unsetenv("TANGLE_TRACE_OPS");
  unsetenv("TANGLE_TEST_CORRUPT_AHEAD");
  fs::remove(json);
  return r;
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

void expectSameReport(const Report& one, const Report& two) {
  EXPECT_EQ(one.run.exitCode, two.run.exitCode) << one.run.err << two.run.err;
  EXPECT_EQ(withoutTimes(one.run.out), withoutTimes(two.run.out));
  EXPECT_EQ(one.json, two.json);
}

TEST(StageParallelE2E, ArtifactGptConfigurationsTakeSearchesAheadAndReportAsSequential) {
  if (!fs::exists(kArtifact)) GTEST_SKIP() << "no artifact data at " << kArtifact;
  for (const char* name : {"paral2_layer1", "paral2_layer8", "paral4_layer1", "paral4_layer8"}) {
    SCOPED_TRACE(name);
    std::string rel = examplePath(std::string("artifact/gpt/") + name + ".rel");
    Report one = check(rel, 1), two = check(rel, 2, true);
    expectSameReport(one, two);
    EXPECT_EQ(one.run.exitCode, 0) << one.run.out << one.run.err;
    EXPECT_GT(count(two.run.err, "(searched ahead)"), 0u) << two.run.err;
  }
}

TEST(StageParallelE2E, WrongSpeculatedRelationsAreSearchedAgain) {
  if (!fs::exists(kArtifact)) GTEST_SKIP() << "no artifact data at " << kArtifact;
  std::string rel = examplePath("artifact/gpt/paral4_layer8.rel");
  Report one = check(rel, 1), two = check(rel, 2, true, true);
  expectSameReport(one, two);
  EXPECT_EQ(one.run.exitCode, 0) << one.run.out << one.run.err;
  EXPECT_GT(count(two.run.err, "searched again"), 0u) << two.run.err;
}

// GPT TP=2 x 8 layers with rank 1's gelu of layer 4 computing a relu: the
// violation is at the spec's layer-4 gelu sequentially, stage-parallel, and
// stage-parallel with wrong speculations.
TEST(StageParallelE2E, ViolationPlantedInAMiddleLayerIsFoundAtTheSameOperator) {
  fs::path data = kArtifact / "gpt";
  if (!fs::exists(data / "paral2_layer8")) GTEST_SKIP() << "no artifact data at " << kArtifact;
  fs::path dir = tempPath("stage_planted");
  fs::create_directories(dir);
  fs::copy_file(data / "paral2_layer8/fw.g0.r0.py", dir / "r0.py");
  std::string r1 = readFile(data / "paral2_layer8/fw.g0.r1.py");
  const std::string gelu = "torch.ops.aten.gelu.default(";
  size_t at = 0;
  for (int layer = 0; layer <= 4; ++layer) at = r1.find(gelu, layer == 0 ? 0 : at + 1);
  ASSERT_NE(at, std::string::npos);
  r1.replace(at, gelu.size(), "torch.ops.aten.relu.default(");
  std::ofstream(dir / "r1.py") << r1;
  std::string rel = "spec " + (data / "paral1_layer8/fw.g0.r0.py").string() + "\nimpl " +
                    (dir / "r{rank}.py").string() + " ranks 2\n";
  for (const std::string& line : splitLines(readFile(examplePath("artifact/gpt/paral2_layer8.rel"))))
    if (line.rfind("spec ", 0) != 0 && line.rfind("impl ", 0) != 0) rel += line + "\n";
  std::ofstream(dir / "bug.rel") << rel;
  std::string path = (dir / "bug.rel").string();
  Report one = check(path, 1), two = check(path, 2), wrong = check(path, 2, false, true);
  fs::remove_all(dir);
  EXPECT_EQ(one.run.exitCode, 1) << one.run.out << one.run.err;
  EXPECT_NE(one.run.out.find("failing operator: S.gelu_4 (aten.gelu.default)"), std::string::npos) << one.run.out;
  expectSameReport(one, two);
  expectSameReport(one, wrong);
}

}  // namespace
