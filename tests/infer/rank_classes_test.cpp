// RankClasses (infer/rank_classes.h) lets cleanRelations extract each rank's
// terms over that rank's classes only, and pick a rank's own leaf through the
// clean extractor's costs: both must give exactly what a whole-graph
// extraction with the rank's filter gives.
#include "infer/rank_classes.h"

#include <gtest/gtest.h>

#include "egraph/extract.h"
#include "ops/ops.h"

using namespace tangle;

namespace {

eg::Id concat(eg::EGraph& g, eg::Id a, eg::Id b) {
  return g.add(eg::ENode{ops::syms().concat, eg::internAttrs({eg::Attr::integer(0)}), {a, b}});
}

bool rankLeaf(const eg::ENode& n, int32_t r) {
  auto o = ops::tensorOwner(n);
  return o && !o->isSpec() && o->rank == r;
}

eg::Extractor::Filter onlyRank(int32_t r) {
  return [r](const eg::EGraph&, const eg::ENode& n) {
    return ops::isCleanNode(n) && (n.op != ops::syms().tensor || rankLeaf(n, r));
  };
}

struct Graph {
  eg::EGraph g;
  eg::Id x, y0, a, b, root;
  Graph() {
    x = g.leaf("D0.x", Owner::impl(0), {});
    g.merge(x, g.leaf("D1.x", Owner::impl(1), {}));  // replicated on ranks 0 and 1
    y0 = g.leaf("D0.y", Owner::impl(0), {});
    a = concat(g, x, y0);
    b = concat(g, x, g.leaf("D1.y", Owner::impl(1), {}));
    g.merge(a, b);
    root = concat(g, a, g.leaf("D2.z", Owner::impl(2), {}));
    g.rebuild();
  }
};

}  // namespace

TEST(RankClasses, FindsEachRanksClassesAndSharedLeaves) {
  Graph t;
  RankClasses rc(t.g, 3);
  EXPECT_TRUE(rc.hasPure(t.a, 0));
  EXPECT_TRUE(rc.hasPure(t.a, 1));
  EXPECT_FALSE(rc.hasPure(t.a, 2));
  EXPECT_FALSE(rc.hasPure(t.root, 0));  // D2.z is another rank's
  EXPECT_FALSE(rc.hasPure(t.y0, 1));
  ASSERT_EQ(rc.shared(0).size(), 1u);
  EXPECT_EQ(rc.shared(0)[0], t.g.find(t.x));
  EXPECT_EQ(rc.shared(1), rc.shared(0));
  EXPECT_TRUE(rc.shared(2).empty());
  EXPECT_TRUE(rc.present(2));
}

TEST(RankClasses, ExtractingOverARanksClassesEqualsTheWholeGraph) {
  Graph t;
  RankClasses rc(t.g, 3);
  for (int32_t r = 0; r < 3; ++r) {
    eg::Extractor whole(t.g, onlyRank(r));
    eg::Extractor mine(t.g, onlyRank(r), rc.pure(r));
    for (eg::Id c : t.g.classIds()) {
      EXPECT_EQ(whole.best(c), mine.best(c)) << "rank " << r << " class " << c;
      EXPECT_EQ(whole.alternatives(c, 4), mine.alternatives(c, 4)) << "rank " << r << " class " << c;
    }
  }
}

TEST(RankClasses, PicksGiveTheRanksOwnCopyAtTheCleanCosts) {
  Graph t;
  eg::Extractor clean(t.g, [](const eg::EGraph&, const eg::ENode& n) { return ops::isCleanNode(n); });
  // Rank 1's preference as a filter: its own copy of a leaf wherever the class has one.
  eg::Extractor preferOne(t.g, [&](const eg::EGraph& g, const eg::ENode& n) {
    if (!ops::isCleanNode(n)) return false;
    if (n.op != ops::syms().tensor || rankLeaf(n, 1)) return true;
    for (const eg::ENode& m : g.eclass(*g.lookup(n)).nodes)
      if (rankLeaf(m, 1)) return false;
    return true;
  });
  const auto& nodes = t.g.eclass(t.g.find(t.x)).nodes;
  int own = -1;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (rankLeaf(nodes[i], 1)) own = static_cast<int>(i);
  ASSERT_GE(own, 0);
  std::unordered_map<eg::Id, int> picks{{t.g.find(t.x), own}};
  eg::Extractor::Filter cleanRoot = [](const eg::EGraph&, const eg::ENode& n) { return ops::isCleanNode(n); };
  auto viaPicks = clean.alternatives(t.root, 4, cleanRoot, picks);
  auto direct = preferOne.alternatives(t.root, 4);
  ASSERT_FALSE(direct.empty());
  EXPECT_EQ(viaPicks, direct);
  EXPECT_NE(viaPicks, clean.alternatives(t.root, 4));  // the clean extractor alone names D0.x
}
