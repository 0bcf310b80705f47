// GQA with query heads split finer than the kv heads (kv heads replicated on
// groups of ranks): equal concats give equal pieces, and a block of query
// heads inside one kv head's group reads that kv head alone.
#include "lemma_fixture.h"

namespace tangle::lemmas::testing {
namespace {

using Gqa = LemmaTest;

const std::vector<std::string> kAll = {"concat-equal-pieces", "sdpa-heads-subgroup", "slice-concat"};

TEST_F(Gqa, EqualConcatsWithEqualSplitsHaveEqualPieces) {
  for (const char* p : {"a0", "a1", "b0", "b1"}) leaf(p, {2, 3});
  eg::Id x = term("(concat[0] ?a0 ?a1)"), y = term("(concat[0] ?b0 ?b1)");
  g.merge(x, y);
  g.rebuild();
  run(kAll);
  EXPECT_EQ(g.find(vars.cls("a0")), g.find(vars.cls("b0")));
  EXPECT_EQ(g.find(vars.cls("a1")), g.find(vars.cls("b1")));
  EXPECT_NE(g.find(vars.cls("a0")), g.find(vars.cls("a1")));
}

TEST_F(Gqa, EqualConcatsWithOtherSplitsMergeNothing) {
  leaf("a0", {1, 3});
  leaf("a1", {3, 3});
  leaf("b0", {3, 3});
  leaf("b1", {1, 3});
  eg::Id x = term("(concat[0] ?a0 ?a1)"), y = term("(concat[0] ?b0 ?b1)");
  g.merge(x, y);
  g.rebuild();
  size_t before = g.numClasses();
  run(kAll);
  EXPECT_EQ(g.numClasses(), before);
}

TEST_F(Gqa, QueryBlocksInsideOneGroupReadThatKvHead) {
  // 8 query heads over 2 kv heads (4 per group), 4 blocks of 2 (TP 4 > 2 kv heads).
  for (const char* p : {"q0", "q1", "q2", "q3"}) leaf(p, {1, 2, 3, 2});
  for (const char* p : {"k0", "k1", "v0", "v1"}) leaf(p, {1, 1, 5, 2});
  constant("m", 0);
  eg::Id out = term("(getitem[0] (sdpa[true, 0.5] (concat[1] ?q0 ?q1 ?q2 ?q3) (concat[1] ?k0 ?k1) "
                    "(concat[1] ?v0 ?v1) ?m))");
  run(kAll);
  EXPECT_TRUE(equiv(out, "(concat[1] (getitem[0] (sdpa[true, 0.5] ?q0 ?k0 ?v0 ?m)) "
                         "(getitem[0] (sdpa[true, 0.5] ?q1 ?k0 ?v0 ?m)) "
                         "(getitem[0] (sdpa[true, 0.5] ?q2 ?k1 ?v1 ?m)) "
                         "(getitem[0] (sdpa[true, 0.5] ?q3 ?k1 ?v1 ?m)))"));
}

TEST_F(Gqa, AFullMaskIsSlicedPerBlock) {
  for (const char* p : {"q0", "q1"}) leaf(p, {1, 1, 3, 2});
  for (const char* p : {"k", "v"}) leaf(p, {1, 1, 4, 2});
  leaf("m", {1, 2, 3, 4});
  eg::Id out = term("(getitem[0] (sdpa[false, 0.5] (concat[1] ?q0 ?q1) ?k ?v ?m))");
  run(kAll);
  EXPECT_TRUE(equiv(out, "(concat[1] (getitem[0] (sdpa[false, 0.5] ?q0 ?k ?v (slice[1, 0, 1, 1] ?m))) "
                         "(getitem[0] (sdpa[false, 0.5] ?q1 ?k ?v (slice[1, 1, 2, 1] ?m))))"));
}

TEST_F(Gqa, BlocksStraddlingAGroupDoNotDistribute) {
  // 4 query heads over 2 kv heads, split 1 + 2 + 1: the middle block reads both kv heads.
  leaf("q0", {1, 1, 3, 2});
  leaf("q1", {1, 2, 3, 2});
  leaf("q2", {1, 1, 3, 2});
  for (const char* p : {"k", "v"}) leaf(p, {1, 2, 3, 2});
  constant("m", 0);
  term("(getitem[0] (sdpa[false, 0.5] (concat[1] ?q0 ?q1 ?q2) ?k ?v ?m))");
  auto r = run(kAll);
  EXPECT_EQ(r.firings["sdpa-heads-subgroup"], 0u);
}

}  // namespace
}  // namespace tangle::lemmas::testing
