// The online-softmax merge (src/lemmas/sdpa_merge.cpp): merge trees over the
// same blocks, grouped and ordered differently (torch's load-balanced ring
// against the spec's chain), meet at one normal form.
#include "lemma_fixture.h"

namespace tangle::lemmas::testing {
namespace {

using Merge = LemmaTest;

const std::vector<std::string> kMerge = {"merge-assoc-out", "merge-assoc-lse", "merge-swap-out",
                                         "merge-swap-lse", "merge-commute-out", "merge-commute-lse"};

// (out, lse) of merging state (o, u) with block (ob, ub), as torch's ring writes it.
struct Pair {
  std::string o, u;
};
Pair merge(const Pair& a, const Pair& b) {
  return {"(sub " + a.o + " (mul (sigmoid (sub " + b.u + " " + a.u + ")) (sub " + a.o + " " + b.o + ")))",
          "(sub " + a.u + " (getitem[0] (log_sigmoid (sub " + a.u + " " + b.u + "))))"};
}

class MergeTest : public Merge {
 protected:
  Pair block(const std::string& n) {
    leaf("o" + n, {1, 2, 3, 4});
    leaf("u" + n, {1, 2, 3, 1});
    return {"?o" + n, "?u" + n};
  }
};

TEST_F(MergeTest, APairMergedIntoAChainEqualsTheChainInAnotherOrder) {
  Pair a = block("a"), b = block("b"), c = block("c"), d = block("d");
  Pair grouped = merge(merge(a, d), merge(b, c));  // the load-balanced ring's grouping
  eg::Id out = term(grouped.o), lse = term(grouped.u);
  Pair chain = merge(merge(merge(a, c), b), d);  // the spec's chain
  Pair other = merge(merge(merge(d, b), c), a);
  eg::Id chainOut = term(chain.o), chainLse = term(chain.u), otherOut = term(other.o), otherLse = term(other.u);
  run(kMerge, 12);
  g.rebuild();
  EXPECT_EQ(g.find(out), g.find(chainOut));
  EXPECT_EQ(g.find(lse), g.find(chainLse));
  EXPECT_EQ(g.find(out), g.find(otherOut));
  EXPECT_EQ(g.find(lse), g.find(otherLse));
}

TEST_F(MergeTest, DifferentBlocksStayApart) {
  Pair a = block("a"), b = block("b"), c = block("c");
  eg::Id out = term(merge(merge(a, b), c).o);
  run(kMerge, 12);
  EXPECT_FALSE(equiv(out, merge(merge(a, b), b).o));
  EXPECT_FALSE(equiv(out, merge(a, b).o));
}

}  // namespace
}  // namespace tangle::lemmas::testing
