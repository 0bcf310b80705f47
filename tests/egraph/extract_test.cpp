#include "egraph/extract.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "egraph/pattern.h"
#include "test_util.h"

using namespace tangle;
using namespace tangle::eg;
using eg::test::node;

namespace {
bool isLeafNamed(const ENode& n, std::string_view prefix) {
  if (symbolName(n.op) != "tensor") return false;
  return symbolName(static_cast<Symbol>(attrs(n.attrs)[0].i)).starts_with(prefix);
}
}  // namespace

TEST(Extract, BestIsTheSmallestTerm) {
  EGraph g;
  Id x = g.leaf("S.x", {});
  Id d0 = g.leaf("D0.x", {}), d1 = g.leaf("D1.x", {});
  Id cat = g.add(node("concat", {d0, d1}, {Attr::integer(0)}));
  Id big = g.add(node("neg", {g.add(node("neg", {cat}))}));
  g.merge(big, x);
  g.rebuild();
  Extractor all(g);
  EXPECT_EQ(all.cost(x), 1u);
  EXPECT_EQ(all.best(x)->toSExpr(), "(tensor[\"S.x\", -1])");
  EXPECT_EQ(all.cost(cat), 3u);
  // Only implementation tensors and concat allowed: the concat form.
  Extractor clean(g, [](const EGraph&, const ENode& n) {
    return isLeafNamed(n, "D") || symbolName(n.op) == "concat";
  });
  EXPECT_EQ(clean.best(x), std::nullopt);  // neg is not allowed
  EXPECT_EQ(clean.best(cat)->toSExpr(), "(concat[0] (tensor[\"D0.x\", -1]) (tensor[\"D1.x\", -1]))");
  Extractor withNeg(g, [](const EGraph&, const ENode& n) { return !isLeafNamed(n, "S"); });
  EXPECT_EQ(withNeg.cost(x), 5u);
  // Nothing allowed at all.
  Extractor none(g, [](const EGraph&, const ENode&) { return false; });
  EXPECT_EQ(none.best(x), std::nullopt);
  EXPECT_EQ(none.cost(cat), std::nullopt);
  EXPECT_TRUE(none.alternatives(cat, 5).empty());
}

TEST(Extract, CyclicClassesTerminate) {
  EGraph g;
  Id a = g.leaf("a", {});
  Id fa = g.add(node("f", {a}));
  g.merge(a, fa);  // a = f(a)
  Id b = g.leaf("b", {});
  Id gab = g.add(node("g", {a, b}));
  g.merge(gab, b);  // b = g(a, b)
  g.rebuild();
  Extractor all(g);
  EXPECT_EQ(all.cost(a), 1u);
  EXPECT_EQ(all.best(gab)->toSExpr(), "(tensor[\"b\", -1])");
  // f(a) reads its own class: a rewritten in terms of itself, no alternative.
  auto alts = all.alternatives(a, 10);
  ASSERT_EQ(alts.size(), 1u);
  EXPECT_EQ(alts[0].toSExpr(), "(tensor[\"a\", -1])");
  // Without leaves, only infinite terms exist.
  Extractor noLeaves(g, [](const EGraph&, const ENode& n) { return !n.isLeaf(); });
  EXPECT_EQ(noLeaves.best(a), std::nullopt);
  EXPECT_EQ(noLeaves.best(b), std::nullopt);
  EXPECT_TRUE(noLeaves.alternatives(a, 10).empty());
}

