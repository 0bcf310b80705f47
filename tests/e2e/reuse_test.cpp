// Operator reuse (src/infer/reuse.cpp) end to end: every example and artifact
// relation file gives the same verdict and the same relations for every spec
// tensor with reuse on and off (`--option reuse=0`), and a bug planted in
// one layer of an artifact GPT is found at the same operator either way.
// The artifact cases skip when its data (../shared/data) is absent.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli_support.h"

namespace {

namespace fs = std::filesystem;
using namespace tangle::e2e;

const fs::path kArtifact = fs::path(TANGLE_SOURCE_DIR) / "../shared/data/entangle-artifact";

// The report without its timing and statistics lines.
// Without the statistics lines (an operator reused with reuse on may be block-searched without:
// the `blocks:` count differs, the relations do not).
std::string withoutStats(const std::string& out) {
  std::string kept;
  for (const std::string& line : splitLines(out))
    if (line.rfind("stats:", 0) != 0 && line.rfind("reuse:", 0) != 0 && line.rfind("lemmas fired:", 0) != 0 &&
        line.rfind("blocks:", 0) != 0)
      kept += line + "\n";
  return kept;
}

std::vector<fs::path> relationFiles() {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(examplePath("")))
    if (e.path().extension() == ".rel") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(ReuseE2E, EveryExampleGivesTheSameRelationsWithAndWithoutReuse) {
  size_t compared = 0, reusedSomewhere = 0;
  for (const fs::path& rel : relationFiles()) {
    bool artifact = rel.string().find("/artifact/") != std::string::npos;
    if (artifact && !fs::exists(kArtifact)) continue;
    SCOPED_TRACE(rel.string());
    RunResult on = runTangle({"check", rel.string(), "--relations"});
    RunResult off = runTangle({"check", rel.string(), "--relations", "--option", "reuse=0"});
    if (on.exitCode == 2 && off.exitCode == 2) continue;  // not a check of its own (e.g. an included file)
    ASSERT_TRUE(on.exitCode == 0 || on.exitCode == 1) << on.err;
    EXPECT_EQ(on.exitCode, off.exitCode);
    EXPECT_EQ(withoutStats(on.out), withoutStats(off.out));
    EXPECT_EQ(off.out.find("\nreuse:"), std::string::npos);
    reusedSomewhere += on.out.find("\nreuse:") != std::string::npos;
    ++compared;
  }
  EXPECT_GT(compared, 10u);
  if (fs::exists(kArtifact)) {
    EXPECT_GT(reusedSomewhere, 5u);  // the multi-layer artifact models
  }
}

// The artifact's GPT, TP=2 x 4 layers, with one operator of layer 2 changed
// on rank 1 (its gelu computes a relu): the violation is at the spec's
// layer-2 gelu, with and without reuse.
TEST(ReuseE2E, BugPlantedInOneLayerIsFoundAtThatLayer) {
  fs::path data = kArtifact / "gpt";
  if (!fs::exists(data / "paral2_layer4")) GTEST_SKIP() << "no artifact data at " << kArtifact;
  fs::path dir = tempPath("planted");
  fs::create_directories(dir);
  fs::copy_file(data / "paral2_layer4/fw.g0.r0.py", dir / "r0.py");
  std::string r1 = readFile(data / "paral2_layer4/fw.g0.r1.py");
  const std::string gelu = "torch.ops.aten.gelu.default(";
  size_t at = 0;
  for (int layer = 0; layer <= 2; ++layer) at = r1.find(gelu, layer == 0 ? 0 : at + 1);
  ASSERT_NE(at, std::string::npos);
  r1.replace(at, gelu.size(), "torch.ops.aten.relu.default(");
  std::ofstream(dir / "r1.py") << r1;
  std::string rel = "spec " + (data / "paral1_layer4/fw.g0.r0.py").string() + "\nimpl " + (dir / "r{rank}.py").string() +
                    " ranks 2\n";
  for (const std::string& line : splitLines(readFile(examplePath("artifact/gpt/paral2_layer4.rel"))))
    if (line.rfind("spec ", 0) != 0 && line.rfind("impl ", 0) != 0) rel += line + "\n";
  std::ofstream(dir / "bug.rel") << rel;
  RunResult on = runTangle({"check", (dir / "bug.rel").string()});
  RunResult off = runTangle({"check", (dir / "bug.rel").string(), "--option", "reuse=0"});
  fs::remove_all(dir);
  EXPECT_EQ(on.exitCode, 1) << on.out << on.err;
  EXPECT_EQ(off.exitCode, 1) << off.out << off.err;
  EXPECT_NE(on.out.find("failing operator: S.gelu_2 (aten.gelu.default)"), std::string::npos) << on.out;
  EXPECT_EQ(withoutStats(on.out), withoutStats(off.out));
  // Layers 0-1 were reused on the way, then the verdict was recomputed without reuse.
  EXPECT_NE(on.out.find("recomputed without reuse"), std::string::npos) << on.out;
}

}  // namespace
