// Unbacked sizes (nonzero row counts: u0 in a dump) are each graph's own.
// Two of them become equal only when a search proves the values they size
// equal (examples/unbacked: the ranks and the spec select the rows of one
// replicated input), never by name.
#include <gtest/gtest.h>

#include "cli_support.h"

namespace {
using namespace tangle::e2e;

TEST(Unbacked, RowsSelectedFromEqualInputsHaveEqualCountsByProof) {
  auto r = runTangle({"check", examplePath("unbacked/rows.rel")});
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_EQ(outputRelation(r.out), (std::vector<std::string>{"S.mm = concat(D0.mm, D1.mm, dim=1)"})) << r.out;
  EXPECT_NE(r.out.find("  S.u0 = D0.u0   (proved: the search of S.nonzero merged two values of these sizes)"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("warning: type conflict"), std::string::npos) << r.out;
}

TEST(Unbacked, CountsOfDifferentSelectionsAreNeverMerged) {
  // The ranks select m > 1, the spec m > 0: the ranks' counts are proved
  // equal to each other (same replicated input), never to the spec's.
  auto r = runTangle({"check", examplePath("unbacked/shifted.rel")});
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_EQ(firstLine(r.out), "verdict: violation");
  EXPECT_NE(r.out.find("D1.u0 = D0.u0   (proved:"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("S.u0 ="), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("= S.u0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("failing operator: S.gt (aten.gt.Scalar)"), std::string::npos) << r.out;
}

}  // namespace
