// Lemmas for what tensor/sequence/vocab parallelism wraps: dropout, grouping
// reshapes (attention head flattening), scalar ops, vocab-parallel lookups,
// max all-reduce, layer-norm backward.
#include "lemma_fixture.h"

namespace tangle::lemmas::testing {
namespace {

using Model = LemmaTest;

TEST_F(Model, DropoutDistributesOverConcat) {
  leaf("a", {2, 4});
  leaf("b", {3, 4});
  eg::Id out = term("(getitem[1] (dropout[0.1, true] (concat[0] ?a ?b)))");
  run({"dropout-concat"});
  EXPECT_TRUE(equiv(out, "(concat[0] (getitem[1] (dropout[0.1, true] ?a)) (getitem[1] (dropout[0.1, true] ?b)))"));
}

TEST_F(Model, TransposeMovesThroughAGroupingReshapeAsBlocks) {
  leaf("x", {6, 2, 3, 4});  // [seq, batch, heads, dim] flattened to [seq, batch*heads, dim]
  eg::Id out = term("(transpose[0, 1] (reshape[[6, 6, 4]] ?x))");
  run({"transpose-grouping"});
  EXPECT_TRUE(equiv(out, "(reshape[[6, 6, 4]] (permute[[1, 2, 0, 3]] ?x))"));
}

TEST_F(Model, GroupingRefusesReshapesThatSplitDims) {
  leaf("x", {6, 4});
  term("(transpose[0, 1] (reshape[[3, 8]] ?x))");  // 6x4 -> 3x8 is no grouping
  auto r = run({"transpose-grouping", "permute-grouping"});
  EXPECT_EQ(r.firings["transpose-grouping"], 0u);
}

TEST_F(Model, BmmOfAFlattenedBatchIsAMatmul) {
  leaf("p", {2, 3, 5, 4});
  leaf("q", {2, 3, 4, 7});
  eg::Id out = term("(bmm (reshape[[6, 5, 4]] ?p) (reshape[[6, 4, 7]] ?q))");
  run({"bmm-grouped-batch"});
  EXPECT_TRUE(equiv(out, "(reshape[[6, 5, 7]] (matmul ?p ?q))"));
}

TEST_F(Model, ReshapeInverseNamesTheUnflattenedValue) {
  eg::Id x = leaf("x", {2, 6});
  term("(reshape[[12]] ?x)");
  run({"reshape-inverse"});
  EXPECT_TRUE(equiv(x, "(reshape[[2, 6]] (reshape[[12]] ?x))"));
}

TEST_F(Model, ScalarOperandCommutesWithReshapeOnlyWhenZeroDim) {
  leaf("x", {2, 6});
  leaf("v", {12});
  constant("c", 0.5);
  eg::Id s = term("(mul (reshape[[12]] ?x) ?c)");
  eg::Id t = term("(mul (reshape[[12]] ?x) ?v)");
  run({"mul-scalar-reshape"});
  EXPECT_TRUE(equiv(s, "(reshape[[12]] (mul ?x ?c))"));
  EXPECT_EQ(g.eclass(t).nodes.size(), 1u);  // a full tensor operand does not move
}

TEST_F(Model, VocabParallelEmbeddingSumsMaskedLocalLookups) {
  leaf("w0", {4, 3});
  leaf("w1", {6, 3});
  leaf("ids", {2, 5}, DType::I64);
  eg::Id out = term("(index_rows (concat[0] ?w0 ?w1) ?ids)");
  run({"vocab-parallel-embedding"});
  constant("z", 0);
  constant("o1", 4);
  constant("e0", 4);
  constant("e1", 10);
  std::string m0 = "(or (lt ?ids ?z) (ge ?ids ?e0))", m1 = "(or (lt ?ids ?o1) (ge ?ids ?e1))";
  std::string r0 = "(where (reshape[[2, 5, 1]] " + m0 + ") ?z (index_rows ?w0 (where " + m0 + " ?z (sub ?ids ?z))))";
  std::string r1 = "(where (reshape[[2, 5, 1]] " + m1 + ") ?z (index_rows ?w1 (where " + m1 + " ?z (sub ?ids ?o1))))";
  EXPECT_TRUE(equiv(out, "(sum " + r0 + " " + r1 + ")"));
}

// A padded vocabulary: the spec's table is the first 10 rows of the ranks' 12.
TEST_F(Model, LookupInAPrefixOfATableIsALookupInTheTable) {
  leaf("w", {12, 3});
  leaf("ids", {2, 5}, DType::I64);
  eg::Id out = term("(index_rows (slice[0, 0, 10, 1] ?w) ?ids)");
  eg::Id shifted = term("(index_rows (slice[0, 2, 12, 1] ?w) ?ids)");  // near miss: rows 2.. are not rows 0..
  eg::Id cols = term("(index_rows (slice[1, 0, 2, 1] ?w) ?ids)");      // near miss: a cut of the columns
  auto r = run({"index_rows-prefix"});
  EXPECT_EQ(r.firings["index_rows-prefix"], 1u);
  EXPECT_TRUE(equiv(out, "(index_rows ?w ?ids)"));
  EXPECT_FALSE(g.find(shifted) == g.find(out));
  EXPECT_FALSE(g.find(cols) == g.find(out));
}

// The embedding gradient (one_hot^T @ g) split by the vocab ranges the ranks' masks name.
TEST_F(Model, VocabEmbeddingBackwardSplitsByTheMasksRanges) {
  leaf("ids", {1, 5}, DType::I64);
  leaf("g", {1, 5, 3});
  constant("z", 0);
  constant("o1", 4);
  constant("e1", 10);
  std::string m0 = "(or (lt ?ids ?z) (ge ?ids ?o1))", m1 = "(or (lt ?ids ?o1) (ge ?ids ?e1))";
  term(m0);
  term(m1);
  eg::Id out = term("(mm (transpose[0, 1] (reshape[[5, 10]] (cast[\"f32\"] (one_hot[10] ?ids)))) (reshape[[5, 3]] ?g))");
  auto r = run({"vocab-embedding-backward"});
  EXPECT_EQ(r.firings["vocab-embedding-backward"], 1u);
  auto piece = [](const std::string& m, const std::string& o, int s) {
    return "(mm (transpose[0, 1] (reshape[[5, " + std::to_string(s) + "]] (cast[\"f32\"] (one_hot[" + std::to_string(s) +
           "] (where " + m + " ?z (sub ?ids " + o + ")))))) (reshape[[5, 3]] (where (reshape[[1, 5, 1]] " + m +
           ") ?z ?g)))";
  };
  EXPECT_TRUE(equiv(out, "(concat[0] " + piece(m0, "?z", 4) + " " + piece(m1, "?o1", 6) + ")"));
}

TEST_F(Model, VocabEmbeddingBackwardNeedsMasksThatTileTheTable) {
  leaf("ids", {5}, DType::I64);
  leaf("g", {5, 3});
  constant("z", 0);
  constant("o1", 4);
  constant("e1", 9);  // [0, 4) and [4, 9) leave row 9 of 10 out
  term("(or (lt ?ids ?z) (ge ?ids ?o1))");
  term("(or (lt ?ids ?o1) (ge ?ids ?e1))");
  term("(mm (transpose[0, 1] (reshape[[5, 10]] (cast[\"f32\"] (one_hot[10] ?ids)))) (reshape[[5, 3]] ?g))");
  auto r = run({"vocab-embedding-backward"});
  EXPECT_EQ(r.firings["vocab-embedding-backward"], 0u);
}

// Cross entropy's "-1 at the target" over vocab-sharded logits: the spec's one-hot
// row (masked by its own range) is the ranks' masked one-hot rows side by side.
TEST_F(Model, VocabParallelOneHotIsTheRanksMaskedOneHots) {
  leaf("t", {4, 1}, DType::I64);
  constant("z", 0);
  constant("one", 1);
  constant("o1", 3);
  constant("e1", 8);
  std::string m = "(or (lt ?t ?z) (ge ?t ?e1))", m0 = "(or (lt ?t ?z) (ge ?t ?o1))", m1 = "(or (lt ?t ?o1) (ge ?t ?e1))";
  term(m0);
  term(m1);
  auto side = [&](const std::string& mask, const std::string& o, int v) {
    return "(mul (cast[\"f32\"] (one_hot[" + std::to_string(v) + "] (reshape[[4]] (where " + mask + " ?z (sub ?t " + o +
           "))))) (reshape[[4, 1]] (sub ?one (cast[\"f32\"] (reshape[[4]] " + mask + ")))))";
  };
  eg::Id out = term(side(m, "?z", 8));
  auto r = run({"vocab-parallel-one-hot"});
  EXPECT_EQ(r.firings["vocab-parallel-one-hot"], 1u);
  EXPECT_TRUE(equiv(out, "(concat[1] " + side(m0, "?z", 3) + " " + side(m1, "?o1", 5) + ")"));
}

TEST_F(Model, VocabParallelGatherNeedsTheSpecRangeToCoverTheTable) {
  leaf("x0", {4, 3});
  leaf("x1", {4, 5});
  leaf("t", {4}, DType::I64);
  constant("z", 0);
  constant("lo", 0);
  constant("hi", 8);  // the table has 3 + 5 = 8 columns
  constant("bad", 9);
  std::string good = "(or (lt ?t ?lo) (ge ?t ?hi))", wrong = "(or (lt ?t ?lo) (ge ?t ?bad))";
  auto lhs = [](const std::string& m) {
    return "(where " + m + " ?z (reshape[[4]] (gather_rows (concat[1] ?x0 ?x1) (reshape[[4]] (where " + m +
           " ?z (sub ?t ?lo))))))";
  };
  term(lhs(good));
  term(lhs(wrong));
  auto r = run({"vocab-parallel-gather"});
  EXPECT_EQ(r.firings["vocab-parallel-gather"], 1u);  // only the mask whose range is the whole table
}

TEST_F(Model, MaxOverTheConcatDimIsACrossRankMax) {
  leaf("a", {2, 3});
  leaf("b", {2, 5});
  eg::Id v = term("(getitem[0] (max_dim[1, false] (concat[1] ?a ?b)))");
  eg::Id i = term("(getitem[1] (max_dim[1, false] (concat[1] ?a ?b)))");
  run({"max_dim-concat"});
  EXPECT_TRUE(equiv(v, "(rmax (getitem[0] (max_dim[1, false] ?a)) (getitem[0] (max_dim[1, false] ?b)))"));
  EXPECT_EQ(g.eclass(i).nodes.size(), 1u);  // argmax indices would need offsets: untouched
}

TEST_F(Model, LayerNormBackwardSumsWeightGradientsOverRowShards) {
  leaf("g0", {2, 3, 8});
  leaf("g1", {2, 3, 8});
  leaf("x0", {2, 3, 8});
  leaf("x1", {2, 3, 8});
  leaf("m0", {6});
  leaf("m1", {6});
  leaf("v0", {6});
  leaf("v1", {6});
  leaf("w", {8});
  leaf("b", {8});
  std::string bwd = "(apex_layer_norm_bwd[[8], 1e-5] (concat[0] ?g0 ?g1) (concat[0] ?m0 ?m1) (concat[0] ?v0 ?v1) "
                    "(concat[0] ?x0 ?x1) ?w ?b)";
  eg::Id dx = term("(getitem[0] " + bwd + ")");
  eg::Id dw = term("(getitem[1] " + bwd + ")");
  run({"apex-layernorm-bwd-rows"});
  std::string p0 = "(apex_layer_norm_bwd[[8], 1e-5] ?g0 ?m0 ?v0 ?x0 ?w ?b)";
  std::string p1 = "(apex_layer_norm_bwd[[8], 1e-5] ?g1 ?m1 ?v1 ?x1 ?w ?b)";
  EXPECT_TRUE(equiv(dx, "(concat[0] (getitem[0] " + p0 + ") (getitem[0] " + p1 + "))"));
  EXPECT_TRUE(equiv(dw, "(sum (getitem[1] " + p0 + ") (getitem[1] " + p1 + "))"));
}

}  // namespace
}  // namespace tangle::lemmas::testing
