#include "import/import.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "import/fx_importer.h"
#include "import/text_file.h"

namespace tangle {
namespace {

namespace fs = std::filesystem;
const std::string kData = TANGLE_SOURCE_DIR "/tests/data/import/";
const std::string kArtifact = TANGLE_SOURCE_DIR "/../shared/data/entangle-artifact";

TEST(ImportGraph, DispatchesOnExtension) {
  EXPECT_EQ(importGraph(kData + "basic.py").node(0).name, "x");
  EXPECT_EQ(importGraph(kData + "basic.json").node(2).name, "mm");
  try {
    importGraph(kData + "graph.onnx");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("unsupported graph format"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("graph.onnx"), std::string::npos) << e.what();
  }
  try {
    importGraph(kData + "missing.py");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("missing.py"), std::string::npos) << e.what();
  }
}

TEST(ImportGraph, EveryArtifactDump) {
  if (!fs::is_directory(kArtifact)) GTEST_SKIP() << "data folder " << kArtifact << " is absent";
  int files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(kArtifact)) {
    if (entry.path().extension() != ".py") continue;
    ++files;
    Graph g;
    ASSERT_NO_THROW(g = importGraph(entry.path().string())) << entry.path();
    EXPECT_GT(g.size(), 0u) << entry.path();
    EXPECT_FALSE(g.inputs.empty()) << entry.path();
    EXPECT_FALSE(g.outputs.empty()) << entry.path();
    for (const Node& n : g.nodes) {
      if (n.op != "getitem") continue;
      EXPECT_TRUE(g.node(std::get<TensorRef>(n.args[0].v).node).isTuple) << n.name;
    }
  }
  EXPECT_GE(files, 40);
}

TEST(ImportGraph, ArtifactFacts) {
  if (!fs::is_directory(kArtifact)) GTEST_SKIP() << "data folder " << kArtifact << " is absent";
  Graph g = importGraph(kArtifact + "/gpt/paral2_layer1/fw.g0.r0.py");
  ASSERT_EQ(g.inputs.size(), 22u);
  EXPECT_EQ(g.node(g.inputs[0]).type, (TensorType{DType::F32, {49152, 768}}));
  auto mm = g.find("mm");
  ASSERT_TRUE(mm);
  EXPECT_EQ(g.node(*mm).op, "aten.mm.default");
  ASSERT_TRUE(g.node(*mm).type);
  EXPECT_EQ(g.node(*mm).type->dtype, DType::F32);
  auto ar = g.find("all_reduce");
  ASSERT_TRUE(ar);
  EXPECT_EQ(g.node(*ar).op, "_c10d_functional.all_reduce.default");
  EXPECT_EQ(g.node(*ar).args.back(), Value(std::string("12")));
  auto div2 = g.find("div_2");
  ASSERT_TRUE(div2);
  EXPECT_EQ(g.outputs.front(), Value(TensorRef{*div2}));
  EXPECT_EQ(g.node(*div2).type, (TensorType{DType::F32, {}}));
  EXPECT_NE(g.node(*div2).source.find("output_tensor /= num_microbatches"), std::string::npos);

  Graph q = importGraph(kArtifact + "/qwen2/paral2_layer1/fw.g0.r1.py");
  auto af = q.find("auto_functionalized");
  ASSERT_TRUE(af);
  EXPECT_EQ(q.node(*af).args.at(0), Value(Symbol{"_C.rms_norm.default"}));
  EXPECT_TRUE(q.node(*af).isTuple);

  Graph b = importGraph(kArtifact + "/bug_missing_allreduce_under_wrong_config/tp1/both.g1.r0.py");
  EXPECT_EQ(b.inputs.size(), 3u);
  EXPECT_EQ(b.outputs.size(), 2u);
}

// Speed belongs to bench/artifact (whole checks, import included), not to a timed test.
TEST(ImportGraph, LargeDumpImportsRepeatably) {
  const std::string big = kArtifact + "/gpt/paral4_layer8/fw.g0.r0.py";
  if (!fs::exists(big)) GTEST_SKIP() << "data folder " << kArtifact << " is absent";
  std::string text = readTextFile(big);
  const size_t first = importFxText(text, big).size();
  EXPECT_GT(first, 800u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(importFxText(text, big).size(), first);
}

}  // namespace
}  // namespace tangle
