// Lemmas for two frameworks' layouts (src/lemmas/equiv.cpp): HF's [1, T, H] against vLLM's flat [T, H].
#include "lemma_fixture.h"

namespace tangle::lemmas::testing {
namespace {

using Equiv = LemmaTest;

TEST_F(Equiv, LookupOfReshapedIdsIsTheReshapedLookup) {
  leaf("w", {16, 4});
  leaf("ids", {8}, DType::I64);
  eg::Id hf = term("(index_rows ?w (reshape[[1, 8]] ?ids))");
  run({"index-rows-reshape"});
  EXPECT_TRUE(equiv(hf, "(reshape[[1, 8, 4]] (index_rows ?w ?ids))"));
}

TEST_F(Equiv, RowMeanThroughALeadingUnitDim) {
  leaf("x", {8, 4});
  eg::Id hf = term("(mean_dim[[-1], true] (reshape[[1, 8, 4]] ?x))");
  run({"mean-last-reshape"});
  EXPECT_TRUE(equiv(hf, "(reshape[[1, 8, 1]] (mean_dim[[1], true] ?x))"));
}

TEST_F(Equiv, MeanIsNotMovedWhenTheReshapeRegroupsTheLastDim) {
  leaf("x", {8, 4});
  term("(mean_dim[[-1], true] (reshape[[1, 4, 8]] ?x))");
  auto r = run({"mean-last-reshape"});
  EXPECT_EQ(r.firings["mean-last-reshape"], 0u);
}

TEST_F(Equiv, BroadcastProductThroughLeadingUnitDims) {
  leaf("x", {8, 4});
  leaf("w", {4});
  eg::Id hf = term("(mul ?w (reshape[[1, 8, 4]] ?x))");
  run({"mul-unit-lead", "mul-commute"});
  EXPECT_TRUE(equiv(hf, "(reshape[[1, 8, 4]] (mul ?x ?w))"));
}

TEST_F(Equiv, NoUnitLeadRewriteWhenTheOtherSideBroadcastsTheLeadingDim) {
  leaf("x", {8, 4});
  leaf("y", {3, 8, 4});
  term("(add (reshape[[1, 8, 4]] ?x) ?y)");
  auto r = run({"add-unit-lead"});
  EXPECT_EQ(r.firings["add-unit-lead"], 0u);
}

}  // namespace
}  // namespace tangle::lemmas::testing
