// Freeing intermediate tensors after their last reader (src/replay/liveness.h,
// LGraphEvaluator): the static cost matches what the evaluator measures, and a
// freed tensor asked for later is recomputed to the same value.
#include "../fx_text.h"
#include <gtest/gtest.h>

#include "import/fx_importer.h"
#include "replay/lgraph_eval.h"
#include "replay/liveness.h"

namespace tangle::replay {
namespace {

// x -> a -> b -> c -> d, each [1000]: four intermediates but at most two of
// them (an operand and its result) alive at once, next to the kept input.
const char* kChain =
    "a: \"f64[1000]\" = torch.ops.aten.neg.default(x)\n"
    "b: \"f64[1000]\" = torch.ops.aten.mul.Tensor(a, x)\n"
    "c: \"f64[1000]\" = torch.ops.aten.neg.default(b)\n"
    "d: \"f64[1000]\" = torch.ops.aten.add.Tensor(c, c)\n"
    "return (d,)";

struct Chain {
  sym::Context symbols;
  Graph g = importFxText(testing::fxModuleText("x: \"f64[1000]\"", kChain), "spec.py");
  LGraph lg = lowerSpec(g, {}, symbols);
  int id(const std::string& name) { return lg.resolve(lg.find("S." + name).value()); }
};

TEST(Liveness, PeakIsAnOperandItsResultAndTheInput) {
  Chain c;
  EvalCost cost = evalCost(c.lg);
  EXPECT_EQ(cost.computed, 5000);
  EXPECT_EQ(cost.peakLive, 3000);
  std::vector<int> readers = readerCounts(c.lg);
  EXPECT_EQ(readers[static_cast<size_t>(c.id("x"))], 2);
  EXPECT_EQ(readers[static_cast<size_t>(c.id("c"))], 1);  // read twice by one node
}

TEST(Liveness, EvaluatorFreesAndRecomputesTheSameValue) {
  Chain c;
  LGraphEvaluator ev(c.lg);
  std::vector<double> x(1000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.5 * static_cast<double>(i);
  ev.set(c.id("x"), interp::Value::of(interp::Tensor::of({1000}, x)));
  const interp::Value* d = ev.value(c.id("d"));
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->tensor()->data[3], 4.5);  // 2 x^2 at x = 1.5
  EXPECT_EQ(ev.peakLiveElements(), evalCost(c.lg).peakLive);
  EXPECT_EQ(ev.computedElements(), 4000);
  // b was freed once c was computed; asking again recomputes it (a is recomputed on the way).
  const interp::Value* b = ev.known(c.id("b"));
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->tensor()->data[7], -12.25);  // -x^2 at x = 3.5
  EXPECT_EQ(ev.computedElements(), 6000);
  EXPECT_EQ(ev.value(c.id("d")), d);  // asked for: kept, not recomputed
  EXPECT_EQ(ev.computedElements(), 6000);
}

TEST(Liveness, NeverComputedIsNotKnown) {
  Chain c;
  LGraphEvaluator ev(c.lg);
  ev.set(c.id("x"), interp::Value::of(interp::Tensor::of({1000}, std::vector<double>(1000, 1.0))));
  EXPECT_EQ(ev.known(c.id("a")), nullptr);
  ASSERT_NE(ev.value(c.id("b")), nullptr);
  EXPECT_NE(ev.known(c.id("a")), nullptr);
}

}  // namespace
}  // namespace tangle::replay
