// Graphs captured with dynamic shapes: sizes such as s77 and (s77//2) are
// related by facts (input relations, collectives, `assume`) and compared by
// proof, never by guess.
#include <gtest/gtest.h>

#include "cli_support.h"

namespace {
using namespace tangle::e2e;

// A relation file next to the examples, with extra lines appended.
std::string relationWith(const std::string& base, const std::string& extra) {
  fs::path p = tempPath("symbolic.rel");
  std::string text = readFile(examplePath("symbolic/" + base));
  std::string dir = examplePath("symbolic/");
  for (const char* key : {"spec ", "impl "}) {
    size_t at = text.find(std::string("\n") + key);
    if (at != std::string::npos) text.insert(at + 1 + std::string(key).size(), dir);
  }
  std::ofstream(p) << text << "\n" << extra << "\n";
  return p.string();
}

TEST(Symbolic, SequenceParallelOverASymbolicTokenCountRefines) {
  auto r = runTangle({"check", examplePath("symbolic/sp.rel")});
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  auto rel = outputRelation(r.out);
  EXPECT_EQ(rel, (std::vector<std::string>{"S.mm_1 = D0.wait_tensor", "S.mm_1 = D1.wait_tensor"})) << r.out;
  // The input relation makes the spec's tokens the sum of the blocks, the
  // all_gather makes the blocks equal.
  EXPECT_NE(r.out.find("  S.s77 = 2*D0.s77   (input relation at "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  D1.s77 = D0.s77   (every rank's input of all_gather_into_tensor at "), std::string::npos)
      << r.out;
}

TEST(Symbolic, HalvingAnOddTokenCountIsAViolation) {
  // n // 2 + n // 2 tokens are gathered: one short when n is odd.
  auto r = runTangle({"check", examplePath("symbolic/split.rel")});
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_EQ(firstLine(r.out), "verdict: violation");
  EXPECT_NE(r.out.find("failing operator: S.mm (aten.mm.default)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("say so with `assume`"), std::string::npos) << r.out;
}

TEST(Symbolic, AnAssumedEvenTokenCountRefines) {
  auto r = runTangle({"check", examplePath("symbolic/split_even.rel")});
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_EQ(outputRelation(r.out), (std::vector<std::string>{"S.mm_1 = D0.wait_tensor", "S.mm_1 = D1.wait_tensor"}));
  // The fact Z3 used, and where it came from.
  EXPECT_NE(r.out.find("D0.s77 - 2*(D0.s77//2) = 0   (assume at "), std::string::npos) << r.out;
}

TEST(Symbolic, AnOffByOneWindowNeverRefines) {
  auto r = runTangle({"check", examplePath("symbolic/shifted.rel")});
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_EQ(firstLine(r.out), "verdict: violation");
}

TEST(Symbolic, UnprovableSliceBoundsAskForAnAssumption) {
  // Without `assume S.s77 >= 4`, the window start (s77//2) - 1 may be negative.
  std::string text = readFile(relationWith("shifted.rel", ""));
  text.erase(text.find("assume S.s77 >= 4"));
  fs::path p = tempPath("shifted_no_bound.rel");
  std::ofstream(p) << text;
  auto r = runTangle({"check", p.string()});
  EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("shifted.r1.py:11: error: node 'slice_1': cannot prove the slice bounds"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("`assume`"), std::string::npos) << r.err;
}

TEST(Symbolic, ContradictoryAssumptionsAreBadInput) {
  auto r = runTangle({"check", relationWith("split.rel", "assume D0.s77 < 0")});
  EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("error: assume: D0.s77 < 0 contradicts what is known"), std::string::npos) << r.err;

  r = runTangle({"check", relationWith("split.rel", "assume D0.s77 == 2*D1.s77 + 1")});
  EXPECT_EQ(r.exitCode, 2) << r.out << r.err;  // the input relations make them equal
  EXPECT_NE(r.err.find("contradicts what is known"), std::string::npos) << r.err;
}

TEST(Symbolic, AssumptionsNameExistingSymbols) {
  auto r = runTangle({"check", relationWith("split.rel", "assume D0.s9 == 2")});
  EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("assume names the symbol 'D0.s9', which no graph has"), std::string::npos) << r.err;

  r = runTangle({"check", relationWith("split.rel", "assume S.s77 =")});
  EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("assume needs a comparison"), std::string::npos) << r.err;
}

TEST(Symbolic, ARelationOnASymbolicIntegerIsBadInput) {
  auto r = runTangle({"check", relationWith("split.rel", "S.arg2_1 = D0.arg0_1")});
  EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("'D0.arg0_1' is not a tensor but the symbolic integer D0.s77"), std::string::npos) << r.err;
}

TEST(Symbolic, ASymAnnotationThatDisagreesWithItsArithmeticIsBadInput) {
  fs::path dir = tempPath("symdir");
  fs::create_directories(dir);
  std::string spec = readFile(examplePath("symbolic/split.r0.py"));
  spec.replace(spec.find("arg0_1 // 2"), 11, "arg0_1 // 3");
  std::ofstream(dir / "bad.py") << spec;
  auto r = runTangle({"check", (dir / "bad.py").string(), "--impl", (dir / "bad.py").string(), "--relation",
                      examplePath("symbolic/split.rel")});
  EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("bad.py:6: error"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the annotation says Sym((s77//2)) but the expression computes (s77//3)"), std::string::npos)
      << r.err;
  fs::remove_all(dir);
}

// --replay runs dynamic-shape graphs at small sizes that satisfy the facts.
TEST(Symbolic, ReplayRunsAtSizesThatSatisfyTheFacts) {
  auto r = runTangle({"check", examplePath("symbolic/split_even.rel"), "--replay"});
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("replay: 1 outputs match"), std::string::npos) << r.out;
  // Only even token counts: the assumption is part of what is sampled.
  auto lines = splitLines(r.out);
  auto tried = findLine(lines, "sizes tried:");
  ASSERT_TRUE(tried) << r.out;
  EXPECT_NE(lines[*tried].find("D0.s77 = "), std::string::npos);
  for (char odd : {'1', '3', '5', '7'})
    EXPECT_EQ(lines[*tried].find(std::string("D0.s77 = ") + odd), std::string::npos) << lines[*tried];
}

TEST(Symbolic, ReplayWitnessesAViolationAtConcreteSizes) {
  auto r = runTangle({"check", examplePath("symbolic/shifted.rel"), "--replay"});
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("replay: counterexample for the failing operator S.mm"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  at sizes D0.s77 = "), std::string::npos) << r.out;
}

}  // namespace
