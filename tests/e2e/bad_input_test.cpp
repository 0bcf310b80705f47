// End-to-end: bad input and bad usage exit with code 2. For bad files the
// CLI prints exactly one line on stderr, "file:line: error: ...", naming the
// offending tensor (tests/data/bad/*).
#include <gtest/gtest.h>

#include "cli_support.h"

namespace tangle::e2e {
namespace {

class BadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(TANGLE_BINARY)) << "build the `tangle` target first: " << TANGLE_BINARY;
  }
};

std::string describe(const RunResult& r) {
  return "exit code " + std::to_string(r.exitCode) + "\n--- stdout:\n" + r.out + "--- stderr:\n" + r.err;
}

// The one stderr line of a bad-input run (fails the test when there are more).
std::string onlyErrorLine(const RunResult& r) {
  auto lines = splitLines(r.err);
  EXPECT_EQ(lines.size(), 1u) << "expected exactly one line on stderr\n" << describe(r);
  return lines.empty() ? std::string() : lines.front();
}

// Runs `tangle check <rel>` and checks: exit 2, one stderr line of the form
// "<...rel file>:<line>: error: ..." mentioning `name`.
void expectRelError(const std::string& relFile, int line, const std::string& name) {
  RunResult r = runTangle({"check", badPath(relFile)});
  EXPECT_EQ(r.exitCode, 2) << describe(r);
  std::string msg = onlyErrorLine(r);
  EXPECT_EQ(diagnosticLine(msg, relFile), line) << msg;
  EXPECT_TRUE(mentionsName(msg.substr(msg.find("error:") == std::string::npos ? 0 : msg.find("error:")), name))
      << "should name " << name << ": " << msg;
}

// `tangle check SPEC --impl R0 R1 --relation inputs.rel` with the graphs of
// examples/paper/matmul_sub, replacing the spec or one rank by `bad`.
RunResult checkWithGraph(const std::string& bad, int asRank /* -1 = as the spec */) {
  std::string dir = "paper/matmul_sub/";
  std::string spec = asRank < 0 ? bad : examplePath(dir + "spec.py");
  std::string r0 = asRank == 0 ? bad : examplePath(dir + "impl.r0.py");
  std::string r1 = asRank == 1 ? bad : examplePath(dir + "impl.r1.py");
  return runTangle({"check", spec, "--impl", r0, r1, "--relation", examplePath(dir + "inputs.rel")});
}

// --- bad graph dumps -------------------------------------------------------

TEST_F(BadInput, TruncatedDump) {
  // Cut in the middle of line 14 (an unfinished call), no return statement.
  RunResult r = checkWithGraph(badPath("truncated.py"), -1);
  EXPECT_EQ(r.exitCode, 2) << describe(r);
  std::string msg = onlyErrorLine(r);
  auto line = diagnosticLine(msg, "truncated.py");
  ASSERT_TRUE(line.has_value()) << msg;
  EXPECT_TRUE(*line == 14 || *line == 15) << msg;  // the cut line, or the end of file just after it
}

TEST_F(BadInput, GarbageDump) {
  RunResult r = checkWithGraph(badPath("garbage.py"), -1);
  EXPECT_EQ(r.exitCode, 2) << describe(r);
  std::string msg = onlyErrorLine(r);
  auto line = diagnosticLine(msg, "garbage.py");
  ASSERT_TRUE(line.has_value()) << msg;
  EXPECT_GE(*line, 1) << msg;
  EXPECT_LE(*line, 4) << msg;  // the file has 3 lines
}

TEST_F(BadInput, ForwardReferenceInSpec) {
  // Line 14: `sub` reads `add`, which is only defined on line 17.
  RunResult r = checkWithGraph(badPath("cycle.py"), -1);
  EXPECT_EQ(r.exitCode, 2) << describe(r);
  std::string msg = onlyErrorLine(r);
  EXPECT_EQ(diagnosticLine(msg, "cycle.py"), 14) << msg;
  EXPECT_TRUE(mentionsName(msg, "add")) << msg;
}

