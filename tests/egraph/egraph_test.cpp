#include "egraph/egraph.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <random>

#include "test_util.h"

using namespace tangle;
using namespace tangle::eg;
using eg::test::node;
using eg::test::tensorData;

TEST(EGraph, HashconsDeduplicates) {
  EGraph g;
  Id a = g.leaf("a", {});
  Id b = g.leaf("b", {});
  Id f1 = g.add(node("f", {a, b}, {Attr::integer(1)}));
  Id f2 = g.add(node("f", {a, b}, {Attr::integer(1)}));
  Id f3 = g.add(node("f", {a, b}, {Attr::integer(2)}));
  Id f4 = g.add(node("f", {b, a}, {Attr::integer(1)}));
  EXPECT_EQ(f1, f2);
  EXPECT_NE(f1, f3);
  EXPECT_NE(f1, f4);
  EXPECT_EQ(g.leaf("a", {}), a);
  EXPECT_EQ(g.numNodes(), 5u);
  EXPECT_EQ(g.numClasses(), 5u);
  EXPECT_EQ(g.lookup(node("f", {a, b}, {Attr::integer(1)})), f1);
  EXPECT_FALSE(g.lookup(node("f", {a, a}, {Attr::integer(1)})).has_value());
  EXPECT_EQ(g.numNodes(), 5u);  // lookup never adds
  g.checkInvariants();
}

TEST(EGraph, CongruenceAfterRebuild) {
  EGraph g;
  Id a = g.leaf("a", {}), b = g.leaf("b", {});
  Id fa = g.add(node("f", {a}));
  Id fb = g.add(node("f", {b}));
  Id gfa = g.add(node("g", {fa, a}));
  Id gfb = g.add(node("g", {fb, b}));
  EXPECT_NE(g.find(fa), g.find(fb));
  EXPECT_TRUE(g.merge(a, b));
  EXPECT_FALSE(g.merge(b, a));
  EXPECT_FALSE(g.clean());
  g.rebuild();
  EXPECT_TRUE(g.clean());
  EXPECT_EQ(g.find(fa), g.find(fb));
  EXPECT_EQ(g.find(gfa), g.find(gfb));
  EXPECT_EQ(g.numClasses(), 3u);
  EXPECT_EQ(g.numNodes(), 4u);  // a, b, f(ab), g(f, ab): duplicates removed
  EXPECT_EQ(g.eclass(fa).nodes.size(), 1u);
  EXPECT_EQ(g.eclass(a).nodes.size(), 2u);
  g.checkInvariants();
}

TEST(EGraph, ChainsOfMerges) {
  // x_i = f^k(leaf_i) for 20 leaves; merging leaves in a chain collapses every level.
  EGraph g;
  constexpr int kLeaves = 20, kDepth = 6;
  std::vector<std::vector<Id>> level(kDepth + 1);
  for (int i = 0; i < kLeaves; ++i) level[0].push_back(g.leaf("l" + std::to_string(i), {}));
  for (int d = 1; d <= kDepth; ++d)
    for (Id c : level[d - 1]) level[d].push_back(g.add(node("f", {c})));
  for (int i = 1; i < kLeaves; ++i) g.merge(level[0][i - 1], level[0][i]);
  g.rebuild();
  for (int d = 0; d <= kDepth; ++d)
    for (Id c : level[d]) EXPECT_EQ(g.find(c), g.find(level[d][0]));
  EXPECT_EQ(g.numClasses(), size_t(kDepth + 1));
  EXPECT_EQ(g.numNodes(), size_t(kLeaves + kDepth));
  g.checkInvariants();
}

TEST(EGraph, CongruenceCascadesIntoCycles) {
  // a = f(a) style loops: merge x with f(x), then f(f(x)) is in the same class.
  EGraph g;
  Id x = g.leaf("x", {});
  Id fx = g.add(node("f", {x}));
  Id ffx = g.add(node("f", {fx}));
  g.merge(x, fx);
  g.rebuild();
  EXPECT_EQ(g.find(ffx), g.find(x));
  EXPECT_EQ(g.numClasses(), 1u);
  EXPECT_EQ(g.numNodes(), 2u);  // x and f(self)
  g.checkInvariants();
}

TEST(EGraph, RandomMergesKeepInvariants) {
  std::mt19937 rng(7);
  EGraph g;
  std::vector<Id> ids;
  for (int i = 0; i < 30; ++i) ids.push_back(g.leaf("v" + std::to_string(i), {}));
  const char* ops[] = {"f", "g", "h"};
  for (int i = 0; i < 400; ++i) {
    Id a = ids[rng() % ids.size()], b = ids[rng() % ids.size()];
    ids.push_back(rng() % 3 ? g.add(node(ops[rng() % 3], {a, b})) : g.add(node(ops[rng() % 3], {a})));
  }
  for (int round = 0; round < 5; ++round) {
    for (int k = 0; k < 15; ++k) g.merge(ids[rng() % ids.size()], ids[rng() % ids.size()]);
    g.rebuild();
    g.checkInvariants();
    // Congruence, checked naively: equal ops/children => equal classes.
    for (Id c : g.classIds())
      for (const ENode& n : g.eclass(c).nodes) EXPECT_EQ(g.lookup(n), c);
  }
}

