// Lemmas of mm, bmm and matmul.
#include "lemma_fixture.h"

namespace tangle::lemmas::testing {
namespace {

using Matmul = LemmaTest;

TEST_F(Matmul, MmConcatRowsAndCols) {
  leaf("a1", {2, 3});
  leaf("a2", {4, 3});
  leaf("b", {3, 5});
  leaf("c1", {5, 1});
  leaf("c2", {5, 6});
  eg::Id r = term("(mm (concat[0] ?a1 ?a2) ?b)");
  eg::Id c = term("(mm ?b (concat[1] ?c1 ?c2))");
  run({"mm-concat-rows", "mm-concat-cols"});
  EXPECT_TRUE(equiv(r, "(concat[0] (mm ?a1 ?b) (mm ?a2 ?b))"));
  EXPECT_TRUE(equiv(c, "(concat[1] (mm ?b ?c1) (mm ?b ?c2))"));
}

TEST_F(Matmul, MmConcatInner) {
  leaf("a", {4, 2});
  leaf("b", {4, 6});
  leaf("c", {2, 5});
  leaf("d", {6, 5});
  eg::Id m = term("(mm (concat[1] ?a ?b) (concat[0] ?c ?d))");
  run({"mm-concat-inner"});
  EXPECT_TRUE(equiv(m, "(sum (mm ?a ?c) (mm ?b ?d))"));
}

TEST_F(Matmul, MmConcatInnerRefusesMismatchedSplits) {
  leaf("a", {4, 2});
  leaf("b", {4, 6});
  leaf("c", {6, 5});
  leaf("d", {2, 5});
  term("(mm (concat[1] ?a ?b) (concat[0] ?c ?d))");  // k = 2+6 vs 6+2
  leaf("x", {4, 4});
  leaf("y", {4, 4});
  leaf("u", {2, 5});
  leaf("v", {6, 5});
  term("(mm (concat[1] ?x ?y) (concat[0] ?u ?v))");  // 4+4 vs 2+6
  auto r = run({"mm-concat-inner"});
  EXPECT_EQ(r.firings["mm-concat-inner"], 0u);
}

TEST_F(Matmul, MmOverSum) {
  leaf("a", {4, 3});
  leaf("b", {4, 3});
  leaf("w", {3, 2});
  leaf("z", {2, 4});
  eg::Id l = term("(mm (sum ?a ?b) ?w)");
  eg::Id r = term("(mm ?z (sum ?a ?b))");
  run({"mm-sum-lhs", "mm-sum-rhs"});
  EXPECT_TRUE(equiv(l, "(sum (mm ?a ?w) (mm ?b ?w))"));
  EXPECT_TRUE(equiv(r, "(sum (mm ?z ?a) (mm ?z ?b))"));
}

TEST_F(Matmul, TransposeOfMm) {
  leaf("a", {4, 3});
  leaf("b", {3, 2});
  eg::Id t = term("(transpose[0, 1] (mm ?a ?b))");
  run({"transpose-mm"});
  EXPECT_TRUE(equiv(t, "(mm (transpose[0, 1] ?b) (transpose[0, 1] ?a))"));
}

TEST_F(Matmul, BmmBatchSplits) {
  leaf("a1", {1, 4, 3});
  leaf("a2", {2, 4, 3});
  leaf("b1", {1, 3, 5});
  leaf("b2", {2, 3, 5});
  leaf("w", {3, 3, 5});
  eg::Id same = term("(bmm (concat[0] ?a1 ?a2) (concat[0] ?b1 ?b2))");
  eg::Id sliced = term("(bmm (concat[0] ?a1 ?a2) ?w)");
  eg::Id rhs = term("(bmm (transpose[1, 2] ?w) (concat[0] ?b1 ?b2))");
  run({"bmm-concat-batch-lhs", "bmm-concat-batch-rhs"});
  EXPECT_TRUE(equiv(same, "(concat[0] (bmm ?a1 ?b1) (bmm ?a2 ?b2))"));
  EXPECT_TRUE(equiv(sliced, "(concat[0] (bmm ?a1 (slice[0, 0, 1, 1] ?w)) (bmm ?a2 (slice[0, 1, 3, 1] ?w)))"));
  EXPECT_TRUE(equiv(rhs, "(concat[0] (bmm (slice[0, 0, 1, 1] (transpose[1, 2] ?w)) ?b1) "
                         "(bmm (slice[0, 1, 3, 1] (transpose[1, 2] ?w)) ?b2))"));
}

TEST_F(Matmul, BmmRowsColsInnerSum) {
  leaf("a1", {2, 1, 3});
  leaf("a2", {2, 4, 3});
  leaf("b", {2, 3, 5});
  leaf("c1", {2, 3, 2});
  leaf("c2", {2, 3, 3});
  leaf("k1", {2, 5, 1});
  leaf("k2", {2, 5, 2});
  leaf("m1", {2, 1, 3});
  leaf("m2", {2, 2, 3});
  eg::Id rows = term("(bmm (concat[1] ?a1 ?a2) ?b)");
  eg::Id cols = term("(bmm ?a1 (concat[2] ?c1 ?c2))");
  eg::Id inner = term("(bmm (concat[2] ?k1 ?k2) (concat[1] ?m1 ?m2))");
  eg::Id s = term("(bmm (sum ?a1 ?a1) ?b)");
  eg::Id t = term("(bmm ?a2 (sum ?b ?b))");
  run({"bmm-concat-rows", "bmm-concat-cols", "bmm-concat-inner", "bmm-sum-lhs", "bmm-sum-rhs"});
  EXPECT_TRUE(equiv(rows, "(concat[1] (bmm ?a1 ?b) (bmm ?a2 ?b))"));
  EXPECT_TRUE(equiv(cols, "(concat[2] (bmm ?a1 ?c1) (bmm ?a1 ?c2))"));
  EXPECT_TRUE(equiv(inner, "(sum (bmm ?k1 ?m1) (bmm ?k2 ?m2))"));
  EXPECT_TRUE(equiv(s, "(sum (bmm ?a1 ?b) (bmm ?a1 ?b))"));
  EXPECT_TRUE(equiv(t, "(sum (bmm ?a2 ?b) (bmm ?a2 ?b))"));
}

TEST_F(Matmul, BmmInnerRefusesMismatchedSplits) {
  leaf("k1", {2, 5, 1});
  leaf("k2", {2, 5, 2});
  leaf("m1", {2, 2, 3});
  leaf("m2", {2, 1, 3});
  term("(bmm (concat[2] ?k1 ?k2) (concat[1] ?m1 ?m2))");
  auto r = run({"bmm-concat-inner"});
  EXPECT_EQ(r.firings["bmm-concat-inner"], 0u);
}

TEST_F(Matmul, TransposeOfBmm) {
  leaf("a", {2, 4, 3});
  leaf("b", {2, 3, 5});
  eg::Id t = term("(transpose[1, 2] (bmm ?a ?b))");
  run({"transpose-bmm"});
  EXPECT_TRUE(equiv(t, "(bmm (transpose[1, 2] ?b) (transpose[1, 2] ?a))"));
}

TEST_F(Matmul, MatmulRowsColsInner) {
  leaf("a1", {7, 2, 3});
  leaf("a2", {7, 4, 3});
  leaf("w", {3, 5});
  leaf("w1", {3, 2});
  leaf("w2", {3, 3});
  leaf("x", {7, 6, 3});
  leaf("k1", {7, 6, 1});
  leaf("k2", {7, 6, 2});
  leaf("v1", {1, 5});
  leaf("v2", {2, 5});
  eg::Id rows = term("(matmul (concat[1] ?a1 ?a2) ?w)");
  eg::Id cols = term("(matmul ?x (concat[1] ?w1 ?w2))");
  eg::Id inner = term("(matmul (concat[2] ?k1 ?k2) (concat[0] ?v1 ?v2))");
  run({"matmul-concat-lhs", "matmul-concat-rhs"});
  EXPECT_TRUE(equiv(rows, "(concat[1] (matmul ?a1 ?w) (matmul ?a2 ?w))"));
  EXPECT_TRUE(equiv(cols, "(concat[2] (matmul ?x ?w1) (matmul ?x ?w2))"));
  EXPECT_TRUE(equiv(inner, "(sum (matmul ?k1 ?v1) (matmul ?k2 ?v2))"));
}

TEST_F(Matmul, MatmulBatchDims) {
  leaf("a1", {1, 4, 3});
  leaf("a2", {2, 4, 3});
  leaf("w", {3, 5});        // broadcast: no batch dim
  leaf("b", {3, 3, 5});     // batch dim split alike
  leaf("o", {1, 3, 5});     // size-1 batch dim: broadcast
  eg::Id bw = term("(matmul (concat[0] ?a1 ?a2) ?w)");
  eg::Id bb = term("(matmul (concat[0] ?a1 ?a2) ?b)");
  eg::Id bo = term("(matmul (concat[0] ?a1 ?a2) ?o)");
  run({"matmul-concat-lhs"});
  EXPECT_TRUE(equiv(bw, "(concat[0] (matmul ?a1 ?w) (matmul ?a2 ?w))"));
  EXPECT_TRUE(equiv(bb, "(concat[0] (matmul ?a1 (slice[0, 0, 1, 1] ?b)) (matmul ?a2 (slice[0, 1, 3, 1] ?b)))"));
  EXPECT_TRUE(equiv(bo, "(concat[0] (matmul ?a1 ?o) (matmul ?a2 ?o))"));
}

TEST_F(Matmul, MatmulInnerNeedsMatchingSplit) {
  leaf("k1", {6, 1});
  leaf("k2", {6, 2});
  leaf("v", {3, 5});
  leaf("v1", {2, 5});
  leaf("v2", {1, 5});
  term("(matmul (concat[1] ?k1 ?k2) ?v)");
  term("(matmul (concat[1] ?k1 ?k2) (concat[0] ?v1 ?v2))");
  auto r = run({"matmul-concat-lhs", "matmul-concat-rhs"});
  EXPECT_EQ(r.firings["matmul-concat-lhs"], 0u);
  EXPECT_EQ(r.firings["matmul-concat-rhs"], 0u);
}

TEST_F(Matmul, MatmulOverSumAndTranspose) {
  leaf("a", {2, 4, 3});
  leaf("b", {2, 4, 3});
  leaf("w", {3, 5});
  eg::Id l = term("(matmul (sum ?a ?b) ?w)");
  eg::Id r = term("(matmul (transpose[1, 2] ?a) (sum ?a ?b))");
  eg::Id t = term("(transpose[1, 2] (matmul ?a ?w))");
  eg::Id notLast = term("(transpose[0, 1] (matmul ?a ?w))");
  run({"matmul-sum-lhs", "matmul-sum-rhs", "transpose-matmul"});
  EXPECT_TRUE(equiv(l, "(sum (matmul ?a ?w) (matmul ?b ?w))"));
  EXPECT_TRUE(equiv(r, "(sum (matmul (transpose[1, 2] ?a) ?a) (matmul (transpose[1, 2] ?a) ?b))"));
  EXPECT_TRUE(equiv(t, "(matmul (transpose[0, 1] ?w) (transpose[1, 2] ?a))"));
  EXPECT_EQ(g.eclass(notLast).nodes.size(), 1u);
}

}  // namespace
}  // namespace tangle::lemmas::testing