TEST_F(BadInput, ForwardReferenceInOneRank) {
  RunResult r = checkWithGraph(badPath("cycle.py"), 1);
  EXPECT_EQ(r.exitCode, 2) << describe(r);
  std::string msg = onlyErrorLine(r);
  EXPECT_EQ(diagnosticLine(msg, "cycle.py"), 14) << msg;
}

// --- bad relation files ----------------------------------------------------

TEST_F(BadInput, RelationNamesMissingSpecTensor) { expectRelError("missing_tensor.rel", 9, "nope"); }

TEST_F(BadInput, RelationNamesMissingImplTensor) { expectRelError("missing_impl_tensor.rel", 8, "Enope"); }

TEST_F(BadInput, RelationShapesDoNotAddUp) { expectRelError("shape_mismatch.rel", 7, "A"); }

TEST_F(BadInput, RelationUsesUnknownFunction) { expectRelError("unknown_op.rel", 8, "interleave"); }

TEST_F(BadInput, RelationNamesRankOutOfRange) { expectRelError("rank_out_of_range.rel", 7, "D2"); }

TEST_F(BadInput, RelationNamesMissingGraphFile) {
  RunResult r = runTangle({"check", badPath("missing_graph.rel")});
  EXPECT_EQ(r.exitCode, 2) << describe(r);
  std::string msg = onlyErrorLine(r);
  EXPECT_TRUE(contains(msg, "does_not_exist.py")) << msg;
  EXPECT_TRUE(contains(msg, "error:")) << msg;
}

// --- missing files and bad usage ------------------------------------------

TEST_F(BadInput, MissingRelationFile) {
  std::string missing = sourcePath("tests/data/bad/nothing_here.rel");
  ASSERT_FALSE(fs::exists(missing));
  RunResult r = runTangle({"check", missing});
  EXPECT_EQ(r.exitCode, 2) << describe(r);
  std::string msg = onlyErrorLine(r);
  EXPECT_TRUE(contains(msg, "nothing_here.rel")) << msg;
  EXPECT_TRUE(contains(msg, "error:")) << msg;
}

TEST_F(BadInput, MissingImplFile) {
  RunResult r = checkWithGraph(sourcePath("tests/data/bad/no_such_rank.py"), 0);
  EXPECT_EQ(r.exitCode, 2) << describe(r);
  std::string msg = onlyErrorLine(r);
  EXPECT_TRUE(contains(msg, "no_such_rank.py")) << msg;
}

TEST_F(BadInput, NoArguments) {
  RunResult r = runTangle({});
  EXPECT_EQ(r.exitCode, 2) << describe(r);
  EXPECT_FALSE(r.err.empty()) << "usage errors are explained on stderr";
}

TEST_F(BadInput, UnknownSubcommand) {
  RunResult r = runTangle({"frobnicate", examplePath("paper/matmul_sub/check.rel")});
  EXPECT_EQ(r.exitCode, 2) << describe(r);
  EXPECT_FALSE(r.err.empty());
}

TEST_F(BadInput, CheckWithoutInput) {
  RunResult r = runTangle({"check"});
  EXPECT_EQ(r.exitCode, 2) << describe(r);
  EXPECT_FALSE(r.err.empty());
}

TEST_F(BadInput, UnknownOption) {
  RunResult r = runTangle({"check", examplePath("paper/matmul_sub/check.rel"), "--no-such-option"});
  EXPECT_EQ(r.exitCode, 2) << describe(r);
  EXPECT_FALSE(r.err.empty());
}

TEST_F(BadInput, ImplWithoutValues) {
  RunResult r = runTangle({"check", examplePath("paper/matmul_sub/spec.py"), "--impl", "--relation",
                           examplePath("paper/matmul_sub/inputs.rel")});
  EXPECT_EQ(r.exitCode, 2) << describe(r);
  EXPECT_FALSE(r.err.empty());
}

}  // namespace
}  // namespace tangle::e2e