TEST(Extract, AlternativesAreSortedAndLimited) {
  EGraph g;
  Id d0 = g.leaf("D0.w", {}), d1 = g.leaf("D1.w", {});
  Id s = g.leaf("S.w", {});
  Id t = g.add(node("transpose", {g.add(node("transpose", {d1}, {Attr::integer(0), Attr::integer(1)}))},
                    {Attr::integer(0), Attr::integer(1)}));
  g.merge(s, t);
  g.merge(s, d1);
  g.merge(s, d0);
  g.rebuild();
  Extractor ex(g, [](const EGraph&, const ENode& n) { return !isLeafNamed(n, "S"); });
  auto alts = ex.alternatives(s, 10);
  // D0.w, D1.w, transpose(transpose(D0.w)) (the inner transpose is its own
  // class, transpose(s)); S.w is filtered out.
  ASSERT_EQ(alts.size(), 3u);
  EXPECT_EQ(alts[0].toSExpr(), "(tensor[\"D0.w\", -1])");
  EXPECT_EQ(alts[1].toSExpr(), "(tensor[\"D1.w\", -1])");
  EXPECT_EQ(alts[2].toSExpr(), "(transpose[0, 1] (transpose[0, 1] (tensor[\"D0.w\", -1])))");
  EXPECT_EQ(ex.alternatives(s, 1).size(), 1u);
}

// The cone: the classes the terms of a class's allowed nodes visit, through
// each class's best node (a pick swaps a leaf for a leaf and reaches no more).
TEST(Extract, ConeFollowsTheAllowedRootNodesAndTheBestNodesBelow) {
  EGraph g;
  Id a = g.leaf("D0.a", {}), b = g.leaf("D0.b", {}), c = g.leaf("D0.c", {});
  Id negA = g.add(node("neg", {a}));
  Id negNegB = g.add(node("neg", {g.add(node("neg", {b}))}));
  g.merge(negNegB, c);  // its best node is the leaf D0.c: neg(b) is not in the cone
  Id root = g.add(node("add", {negA, negNegB}));
  Id other = g.add(node("exp", {g.leaf("D0.d", {})}));
  g.merge(root, other);
  g.rebuild();
  Extractor ex(g);
  auto sorted = [&](std::vector<Id> v) {
    for (Id& x : v) x = g.find(x);
    std::sort(v.begin(), v.end());
    return v;
  };
  Extractor::Filter onlyAdd = [](const EGraph&, const ENode& n) { return symbolName(n.op) == "add"; };
  EXPECT_EQ(sorted(ex.cone(root, onlyAdd)), sorted({root, negA, a, c}));
  Extractor::Filter any = [](const EGraph&, const ENode&) { return true; };
  EXPECT_EQ(sorted(ex.cone(root, any)), sorted({root, negA, a, c, g.leaf("D0.d", {})}));
}

TEST(Extract, SharedSubtermsAndTreeCost) {
  EGraph g;
  Id x = g.leaf("x", {});
  for (int i = 0; i < 40; ++i) x = g.add(node("add", {x, x}));
  Extractor ex(g);
  auto t = ex.best(x);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->size(), 41u);             // one entry per class
  EXPECT_EQ(ex.cost(x), (size_t{1} << 41) - 1);  // tree size
}

TEST(Extract, TermsRoundTrip) {
  EGraph g;
  Id a = g.leaf("D0.a", {}), b = g.leaf("D1.b", {});
  Id r = g.add(node("concat", {a, g.add(node("slice", {b}, {Attr::integer(0), Attr::integer(0), Attr::integer(2),
                                                            Attr::integer(1)}))},
                    {Attr::integer(1)}));
  Extractor ex(g);
  Term t = *ex.best(r);
  EGraph h;
  Id r2 = addTerm(h, t);
  EXPECT_EQ(h.numNodes(), 4u);
  Extractor ex2(h);
  EXPECT_EQ(*ex2.best(r2), t);
  // s-expressions parse back as ground patterns matching the same class.
  auto ms = Pattern::parse(t.toSExpr()).search(g);
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_EQ(ms[0].eclass, r);
  // Equality is structural, independent of sharing.
  Term shared;
  shared.nodes = {{intern("x"), kNoAttrs, {}}, {intern("f"), kNoAttrs, {0, 0}}};
  Term unshared;
  unshared.nodes = {{intern("x"), kNoAttrs, {}}, {intern("x"), kNoAttrs, {}}, {intern("f"), kNoAttrs, {0, 1}}};
  EXPECT_EQ(shared, unshared);
  unshared.nodes[1].op = intern("y");
  EXPECT_FALSE(shared == unshared);
  EXPECT_THROW(addTerm(h, Term{}), std::invalid_argument);
}
