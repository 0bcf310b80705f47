// sum-pairs-into-adds: a cross-rank sum regrouped into the adds a rank computed.
#include "lemma_fixture.h"

namespace tangle::lemmas::testing {
namespace {

using Accum = LemmaTest;

// Two ranks x two micro-batches: the spec's four-term sum equals the sum of
// each rank's accumulated gradient.
TEST_F(Accum, FourTermSumRegroupsIntoEachRanksAdd) {
  for (const char* n : {"a0", "b0", "a1", "b1"}) leaf(n, {3, 2});
  term("(add ?a0 ?b0)");
  term("(add ?b1 ?a1)");  // operand order does not matter
  eg::Id s = term("(sum ?a0 ?a1 ?b0 ?b1)");
  auto r = run({"sum-pairs-into-adds"});
  EXPECT_GT(r.firings["sum-pairs-into-adds"], 0u);
  EXPECT_TRUE(equiv(s, "(sum (add ?a0 ?b0) (add ?b1 ?a1))"));
}

TEST_F(Accum, TwoTermSumIsTheExistingAdd) {
  leaf("a", {4});
  leaf("b", {4});
  eg::Id add = term("(add ?a ?b)");
  eg::Id s = term("(sum ?a ?b)");
  run({"sum-pairs-into-adds"});
  g.rebuild();
  EXPECT_EQ(g.find(add), g.find(s));
}

TEST_F(Accum, NoAddNoRegrouping) {
  for (const char* n : {"a", "b", "c"}) leaf(n, {4});
  term("(add ?a ?a)");  // a term added to itself once is not a pair of two terms
  term("(sum ?a ?b ?c)");
  auto r = run({"sum-pairs-into-adds"});
  EXPECT_EQ(r.firings["sum-pairs-into-adds"], 0u);
}

TEST_F(Accum, BroadcastingAddIsNotATerm) {
  leaf("a", {4, 3});
  leaf("b", {4, 3});
  leaf("row", {1, 3});
  term("(add ?a ?row)");
  term("(sum ?a ?b)");
  auto r = run({"sum-pairs-into-adds"});
  EXPECT_EQ(r.firings["sum-pairs-into-adds"], 0u);
}

// The localization case the rule is shaped for: a rank adds a replicated
// residual x (itself a reduced sum of partials e_r) to its UNREDUCED partial
// p_r. The spec's add(x, sum(p0, p1)) must not become a clean sum of the
// ranks' tensors: nothing the rank computed is a term of it. (Flattening adds
// into sums would give sum(e0, e1, p0, p1) here.)
TEST_F(Accum, RanksResidualAddOfAPartialStaysUnrelated) {
  for (const char* n : {"e0", "e1", "p0", "p1"}) leaf(n, {2, 4});
  term("(add (sum ?e0 ?e1) ?p0)");
  term("(add (sum ?e0 ?e1) ?p1)");
  eg::Id spec = term("(add (sum ?e0 ?e1) (sum ?p0 ?p1))");
  run({"sum-pairs-into-adds", "add-sum-sum", "sum-flatten"});
  g.rebuild();
  for (const eg::ENode& n : g.eclass(spec).nodes) {
    if (n.op != ops::syms().sum) continue;
    for (eg::Id c : n.children)
      for (const eg::ENode& cn : g.eclass(c).nodes) EXPECT_FALSE(cn.isLeaf() && cn.op != ops::syms().constant)
          << "the spec's residual add became a sum with a bare rank tensor as a term";
  }
  EXPECT_FALSE(equiv(spec, "(sum ?e0 ?p0 ?e1 ?p1)"));
}

}  // namespace
}  // namespace tangle::lemmas::testing
