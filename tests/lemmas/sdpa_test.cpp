// Scaled-dot-product attention over pieces: heads (keeping the query/kv
// grouping) and batches distribute; k/v split along the sequence, or head
// pieces that pair queries with another group's kv heads, do not.
#include "lemma_fixture.h"

namespace tangle::lemmas::testing {
namespace {

using Sdpa = LemmaTest;

const std::vector<std::string> kAll = {"sdpa-heads", "sdpa-batch", "sdpa_backward-heads", "sdpa_backward-batch"};

TEST_F(Sdpa, GroupedHeadsDistributeWithABroadcastMask) {
  for (const char* p : {"q0", "q1"}) leaf(p, {1, 4, 3, 2});  // 2 query heads per kv head
  for (const char* p : {"k0", "k1", "v0", "v1"}) leaf(p, {1, 2, 5, 2});
  leaf("m", {1, 1, 3, 5});
  const std::string call = "(sdpa[false, 0.5] (concat[1] ?q0 ?q1) (concat[1] ?k0 ?k1) (concat[1] ?v0 ?v1) ?m)";
  eg::Id out = term("(getitem[0] " + call + ")"), lse = term("(getitem[1] " + call + ")");
  run(kAll);
  EXPECT_TRUE(equiv(out, "(concat[1] (getitem[0] (sdpa[false, 0.5] ?q0 ?k0 ?v0 ?m)) "
                         "(getitem[0] (sdpa[false, 0.5] ?q1 ?k1 ?v1 ?m)))"));
  EXPECT_TRUE(equiv(lse, "(concat[1] (getitem[1] (sdpa[false, 0.5] ?q0 ?k0 ?v0 ?m)) "
                         "(getitem[1] (sdpa[false, 0.5] ?q1 ?k1 ?v1 ?m)))"));
}

TEST_F(Sdpa, BatchesDistributeAndSplitAFullMask) {
  for (const char* p : {"q0", "q1", "k0", "k1", "v0", "v1"}) leaf(p, {1, 2, 3, 2});
  leaf("m", {2, 2, 3, 3});
  eg::Id out = term("(getitem[0] (sdpa[true, 0.5] (concat[0] ?q0 ?q1) (concat[0] ?k0 ?k1) (concat[0] ?v0 ?v1) ?m))");
  run(kAll);
  EXPECT_TRUE(equiv(out, "(concat[0] (getitem[0] (sdpa[true, 0.5] ?q0 ?k0 ?v0 (slice[0, 0, 1, 1] ?m))) "
                         "(getitem[0] (sdpa[true, 0.5] ?q1 ?k1 ?v1 (slice[0, 1, 2, 1] ?m))))"));
}

TEST_F(Sdpa, BackwardHeadsDistribute) {
  for (const char* p : {"g0", "g1", "q0", "q1", "o0", "o1"}) leaf(p, {1, 2, 3, 2});
  for (const char* p : {"k0", "k1", "v0", "v1"}) leaf(p, {1, 1, 4, 2});
  for (const char* p : {"l0", "l1"}) leaf(p, {1, 2, 3});
  constant("m", 0);
  eg::Id dk = term("(getitem[1] (sdpa_backward[false, 0.5] (concat[1] ?g0 ?g1) (concat[1] ?q0 ?q1) (concat[1] ?k0 ?k1) "
                   "(concat[1] ?v0 ?v1) (concat[1] ?o0 ?o1) (concat[1] ?l0 ?l1) ?m))");
  run(kAll);
  EXPECT_TRUE(equiv(dk, "(concat[1] (getitem[1] (sdpa_backward[false, 0.5] ?g0 ?q0 ?k0 ?v0 ?o0 ?l0 ?m)) "
                        "(getitem[1] (sdpa_backward[false, 0.5] ?g1 ?q1 ?k1 ?v1 ?o1 ?l1 ?m)))"));
}

TEST_F(Sdpa, KeysSplitAlongTheSequenceDoNotDistribute) {
  leaf("q", {1, 2, 3, 2});
  for (const char* p : {"k0", "k1", "v0", "v1"}) leaf(p, {1, 2, 2, 2});
  constant("m", 0);
  term("(getitem[0] (sdpa[false, 0.5] ?q (concat[2] ?k0 ?k1) (concat[2] ?v0 ?v1) ?m))");
  auto r = run(kAll);
  for (const auto& name : kAll) EXPECT_EQ(r.firings[name], 0u) << name;
}

TEST_F(Sdpa, HeadPiecesFromAnotherGroupDoNotDistribute) {
  // 4 query heads over 2 kv heads (2 per group), split 1 + 3: the second
  // piece's queries would read the first piece's kv head.
  leaf("q0", {1, 1, 3, 2});
  leaf("q1", {1, 3, 3, 2});
  for (const char* p : {"k0", "k1", "v0", "v1"}) leaf(p, {1, 1, 3, 2});
  constant("m", 0);
  term("(getitem[0] (sdpa[false, 0.5] (concat[1] ?q0 ?q1) (concat[1] ?k0 ?k1) (concat[1] ?v0 ?v1) ?m))");
  // k pieces of different sizes than v pieces.
  leaf("q2", {1, 2, 3, 2});
  leaf("k2", {1, 2, 3, 2});
  leaf("v2", {1, 1, 3, 2});
  leaf("v3", {1, 3, 3, 2});
  term("(getitem[0] (sdpa[false, 0.5] (concat[1] ?q2 ?q2) (concat[1] ?k2 ?k2) (concat[1] ?v2 ?v3) ?m))");
  auto r = run(kAll);
  EXPECT_EQ(r.firings["sdpa-heads"], 0u);
}

}  // namespace
}  // namespace tangle::lemmas::testing
