// The e-graph's symbolic-size context is the one it was given: merges compare
// symbolic shapes under it, and two checks (contexts) used one after another
// or at once never see each other's facts.
#include <gtest/gtest.h>

#include <thread>

#include "egraph/egraph.h"
#include "sym/context.h"
#include "test_util.h"

using namespace tangle;
using namespace tangle::eg;
using eg::test::tensorData;

namespace {

Dim dimOf(const std::string& name) { return *sym::toDim(sym::var(name)); }

// Merges a tensor of shape [n] with one of shape [m] in an e-graph over
// `symbols` (null: the e-graph's own empty context); true when the merge
// records no shape conflict.
bool mergesCleanly(const sym::Context* symbols, Dim n, Dim m) {
  EGraph g(nullptr, symbols);
  Id a = g.leaf("a", tensorData({n}));
  Id b = g.leaf("b", tensorData({m}));
  g.merge(a, b);
  g.rebuild();
  return g.conflicts().empty();
}

TEST(EGraphSymbols, MergesCompareShapesUnderTheGivenContext) {
  Dim n = dimOf("X.n"), m = dimOf("X.m");
  sym::Context facts;
  ASSERT_TRUE(facts.assumeEqual(sym::fromDim(n), sym::fromDim(m), nullptr));
  EGraph g(nullptr, &facts);
  EXPECT_EQ(&g.symbols(), &facts);
  EXPECT_TRUE(mergesCleanly(&facts, n, m));
  EGraph plain;
  EXPECT_TRUE(plain.symbols().empty());
  EXPECT_FALSE(mergesCleanly(nullptr, n, m));  // nothing assumed: [n] and [m] differ
}

TEST(EGraphSymbols, ContextsUsedOneAfterAnotherDoNotShareFacts) {
  Dim n = dimOf("Y.n"), m = dimOf("Y.m");
  {
    sym::Context first;
    ASSERT_TRUE(first.assumeEqual(sym::fromDim(n), sym::fromDim(m), nullptr));
    EXPECT_TRUE(mergesCleanly(&first, n, m));
  }
  sym::Context second;  // a later check on the same thread
  EXPECT_FALSE(mergesCleanly(&second, n, m));
  EXPECT_FALSE(mergesCleanly(nullptr, n, m));
  EXPECT_FALSE(sym::dimEqual(second, n, m));
}

TEST(EGraphSymbols, ContextsInTwoThreadsDoNotShareFacts) {
  Dim n = dimOf("Z.n"), m = dimOf("Z.m");
  bool equalWithFact = false, anyEqualWithout = false;
  std::thread withFact([&] {
    sym::Context c;
    if (!c.assumeEqual(sym::fromDim(n), sym::fromDim(m), nullptr)) return;
    equalWithFact = true;
    for (int i = 0; i < 20; ++i) equalWithFact = equalWithFact && mergesCleanly(&c, n, m);
  });
  std::thread without([&] {
    sym::Context c;
    for (int i = 0; i < 20; ++i) anyEqualWithout = anyEqualWithout || mergesCleanly(&c, n, m);
  });
  withFact.join();
  without.join();
  EXPECT_TRUE(equalWithFact);
  EXPECT_FALSE(anyEqualWithout);
}

}  // namespace

// A merge of two values whose shapes differ only in symbolic dims records
// those dims as equal (for the driver to learn); it never assumes them, and
// two different concrete sizes record nothing.
TEST(EGraphSymbols, MergedValuesRecordTheirSymbolicSizesWithoutAssumingThem) {
  sym::Context ctx;
  Dim s = dimOf("S.u0"), d = dimOf("D0.u0"), d1 = dimOf("D1.u0");
  EGraph g(nullptr, &ctx);
  Id a = g.leaf("a", tensorData({s, 4}));
  Id b = g.leaf("b", tensorData({d, 4}));
  Id c = g.leaf("c", tensorData({d1, 4}));  // never merged with a or b
  Id e = g.leaf("e", tensorData({5, 4}));
  Id f = g.leaf("f", tensorData({6, 4}));
  g.merge(a, b);
  g.merge(e, f);
  g.rebuild();
  ASSERT_EQ(g.mergedSizes().size(), 1u);
  auto [x, y] = g.mergedSizes()[0];
  EXPECT_TRUE((x == s && y == d) || (x == d && y == s));
  EXPECT_FALSE(ctx.proveEqual(sym::fromDim(s), sym::fromDim(d)));  // recorded, not assumed
  EXPECT_FALSE(ctx.proveEqual(sym::fromDim(s), sym::fromDim(d1)));
  EXPECT_NE(g.find(a), g.find(c));
}
