// slice_backward (a slice's gradient: zeros around it) over row-sharded
// gradients, as in the backward of a context-parallel or expert-parallel
// layer: the zeros are cut by rows like the gradient (concat-interchange),
// and a sum of pieces in disjoint rows is their concat (add-zeros-*,
// add-disjoint-pieces); select_backward (a grouped weight's expert gradient)
// places its piece the same way.
#include <gtest/gtest.h>

#include "cli_support.h"

namespace {
using namespace tangle::e2e;

TEST(SliceBackward, RowShardedGradientRefines) {
  auto r = runTangle({"check", examplePath("slice_backward/row_sharded/check.rel")});
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("S.slice_backward = concat(D0.slice_backward, D1.slice_backward, dim=0)"), std::string::npos)
      << r.out;
}

TEST(SliceBackward, GradientInTheWrongColumnIsAViolation) {
  auto r = runTangle({"check", examplePath("slice_backward/wrong_column/check.rel")});
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("failing operator: S.slice_backward (aten.slice_backward.default)"), std::string::npos)
      << r.out;
}

TEST(SliceBackward, SumOfDisjointPiecesIsTheirConcat) {
  auto r = runTangle({"check", examplePath("slice_backward/disjoint_pieces/check.rel")});
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("S.add_4 = D0.cat"), std::string::npos) << r.out;
}

TEST(SliceBackward, ExpertGradientsPlacedBySelectBackwardAreTheRanksConcat) {
  // select_backward lowers like slice_backward; the ranks' sums of placements are regrouped (concat-regroup)
  auto r = runTangle({"check", examplePath("slice_backward/expert_grads/check.rel")});
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("expectation holds: S.add_2 = concat(D0.add, D1.add, dim=0)"), std::string::npos) << r.out;
}

TEST(SliceBackward, ExpertGradientsInTheWrongRowsAreAViolation) {
  auto r = runTangle({"check", examplePath("slice_backward/expert_grads/swapped.rel")});
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("failing operator: S.add_2 (aten.add.Tensor)"), std::string::npos) << r.out;
}

}  // namespace