// Oracle: naive congruence closure over the added terms (pairwise, to a fixpoint).
TEST(EGraph, MatchesNaiveCongruenceClosure) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    std::mt19937 rng(seed);
    EGraph g;
    struct T {
      int op;
      std::vector<int> kids;
    };
    std::vector<T> terms;
    std::vector<Id> ids;
    for (int i = 0; i < 8; ++i) {
      terms.push_back({-1 - i, {}});
      ids.push_back(g.leaf("v" + std::to_string(i), {}));
    }
    for (int i = 0; i < 120; ++i) {
      int op = rng() % 3, arity = 1 + rng() % 2;
      std::vector<int> kids;
      std::vector<Id> ch;
      for (int k = 0; k < arity; ++k) {
        kids.push_back(rng() % terms.size());
        ch.push_back(ids[kids.back()]);
      }
      terms.push_back({op, kids});
      ids.push_back(g.add(node("op" + std::to_string(op), ch)));
    }
    std::vector<int> rep(terms.size());
    for (size_t i = 0; i < rep.size(); ++i) rep[i] = static_cast<int>(i);
    std::function<int(int)> root = [&](int x) { return rep[x] == x ? x : rep[x] = root(rep[x]); };
    for (int k = 0; k < 6; ++k) {
      int a = rng() % terms.size(), b = rng() % terms.size();
      rep[root(a)] = root(b);
      g.merge(ids[a], ids[b]);
      if (k % 2) g.rebuild();
    }
    g.rebuild();
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t i = 0; i < terms.size(); ++i)
        for (size_t j = i + 1; j < terms.size(); ++j) {
          const T &x = terms[i], &y = terms[j];
          if (root(i) == root(j) || x.op != y.op || x.op < 0 || x.kids.size() != y.kids.size()) continue;
          bool same = true;
          for (size_t k = 0; k < x.kids.size(); ++k) same &= root(x.kids[k]) == root(y.kids[k]);
          if (same) {
            rep[root(i)] = root(j);
            changed = true;
          }
        }
    }
    for (size_t i = 0; i < terms.size(); ++i)
      for (size_t j = 0; j < terms.size(); ++j)
        ASSERT_EQ(root(i) == root(j), g.find(ids[i]) == g.find(ids[j])) << "seed " << seed;
    g.checkInvariants();
  }
}

TEST(EGraph, ClassesWithOpIndex) {
  EGraph g;
  Id a = g.leaf("a", {}), b = g.leaf("b", {});
  Id fa = g.add(node("f", {a}));
  Id fb = g.add(node("f", {b}));
  Id ga = g.add(node("g", {a}));
  EXPECT_EQ(g.classesWithOp(intern("f")), (std::vector<Id>{fa, fb}));
  EXPECT_TRUE(g.classesWithOp(intern("never-used-op")).empty());
  g.merge(fb, ga);
  g.merge(a, b);
  g.rebuild();
  std::vector<Id> fs = g.classesWithOp(intern("f"));
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0], g.find(fa));
  EXPECT_EQ(g.classesWithOp(intern("g")), fs);
  EXPECT_EQ(g.classesWithOp(intern("tensor")), (std::vector<Id>{g.find(a)}));
  g.checkInvariants();
}

TEST(EGraph, ParentsAreCanonicalAfterRebuild) {
  EGraph g;
  Id a = g.leaf("a", {}), b = g.leaf("b", {});
  Id fa = g.add(node("f", {a, a}));
  Id fb = g.add(node("f", {b, b}));
  Id h = g.add(node("h", {fa}));
  EXPECT_EQ(g.eclass(a).parents.size(), 1u);  // f(a, a) once
  g.merge(a, b);
  g.rebuild();
  const auto& ps = g.eclass(a).parents;
  ASSERT_EQ(ps.size(), 1u);
  EXPECT_EQ(ps[0].second, g.find(fb));
  EXPECT_EQ(ps[0].first.children, (std::vector<Id>{g.find(a), g.find(a)}));
  ASSERT_EQ(g.eclass(fa).parents.size(), 1u);
  EXPECT_EQ(g.eclass(fa).parents[0].second, h);
  g.checkInvariants();
}

