// Gradient accumulation on one rank: micro-batch means scaled by 1/steps
// refine the full-batch loss; forgetting the scale does not.
#include <gtest/gtest.h>

#include "cli_support.h"

namespace {
using namespace tangle::e2e;

TEST(GradAccumulation, ScaledMicroBatchMeansRefineTheBatchLoss) {
  auto r = runTangle({"check", examplePath("gradacc/two_microbatches/check.rel")});
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("S.total = D0.add_3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("expectation holds: S.total = D0.add_3"), std::string::npos) << r.out;
}

TEST(GradAccumulation, ForgottenScaleIsAViolationAtTheLossSum) {
  auto r = runTangle({"check", examplePath("gradacc/missing_scale/check.rel")});
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("failing operator: S.sum_1 (aten.sum.default)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("expectation not established: S.total = D0.add_3"), std::string::npos) << r.out;
}

}  // namespace
