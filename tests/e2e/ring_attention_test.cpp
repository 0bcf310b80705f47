// Ring attention (torch's context parallelism, examples/ring): each rank
// attends to one key/value block at a time and merges the blocks' results by
// their log-sum-exps (src/lemmas/sdpa_sequence.cpp). The certificates are
// replayed on random inputs too.
#include <gtest/gtest.h>

#include "cli_support.h"

namespace {
using namespace tangle::e2e;

TEST(RingAttention, FourRanksWithoutMaskRefinesAndReplays) {
  auto r = runTangle({"check", examplePath("ring/plain/check.rel"), "--replay"});
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("expectation holds: S.getitem = concat(D0.sub_12, D1.sub_12, D2.sub_12, D3.sub_12, dim=2)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("expectation holds: S.getitem_1 = concat(D0.squeeze, D1.squeeze, D2.squeeze, D3.squeeze"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("replay: 2 outputs match"), std::string::npos) << r.out;
}

TEST(RingAttention, CausalRingRefinesAndReplays) {
  // rank 0 keeps its masked block's result; rank r merges r - 1 blocks into its own
  auto r = runTangle({"check", examplePath("ring/causal/check.rel"), "--replay"});
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("expectation holds: S.getitem = concat(D0.getitem, D1.sub_2, D2.sub_7, D3.sub_12, dim=2)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("replay: 2 outputs match"), std::string::npos) << r.out;
}

TEST(RingAttention, CausalRingWithoutItsMaskIsAViolationAtTheAttention) {
  auto r = runTangle({"check", examplePath("ring/unmasked/check.rel"), "--replay"});
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("failing operator: S._scaled_dot_product_flash_attention_for_cpu"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("replay: counterexample"), std::string::npos) << r.out;
}

TEST(RingAttention, LoadBalancedCausalRingRefinesAndReplays) {
  // rank r holds chunks r and 3 - r; rank 0's last chunk merges blocks as {0, 3}, then the pair {1, 2}
  auto r = runTangle({"check", examplePath("ring/balanced/check.rel"), "--replay"});
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("expectation holds: S.getitem = concat(slice(D0.cat_2, dim=2, start=0, end=2), "
                       "slice(D1.sub_2, dim=2, start=0, end=2)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("expectation holds: S.getitem_1 = "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("replay: 2 outputs match"), std::string::npos) << r.out;
}

TEST(RingAttention, BalancedShardsThroughTheUnbalancedRingAreAViolationAtTheAttention) {
  auto r = runTangle({"check", examplePath("ring/balanced_unbalanced_ring/check.rel"), "--replay"});
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("failing operator: S._scaled_dot_product_flash_attention_for_cpu"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("replay: counterexample"), std::string::npos) << r.out;
}

// The backward (torch's _templated_ring_attention_backward, src/lemmas/sdpa_backward_ring.cpp): dq of a rank's
// rows adds one term per key block; each key block's dk/dv travel round the ring collecting every rank's term.
TEST(RingAttention, BackwardWithoutMaskRefinesWithEveryGradientAndReplays) {
  auto r = runTangle({"check", examplePath("ring/backward/check.rel"), "--replay"});
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("expectation holds: S.getitem_2 = concat(D0.add_5, D1.add_5, dim=2)"), std::string::npos)
      << r.out;  // dq
  EXPECT_NE(r.out.find("expectation holds: S.getitem_3 = concat(D0.view_26, D1.view_26, dim=2)"), std::string::npos)
      << r.out;  // dk, as it lands back on its owner
  EXPECT_NE(r.out.find("expectation holds: S.getitem_4 = concat(D0.view_27, D1.view_27, dim=2)"), std::string::npos)
      << r.out;  // dv
  EXPECT_NE(r.out.find("replay: 5 outputs match"), std::string::npos) << r.out;
}

TEST(RingAttention, CausalBackwardOverFourRanksRefinesAndReplays) {
  auto r = runTangle({"check", examplePath("ring/backward_causal/check.rel"), "--replay"});
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("expectation holds: S.getitem_4 = concat(D0.view_71, D1.view_71, D2.view_71, D3.view_71"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("replay: 5 outputs match"), std::string::npos) << r.out;
}

TEST(RingAttention, GradientsKeptAtHomeAreAViolationAtTheBackward) {
  auto r = runTangle({"check", examplePath("ring/backward_kept_grad/check.rel"), "--replay"});
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("failing operator: S._scaled_dot_product_flash_attention_for_cpu_backward"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("replay: counterexample"), std::string::npos) << r.out;
}

TEST(RingAttention, LoadBalancedCausalBackwardRefinesWithEveryGradientAndReplays) {
  // rank r holds chunks r and 3 - r; rank 0's last chunk adds its key chunks' dq terms as {0, 3}, then {1, 2}
  auto r = runTangle({"check", examplePath("ring/backward_balanced/check.rel"), "--replay"});
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("expectation holds: S.getitem_2 = concat(slice(D0.cat_6, dim=2, start=0, end=2), "
                       "slice(D1.add_5, dim=2, start=0, end=2)"),
            std::string::npos)
      << r.out;  // dq
  EXPECT_NE(r.out.find("expectation holds: S.getitem_3 = concat(slice(D0.view_26, dim=2, start=0, end=2)"),
            std::string::npos)
      << r.out;  // dk, as it lands back on its owner
  EXPECT_NE(r.out.find("replay: 5 outputs match"), std::string::npos) << r.out;
}

// Rotations the wrong way (4 ranks: with 2, both neighbours are one rank).
TEST(RingAttention, CausalRingTurnedTheWrongWayIsAViolationAtTheAttention) {
  auto r = runTangle({"check", examplePath("ring/wrong_way/check.rel"), "--replay"});
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("failing operator: S._scaled_dot_product_flash_attention_for_cpu "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("replay: counterexample"), std::string::npos) << r.out;
}

TEST(RingAttention, GradientsSentTheWrongWayAreAViolationAtTheBackward) {
  auto r = runTangle({"check", examplePath("ring/backward_wrong_way/check.rel"), "--replay"});
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("failing operator: S._scaled_dot_product_flash_attention_for_cpu_backward"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("replay: counterexample for the failing operator S.getitem_3"), std::string::npos)
      << r.out;  // dk
}

}  // namespace
