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
