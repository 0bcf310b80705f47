// A dump whose type annotation contradicts what its operator computes is bad
// input (exit 2, file:line and node), not something to verify.
#include <gtest/gtest.h>

#include "cli_support.h"

namespace {
using namespace tangle::e2e;

TEST(Annotations, ShapeThatTheOperatorCannotProduceIsBadInput) {
  auto r = runTangle({"check", badPath("annotation_mismatch.rel")});
  EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
  EXPECT_EQ(splitLines(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find("annotation_mismatch.py:11:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'mm' is annotated f32[4, 7]"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("gives f32[4, 6]"), std::string::npos) << r.err;
}

}  // namespace
