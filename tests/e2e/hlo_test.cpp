// HLO programs (one SPMD module for every rank) end to end.
#include <fstream>

#include <gtest/gtest.h>

#include "cli_support.h"

namespace {
using namespace tangle::e2e;

TEST(Hlo, TensorParallelMlpRefinesAndReplays) {
  auto r = runTangle({"check", examplePath("hlo/tp_mlp/check.rel"), "--replay"});
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_EQ(outputRelation(r.out), (std::vector<std::string>{"S.y = D0.y", "S.y = D1.y"}));
  EXPECT_NE(r.out.find("replay: 1 outputs match"), std::string::npos) << r.out;
}

TEST(Hlo, MissingAllReduceLeavesPartialSums) {
  auto r = runTangle({"check", examplePath("hlo/missing_allreduce/check.rel"), "--replay"});
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("expectation refused: S.y = D0.y"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("known: S.y = sum(D0.y, D1.y)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("counterexample: S.y[0, 0]"), std::string::npos) << r.out;
}

// An unknown instruction is opaque: equal only to the same call on equal
// inputs *with the same result shape* (an HLO result shape is not among its
// operands, so two such calls must not meet).
TEST(Hlo, OpaqueCallsWithOtherResultShapesNeverMeet) {
  fs::path dir = tempPath("hlo_opaque");
  fs::create_directories(dir);
  auto module = [](const char* shape) {
    return std::string("HloModule m\nENTRY %main (x: f32[4]) -> f32[") + shape + "] {\n  %x = f32[4]{0} parameter(0)\n" +
           "  ROOT %c = f32[" + shape + "]{0} custom-call(%x), custom_call_target=\"Foo\"\n}\n";
  };
  std::ofstream(dir / "spec.hlo") << module("4");
  std::ofstream(dir / "impl.hlo") << module("2");
  std::ofstream(dir / "check.rel") << "spec spec.hlo\nimpl impl.hlo ranks 1\nS.x = D0.x\n";
  auto r = runTangle({"check", (dir / "check.rel").string()});
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  // The same call with the same shape is congruent: refines.
  std::ofstream(dir / "impl.hlo") << module("4");
  r = runTangle({"check", (dir / "check.rel").string()});
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  fs::remove_all(dir);
}

// The same for torch.fx dumps, whose opaque calls are identified by their
// arguments: dumps that disagree on a call's result type never certify.
TEST(Hlo, FxDumpsThatDisagreeOnAnOpaqueResultAreInconclusive) {
  fs::path dir = tempPath("fx_opaque");
  fs::create_directories(dir);
  auto dump = [](const char* shape) {
    return std::string("class M(torch.nn.Module):\n    def forward(self, x: \"f32[4]\"):\n        c: \"f32[") + shape +
           "]\" = torch.ops.my.op.default(x)\n        return (c,)\n";
  };
  std::ofstream(dir / "spec.py") << dump("4");
  std::ofstream(dir / "impl.py") << dump("2");
  std::ofstream(dir / "check.rel") << "spec spec.py\nimpl impl.py ranks 1\nS.x = D0.x\n";
  auto r = runTangle({"check", (dir / "check.rel").string()});
  EXPECT_EQ(r.exitCode, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("inconclusive: values of different types were found equal"), std::string::npos) << r.out;
  fs::remove_all(dir);
}

}  // namespace
