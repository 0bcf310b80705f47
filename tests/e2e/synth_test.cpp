// End-to-end: `tangle synth` closes a gap (a lemma left out), the written lemma
// file makes `tangle check` refine; bad input exits 2 with one line.
#include <gtest/gtest.h>

#include "cli_support.h"

namespace tangle::e2e {
namespace {

std::string describe(const RunResult& r) {
  return "exit code " + std::to_string(r.exitCode) + "\n--- stdout:\n" + r.out + "--- stderr:\n" + r.err;
}

TEST(SynthCli, SynthesizeThenCheckWithTheLemmaFile) {
  std::string rel = examplePath("mlp/column_row/check.rel");
  fs::path out = tempPath("gelu.lemmas");
  RunResult before = runTangle({"check", rel, "--without-lemma", "gelu-concat"});
  EXPECT_EQ(before.exitCode, 1) << describe(before);
  RunResult s = runTangle({"synth", rel, "--without-lemma", "gelu-concat", "--out", out.string()});
  EXPECT_EQ(s.exitCode, 0) << describe(s);
  EXPECT_TRUE(contains(s.out, "accepted synth-gelu-1")) << s.out;
  EXPECT_TRUE(contains(s.out, "with the synthesized lemmas: refines")) << s.out;
  RunResult after = runTangle({"check", rel, "--without-lemma", "gelu-concat", "--lemmas", out.string()});
  EXPECT_EQ(after.exitCode, 0) << describe(after);
  fs::remove(out);
}

TEST(SynthCli, WrongRuleRefusedExitOne) {
  fs::path out = tempPath("wrong.lemmas");
  RunResult r = runTangle({"synth", sourcePath("tests/data/synth/check.rel"), "--candidate", "S.mm = D0.mm", "--out",
                           out.string()});
  EXPECT_EQ(r.exitCode, 1) << describe(r);
  EXPECT_TRUE(contains(r.out, "REFUSED synth-mm-1 (wrong)")) << r.out;
  EXPECT_FALSE(contains(readFile(out), "\nlemma ")) << readFile(out);
  fs::remove(out);
}

TEST(SynthCli, BadInputOneLineExitTwo) {
  std::string rel = sourcePath("tests/data/synth/check.rel");
  fs::path out = tempPath("bad.lemmas");
  std::vector<std::vector<std::string>> cases = {
      {"synth", sourcePath("tests/data/synth/missing.rel"), "--out", out.string()},
      {"synth", rel, "--candidate", "S.nope = D0.mm", "--out", out.string()},
      {"synth", rel, "--candidate", "S.mm = concat(", "--out", out.string()},
      {"synth", rel, "--without-lemma", "no-such-lemma", "--out", out.string()},
      {"synth", rel, "--out", "/nonexistent-dir/x.lemmas"},
      {"synth", rel},
  };
  for (const auto& args : cases) {
    RunResult r = runTangle(args);
    EXPECT_EQ(r.exitCode, 2) << args[1] << " " << args.back() << "\n" << describe(r);
    EXPECT_EQ(splitLines(r.err).size(), 1u) << describe(r);
  }
  fs::remove(out);
}

}  // namespace
}  // namespace tangle::e2e