TEST(EGraph, TryAddRefusesIllTyped) {
  EGraph g(eg::test::toyData);
  Id x = g.leaf("x", tensorData({2, 3}));
  Id y = g.leaf("y", tensorData({3, 2}));
  size_t before = g.numNodes();
  EXPECT_FALSE(g.tryAdd(node("add", {x, y})).has_value());
  EXPECT_FALSE(g.tryAdd(node("bad", {x})).has_value());
  EXPECT_EQ(g.numNodes(), before);
  auto ok = g.tryAdd(node("add", {x, x}));
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(*g.data(*ok).tensor(), (TensorType{DType::F32, {2, 3}}));
  // add always adds, with unknown data.
  Id forced = g.add(node("bad", {x}));
  EXPECT_TRUE(g.data(forced).types.empty());
  // tryAdd of an existing node returns it even if the DataFn would refuse.
  EXPECT_EQ(g.tryAdd(node("bad", {x})), forced);
}

TEST(EGraph, DataMergeAndConflicts) {
  EGraph g(eg::test::toyData);
  Id x = g.leaf("x", tensorData({4}));
  Id u = g.add(node("opaque", {x}));
  EXPECT_TRUE(g.data(u).types.empty());
  g.merge(u, x);  // unknown + known = known
  g.rebuild();
  EXPECT_EQ(g.data(u).types, tensorData({4}).types);
  EXPECT_TRUE(g.conflicts().empty());

  Id y = g.leaf("y", tensorData({5}));
  g.merge(y, x);  // different known types: conflict, first kept
  g.rebuild();
  EXPECT_EQ(g.data(x).types, tensorData({5}).types);
  ASSERT_EQ(g.conflicts().size(), 1u);
  EXPECT_NE(g.conflicts()[0].find("f32[5]"), std::string::npos);
  EXPECT_NE(g.conflicts()[0].find("f32[4]"), std::string::npos);

  // Unknown dtype is compatible and gets filled in.
  Id z = g.leaf("z", tensorData({7}, DType::Unknown));
  Id w = g.leaf("w", tensorData({7}, DType::BF16));
  g.merge(z, w);
  g.rebuild();
  EXPECT_EQ(g.data(z).tensor()->dtype, DType::BF16);
  EXPECT_EQ(g.conflicts().size(), 1u);

  // Constants: different constants conflict.
  ClassData one, two;
  one.constant = 1.0;
  two.constant = 2.0;
  Id c1 = g.leaf("c1", one), c2 = g.leaf("c2", two);
  g.merge(c1, c2);
  g.rebuild();
  EXPECT_EQ(g.data(c1).constant, 1.0);
  EXPECT_EQ(g.conflicts().size(), 2u);

  // Re-declaring a leaf with another type is a conflict too.
  g.leaf("w", tensorData({8}));
  EXPECT_EQ(g.conflicts().size(), 3u);
  g.checkInvariants();
}

TEST(EGraph, DataPropagatesToParents) {
  EGraph g(eg::test::toyData);
  Id x = g.leaf("x", tensorData({3}));
  Id u = g.add(node("opaque", {x}));
  Id f = g.add(node("f", {u}));  // copies u's (unknown) data
  EXPECT_TRUE(g.data(f).types.empty());
  Id y = g.leaf("y", tensorData({3}));
  g.merge(u, y);
  g.rebuild();
  EXPECT_EQ(g.data(f).types, tensorData({3}).types);
}

TEST(EGraph, BadIdsThrow) {
  EGraph g;
  Id a = g.leaf("a", {});
  EXPECT_THROW(g.add(node("f", {a + 10})), std::out_of_range);
  EXPECT_THROW(g.merge(a, 99), std::out_of_range);
  EXPECT_THROW(g.eclass(99), std::out_of_range);
  EXPECT_FALSE(g.lookup(node("f", {99})).has_value());
}

TEST(EGraph, CheckInvariantsRequiresRebuild) {
  EGraph g;
  Id a = g.leaf("a", {}), b = g.leaf("b", {});
  g.merge(a, b);
  EXPECT_THROW(g.checkInvariants(), std::logic_error);
  g.rebuild();
  EXPECT_NO_THROW(g.checkInvariants());
}

TEST(EGraph, ScalesToManyNodes) {
  // 60k random binary nodes over 1000 leaves plus merges: the invariants hold at
  // scale (its speed is measured by bench/, not asserted here).
  EGraph g;
  std::vector<Id> ids;
  for (int i = 0; i < 1000; ++i) ids.push_back(g.leaf("n" + std::to_string(i), {}));
  std::mt19937 rng(1);
  Symbol f = intern("f");
  while (g.numNodes() < 60000) ids.push_back(g.add(ENode{f, kNoAttrs, {ids[rng() % ids.size()], ids[rng() % ids.size()]}}));
  for (int i = 0; i < 500; ++i) g.merge(ids[rng() % 1000], ids[rng() % 1000]);
  g.rebuild();
  EXPECT_LT(g.numClasses(), 60000u);
  g.checkInvariants();
  for (Id c : g.classesWithOp(f))
    for (const ENode& n : g.eclass(c).nodes) ASSERT_EQ(g.lookup(n), c);
}
