// vLLM Qwen2 (TP=2) from the Entangle artifact: refines with the layer output
// held by every rank; dropping the o_proj all-reduce (on every rank, as a
// misconfiguration would) is caught at the fused add + RMSNorm that consumes
// it. Skips when the data is absent.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "cli_support.h"

namespace {

namespace fs = std::filesystem;
using namespace tangle::e2e;

fs::path dataDir() {
  return fs::path(TANGLE_SOURCE_DIR) / ".." / "shared" / "data" / "entangle-artifact" / "qwen2";
}

TEST(ArtifactQwen2, TensorParallelLayerRefines) {
  if (!fs::exists(dataDir() / "paral2_layer1")) GTEST_SKIP() << "artifact data folder " << dataDir() << " is absent";
  auto r = runTangle({"check", examplePath("artifact/qwen2/paral2_layer1.rel")});
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("expectation holds: S.getitem_34 = D0.getitem_34"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("expectation holds: S.getitem_34 = D1.getitem_34"), std::string::npos) << r.out;
}

TEST(ArtifactQwen2, MissingOProjAllReduceIsAViolation) {
  if (!fs::exists(dataDir() / "paral2_layer1")) GTEST_SKIP() << "artifact data folder " << dataDir() << " is absent";
  fs::path dir = tempPath("qwen2_mutant");
  fs::create_directories(dir);
  for (int r = 0; r < 2; ++r) {
    std::string name = "fw.g0.r" + std::to_string(r) + ".py";
    std::string text = readFile(dataDir() / "paral2_layer1" / name);
    {
      std::string from = "torch.ops.vllm.all_reduce.default(mm, 'tp:0')";
      size_t at = text.find(from);
      ASSERT_NE(at, std::string::npos);
      text.replace(at, from.size(), "torch.ops.aten.clone.default(mm)");
    }
    std::ofstream(dir / name) << text;
  }
  std::string rel = readFile(sourcePath("examples/artifact/qwen2/paral2_layer1.rel"));
  std::string out;
  for (const auto& line : splitLines(rel)) {
    if (line.rfind("spec ", 0) == 0) out += "spec " + (dataDir() / "paral1_layer1" / "fw.g0.r0.py").string() + "\n";
    else if (line.rfind("impl ", 0) == 0) out += "impl " + (dir / "fw.g0.r{rank}.py").string() + " ranks 2\n";
    else out += line + "\n";
  }
  std::ofstream(dir / "check.rel") << out;
  auto r = runTangle({"check", (dir / "check.rel").string()});
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("failing operator: S.getitem_29"), std::string::npos) << r.out;
  fs::remove_all(dir);
}

}  // namespace
