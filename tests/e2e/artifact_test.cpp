// The Megatron-LM GPT workloads of the Entangle artifact: one test per relation
// file examples/artifact/gpt/*.rel. Each must refine its paral1 spec with the
// loss expectation holding on every rank. Skips when the data is absent.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli_support.h"

namespace {

namespace fs = std::filesystem;
using namespace tangle::e2e;

// What the test needs from a relation file's header.
struct GptConfig {
  std::string name;       // e.g. paral2_layer4
  fs::path rel;           // the relation file
  fs::path spec, impl0;   // the spec graph and rank 0's graph (paths resolved)
  int ranks = 0;          // from `impl PATTERN ranks N`
};

// gtest prints a failing parameter with this instead of its bytes.
void PrintTo(const GptConfig& c, std::ostream* os) { *os << c.rel.filename().string(); }

GptConfig readConfig(const fs::path& rel) {
  GptConfig c;
  c.name = rel.stem().string();
  c.rel = rel;
  std::ifstream in(rel);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line.substr(0, line.find('#')));
    std::string keyword, path, ranksWord;
    words >> keyword >> path;
    if (keyword == "spec") {
      c.spec = rel.parent_path() / path;
    } else if (keyword == "impl") {
      if (auto at = path.find("{rank}"); at != std::string::npos) path.replace(at, 6, "0");
      c.impl0 = rel.parent_path() / path;
      if (words >> ranksWord && ranksWord == "ranks") words >> c.ranks;
    }
  }
  return c;
}

std::vector<GptConfig> gptConfigs() {
  std::vector<GptConfig> configs;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(examplePath("artifact/gpt"), ec))
    if (entry.path().extension() == ".rel") configs.push_back(readConfig(entry.path()));
  std::sort(configs.begin(), configs.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return configs;
}

class ArtifactGpt : public ::testing::TestWithParam<GptConfig> {};

TEST_P(ArtifactGpt, RefinesWithTheLossOnEveryRank) {
  const GptConfig& c = GetParam();
  ASSERT_FALSE(c.spec.empty()) << c.rel << " has no spec line";
  ASSERT_GT(c.ranks, 1) << c.rel << " has no `impl ... ranks N` line";
  if (!fs::exists(c.spec) || !fs::exists(c.impl0))
    GTEST_SKIP() << "artifact data is absent (" << (fs::exists(c.spec) ? c.impl0 : c.spec).lexically_normal()
                 << "); it lives in ../shared/data/entangle-artifact beside the repository";

  auto r = runTangle({"check", c.rel.string()});
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_EQ(firstLine(r.out), "verdict: refines") << r.out;
  auto lines = splitLines(r.out);
  for (int rank = 0; rank < c.ranks; ++rank) {
    std::string holds = "expectation holds: S.div_2 = D" + std::to_string(rank) + ".div_2";
    bool found = std::any_of(lines.begin(), lines.end(), [&](const std::string& line) {
      std::string t = trim(line);  // the relation, then nothing or "  (file:line)"
      return startsWith(t, holds) && (t.size() == holds.size() || t[holds.size()] == ' ');
    });
    EXPECT_TRUE(found) << "missing \"" << holds << "\" in\n" << r.out;
  }
  EXPECT_FALSE(contains(r.out, "expectation refused")) << r.out;
}

INSTANTIATE_TEST_SUITE_P(Configs, ArtifactGpt, ::testing::ValuesIn(gptConfigs()),
                         [](const ::testing::TestParamInfo<GptConfig>& info) {
                           std::string name = info.param.name;
                           for (char& ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ArtifactGpt);

}  // namespace
