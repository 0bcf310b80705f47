// Lemmas of the clean algebra: slice, concat, transpose, permute, reshape.
#include "lemma_fixture.h"

namespace tangle::lemmas::testing {
namespace {

using Rearrange = LemmaTest;

TEST_F(Rearrange, SliceFull) {
  leaf("x", {8, 4});
  eg::Id s = term("(slice[0, 0, 8, 1] ?x)");
  eg::Id partial = term("(slice[0, 0, 7, 1] ?x)");
  run({"slice-full"});
  EXPECT_EQ(g.find(s), g.find(vars.cls("x")));
  EXPECT_NE(g.find(partial), g.find(vars.cls("x")));
}

TEST_F(Rearrange, SliceSlice) {
  leaf("x", {10, 4});
  eg::Id s = term("(slice[0, 1, 4, 1] (slice[0, 2, 9, 1] ?x))");
  run({"slice-slice"});
  EXPECT_TRUE(equiv(s, "(slice[0, 3, 6, 1] ?x)"));
}

TEST_F(Rearrange, SliceSliceOtherDimsUntouched) {
  leaf("x", {10, 4});
  term("(slice[1, 1, 2, 1] (slice[0, 2, 9, 1] ?x))");
  auto r = run({"slice-slice"});
  EXPECT_EQ(r.firings["slice-slice"], 0u);
}

TEST_F(Rearrange, SliceConcatInsideOnePiece) {
  leaf("a", {4, 3});
  leaf("b", {6, 3});
  eg::Id s = term("(slice[0, 5, 8, 1] (concat[0] ?a ?b))");
  eg::Id whole = term("(slice[0, 4, 10, 1] (concat[0] ?a ?b))");
  run({"slice-concat"});
  EXPECT_TRUE(equiv(s, "(slice[0, 1, 4, 1] ?b)"));
  EXPECT_EQ(g.find(whole), g.find(vars.cls("b")));
}

TEST_F(Rearrange, SliceConcatSpanningPieces) {
  leaf("a", {4, 3});
  leaf("b", {2, 3});
  leaf("c", {6, 3});
  eg::Id s = term("(slice[0, 2, 9, 1] (concat[0] ?a ?b ?c))");
  run({"slice-concat"});
  EXPECT_TRUE(equiv(s, "(concat[0] (slice[0, 2, 4, 1] ?a) ?b (slice[0, 0, 3, 1] ?c))"));
}

TEST_F(Rearrange, SliceConcatStepIsLeftAlone) {
  leaf("a", {4, 3});
  leaf("b", {4, 3});
  term("(slice[0, 0, 8, 2] (concat[0] ?a ?b))");
  auto r = run({"slice-concat"});
  EXPECT_EQ(r.firings["slice-concat"], 0u);
}

TEST_F(Rearrange, SliceConcatOtherDim) {
  leaf("a", {4, 6});
  leaf("b", {2, 6});
  eg::Id s = term("(slice[1, 1, 5, 2] (concat[0] ?a ?b))");
  run({"slice-concat-other-dim"});
  EXPECT_TRUE(equiv(s, "(concat[0] (slice[1, 1, 5, 2] ?a) (slice[1, 1, 5, 2] ?b))"));
}

TEST_F(Rearrange, ConcatSingle) {
  leaf("a", {4, 6});
  eg::Id c = term("(concat[1] ?a)");
  run({"concat-single"});
  EXPECT_EQ(g.find(c), g.find(vars.cls("a")));
}

TEST_F(Rearrange, ConcatFlatten) {
  leaf("a", {1, 2});
  leaf("b", {2, 2});
  leaf("c", {3, 2});
  eg::Id c = term("(concat[0] ?a (concat[0] ?b ?c) ?a)");
  eg::Id other = term("(concat[1] ?b (concat[0] ?a ?a))");
  run({"concat-flatten"});
  EXPECT_TRUE(equiv(c, "(concat[0] ?a ?b ?c ?a)"));
  EXPECT_FALSE(equiv(other, "(concat[1] ?b ?a ?a)"));  // different dims do not flatten
}

TEST_F(Rearrange, ConcatAdjacentSlices) {
  leaf("x", {10, 2});
  leaf("y", {3, 2});
  eg::Id c = term("(concat[0] ?y (slice[0, 2, 5, 1] ?x) (slice[0, 5, 7, 1] ?x) (slice[0, 7, 8, 1] ?x))");
  eg::Id whole = term("(concat[0] (slice[0, 0, 4, 1] ?x) (slice[0, 4, 10, 1] ?x))");
  eg::Id gap = term("(concat[0] (slice[0, 0, 4, 1] ?x) (slice[0, 5, 10, 1] ?x))");
  run({"concat-adjacent-slices", "concat-single"});
  EXPECT_TRUE(equiv(c, "(concat[0] ?y (slice[0, 2, 8, 1] ?x))"));
  EXPECT_EQ(g.find(whole), g.find(vars.cls("x")));
  EXPECT_FALSE(equiv(gap, "(slice[0, 0, 10, 1] ?x)"));
  EXPECT_NE(g.find(gap), g.find(vars.cls("x")));
}

TEST_F(Rearrange, SlicesTileWhole) {
  leaf("x", {8, 2});
  eg::Id s0 = term("(slice[0, 0, 3, 1] ?x)");
  eg::Id s1 = term("(slice[0, 3, 8, 1] ?x)");
  run({"slices-tile-whole"});
  (void)s0;
  (void)s1;
  EXPECT_TRUE(equiv(vars.cls("x"), "(concat[0] (slice[0, 0, 3, 1] ?x) (slice[0, 3, 8, 1] ?x))"));
}

TEST_F(Rearrange, SlicesWithAGapDoNotTile) {
  leaf("x", {8, 2});
  term("(slice[0, 0, 3, 1] ?x)");
  term("(slice[0, 4, 8, 1] ?x)");
  term("(slice[1, 0, 1, 1] ?x)");
  size_t before = g.numClasses();
  run({"slices-tile-whole"});
  EXPECT_EQ(g.numClasses(), before);
}

TEST_F(Rearrange, TransposeConcat) {
  leaf("a", {2, 5, 3});
  leaf("b", {4, 5, 3});
  eg::Id t = term("(transpose[0, 2] (concat[0] ?a ?b))");
  eg::Id u = term("(transpose[1, 2] (concat[0] ?a ?b))");
  run({"transpose-concat"});
  EXPECT_TRUE(equiv(t, "(concat[2] (transpose[0, 2] ?a) (transpose[0, 2] ?b))"));
  EXPECT_TRUE(equiv(u, "(concat[0] (transpose[1, 2] ?a) (transpose[1, 2] ?b))"));
}

TEST_F(Rearrange, PermuteConcat) {
  leaf("a", {2, 5, 3});
  leaf("b", {2, 1, 3});
  eg::Id p = term("(permute[[2, 1, 0]] (concat[1] ?a ?b))");
  eg::Id q = term("(permute[[1, 2, 0]] (concat[1] ?a ?b))");
  run({"permute-concat"});
  EXPECT_TRUE(equiv(p, "(concat[1] (permute[[2, 1, 0]] ?a) (permute[[2, 1, 0]] ?b))"));
  EXPECT_TRUE(equiv(q, "(concat[0] (permute[[1, 2, 0]] ?a) (permute[[1, 2, 0]] ?b))"));
}

TEST_F(Rearrange, TransposeSlice) {
  leaf("x", {6, 4});
  eg::Id t = term("(transpose[0, 1] (slice[0, 1, 3, 1] ?x))");
  run({"transpose-slice"});
  EXPECT_TRUE(equiv(t, "(slice[1, 1, 3, 1] (transpose[0, 1] ?x))"));
}

TEST_F(Rearrange, PermuteSlice) {
  leaf("x", {6, 4, 2});
  eg::Id p = term("(permute[[2, 0, 1]] (slice[1, 1, 3, 1] ?x))");
  run({"permute-slice"});
  EXPECT_TRUE(equiv(p, "(slice[2, 1, 3, 1] (permute[[2, 0, 1]] ?x))"));
}

TEST_F(Rearrange, TransposeSameDim) {
  leaf("x", {6, 4});
  eg::Id t = term("(transpose[1, 1] ?x)");
  run({"transpose-same-dim"});
  EXPECT_EQ(g.find(t), g.find(vars.cls("x")));
}

TEST_F(Rearrange, PermuteIdentity) {
  leaf("x", {6, 4, 2});
  eg::Id p = term("(permute[[0, 1, 2]] ?x)");
  eg::Id q = term("(permute[[0, 2, 1]] ?x)");
  run({"permute-identity"});
  EXPECT_EQ(g.find(p), g.find(vars.cls("x")));
  EXPECT_NE(g.find(q), g.find(vars.cls("x")));
}

TEST_F(Rearrange, TransposeTranspose) {
  leaf("x", {2, 3, 4});
  eg::Id same = term("(transpose[0, 1] (transpose[0, 1] ?x))");
  eg::Id other = term("(transpose[0, 1] (transpose[1, 2] ?x))");
  run({"transpose-transpose"});
  EXPECT_EQ(g.find(same), g.find(vars.cls("x")));
  // out dim i = inner dim p[i]: inner = x with dims 1,2 swapped = [x0, x2, x1]; swap 0,1 -> [x2, x0, x1]
  EXPECT_TRUE(equiv(other, "(permute[[2, 0, 1]] ?x)"));
  EXPECT_EQ(type(other)->shape, (std::vector<Dim>{4, 2, 3}));
}

TEST_F(Rearrange, PermutePermute) {
  leaf("x", {2, 3, 4});
  eg::Id back = term("(permute[[1, 2, 0]] (permute[[2, 0, 1]] ?x))");
  eg::Id pp = term("(permute[[1, 0, 2]] (permute[[2, 0, 1]] ?x))");
  run({"permute-permute"});
  EXPECT_EQ(g.find(back), g.find(vars.cls("x")));
  EXPECT_TRUE(equiv(pp, "(permute[[0, 2, 1]] ?x)"));
}

TEST_F(Rearrange, PermuteTransposeAndTransposePermute) {
  leaf("x", {2, 3, 4});
  eg::Id a = term("(permute[[2, 0, 1]] (transpose[0, 2] ?x))");  // inner [x2, x1, x0] -> [x0, x2, x1]
  eg::Id b = term("(transpose[0, 2] (permute[[2, 0, 1]] ?x))");  // inner [x2, x0, x1] -> [x1, x0, x2]
  eg::Id c = term("(transpose[0, 1] (permute[[1, 0, 2]] ?x))");
  run({"permute-transpose", "transpose-permute"});
  EXPECT_TRUE(equiv(a, "(permute[[0, 2, 1]] ?x)"));
  EXPECT_TRUE(equiv(b, "(permute[[1, 0, 2]] ?x)"));
  EXPECT_EQ(g.find(c), g.find(vars.cls("x")));
}

TEST_F(Rearrange, ReshapeReshapeAndSame) {
  leaf("x", {2, 3, 4});
  eg::Id rr = term("(reshape[[24]] (reshape[[6, 4]] ?x))");
  eg::Id back = term("(reshape[[2, 3, 4]] (reshape[[6, 4]] ?x))");
  run({"reshape-reshape", "reshape-same-shape"});
  EXPECT_TRUE(equiv(rr, "(reshape[[24]] ?x)"));
  EXPECT_EQ(g.find(back), g.find(vars.cls("x")));
}

TEST_F(Rearrange, ReshapeConcatKeepingTheDim) {
  // [2, 6, 4] concat on 1 -> [2, 6, 2, 2]: only trailing dims split
  leaf("a", {2, 2, 4});
  leaf("b", {2, 4, 4});
  eg::Id r = term("(reshape[[2, 6, 2, 2]] (concat[1] ?a ?b))");
  run({"reshape-concat"});
  EXPECT_TRUE(equiv(r, "(concat[1] (reshape[[2, 2, 2, 2]] ?a) (reshape[[2, 4, 2, 2]] ?b))"));
}

TEST_F(Rearrange, ReshapeConcatMergingTrailing) {
  // [6, 4] concat on 0 -> [24]: the concat dim merges with trailing dims (no leading dims)
  leaf("a", {2, 4});
  leaf("b", {4, 4});
  eg::Id r = term("(reshape[[24]] (concat[0] ?a ?b))");
  // [2, 6, 4] concat on 1 -> [2, 24]
  leaf("c", {2, 2, 4});
  leaf("d", {2, 4, 4});
  eg::Id s = term("(reshape[[2, 24]] (concat[1] ?c ?d))");
  // [12] concat on 0 -> [2, 6]: splitting the concat dim, pieces aligned to rows of 6
  leaf("e", {6});
  leaf("f", {6});
  eg::Id t = term("(reshape[[2, 6]] (concat[0] ?e ?f))");
  run({"reshape-concat"});
  EXPECT_TRUE(equiv(r, "(concat[0] (reshape[[8]] ?a) (reshape[[16]] ?b))"));
  EXPECT_TRUE(equiv(s, "(concat[1] (reshape[[2, 8]] ?c) (reshape[[2, 16]] ?d))"));
  EXPECT_TRUE(equiv(t, "(concat[0] (reshape[[1, 6]] ?e) (reshape[[1, 6]] ?f))"));
}

TEST_F(Rearrange, ReshapeConcatRefusesWhenPiecesInterleave) {
  // [4, 6] concat on 1 (3 + 3) -> [24]: pieces interleave in memory
  leaf("a", {4, 3});
  leaf("b", {4, 3});
  term("(reshape[[24]] (concat[1] ?a ?b))");
  // [12] concat on 0 (4 + 8) -> [2, 6]: a piece boundary inside a row
  leaf("e", {4});
  leaf("f", {8});
  term("(reshape[[2, 6]] (concat[0] ?e ?f))");
  // [2, 6] concat on 0 (1 + 1) -> [3, 4]: leading products differ
  leaf("c", {1, 6});
  leaf("d", {1, 6});
  term("(reshape[[3, 4]] (concat[0] ?c ?d))");
  auto r = run({"reshape-concat"});
  EXPECT_EQ(r.firings["reshape-concat"], 0u);
}

TEST_F(Rearrange, IllKindedAttributesNeverThrow) {
  eg::Id a = leaf("a", {2, 3});
  eg::Id b = leaf("b", {2, 3});
  eg::ENode c;  // concat with a float dim, added unchecked
  c.op = eg::intern("concat");
  c.attrs = eg::internAttrs({eg::Attr::real(0)});
  c.children = {a, b};
  eg::Id cid = g.add(c);
  eg::ENode s;
  s.op = eg::intern("slice");
  s.attrs = eg::internAttrs({eg::Attr::real(0), eg::Attr::integer(0), eg::Attr::integer(2), eg::Attr::integer(1)});
  s.children = {cid};
  g.add(s);
  eg::RunLimits limits;
  limits.maxIterations = 3;
  EXPECT_NO_THROW(eg::run(g, allLemmas(), limits));
}

TEST_F(Rearrange, SliceOfExpandNarrowsTheBroadcast) {
  leaf("y", {4, 1, 8});
  eg::Id s = term("(slice[1, 2, 5, 1] (expand[[4, 6, 8]] ?y))");
  eg::Id kept = term("(slice[2, 0, 4, 1] (expand[[4, 6, 8]] ?y))");
  run({"slice-expand"});
  EXPECT_TRUE(equiv(s, "(expand[[4, 3, 8]] ?y)"));
  EXPECT_TRUE(equiv(kept, "(expand[[4, 6, 4]] (slice[2, 0, 4, 1] ?y))"));  // not broadcast: slice y itself
}

TEST_F(Rearrange, ExpandOfConcatAlongAKeptDim) {
  leaf("a", {2, 1, 3});
  leaf("b", {5, 1, 3});
  eg::Id e = term("(expand[[7, 4, 3]] (concat[0] ?a ?b))");
  run({"expand-concat"});
  EXPECT_TRUE(equiv(e, "(concat[0] (expand[[2, 4, 3]] ?a) (expand[[5, 4, 3]] ?b))"));
  leaf("c", {1, 1, 3});
  leaf("d", {1, 1, 3});
  eg::Id f = term("(expand[[2, 2, 3]] (concat[1] ?c ?d))");  // dim 0 broadcast, the concat dim kept
  run({"expand-concat"});
  EXPECT_TRUE(equiv(f, "(concat[1] (expand[[2, 1, 3]] ?c) (expand[[2, 1, 3]] ?d))"));
}

// concat-regroup over many pieces: runs that are implementation tensors become those tensors,
// the longest from each position; a concat that holds no implementation tensor is not a group.
TEST_F(Rearrange, ConcatRegroupsLongRunsIntoImplementationTensors) {
  for (int i = 0; i < 8; ++i) leaf("p" + std::to_string(i), {2, 3});
  auto implLeaf = [&](const std::string& name, std::vector<Dim> shape) {  // owned by rank 0: clean
    eg::ClassData d;
    d.types.push_back(TensorType{DType::F32, std::move(shape)});
    return vars.classes[name] = g.leaf("D0." + name, Owner::impl(0), d);
  };
  g.merge(implLeaf("y", {8, 3}), term("(concat[0] ?p2 ?p3 ?p4 ?p5)"));
  g.merge(implLeaf("short", {4, 3}), term("(concat[0] ?p2 ?p3)"));  // a shorter run from p2: not the longest
  g.merge(implLeaf("w", {4, 3}), term("(concat[0] ?p6 ?p7)"));
  eg::Id notImpl = term("(concat[0] ?p0 ?p1)");                // no implementation tensor in its class
  g.rebuild();
  eg::Id root = term("(concat[0] ?p0 ?p1 ?p2 ?p3 ?p4 ?p5 ?p6 ?p7)");
  auto r = run({"concat-regroup"}, 1);
  EXPECT_GT(r.firings["concat-regroup"], 0u);
  EXPECT_TRUE(equiv(root, "(concat[0] ?p0 ?p1 ?y ?w)"));
  EXPECT_FALSE(equiv(root, "(concat[0] ?p0 ?p1 ?short ?p4 ?p5 ?w)"));
  EXPECT_NE(g.find(notImpl), g.find(root));
}

}  // namespace
}  // namespace tangle::lemmas::testing
