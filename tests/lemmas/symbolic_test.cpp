// Lemma guards over symbolic sizes: they fire when the size facts prove their
// condition and refuse otherwise (a symbolic bound is never read as a number).
#include "lemma_fixture.h"
#include "ops/shape.h"
#include "sym/context.h"

namespace tangle::lemmas::testing {
namespace {

class SymbolicLemma : public LemmaTest {
 protected:
  sym::Context& ctx = symbols;
  sym::ExprId n = sym::var("T.n");
  Dim N = *sym::toDim(n);
  Dim H = *sym::toDim(*sym::floorDiv(n, 2));             // n // 2
  Dim H2 = *sym::toDim(sym::mul(sym::constant(2), sym::fromDim(H)));  // 2 * (n // 2)

  void SetUp() override { ctx.noteSize(n); }
  void assumeEven() { ASSERT_TRUE(ctx.assumeEqual(*sym::mod(n, 2), sym::constant(0), nullptr)); }
  // Binds ?name to a size attribute (Int or SymDim).
  void size(const std::string& name, Dim d) { vars.attrs[name] = eg::Attr::dim(d); }
};

TEST_F(SymbolicLemma, SliceFullNeedsTheEndToBeProvablyTheSize) {
  leaf("x", {N, 4});
  size("e", H2);
  eg::Id s = term("(slice[0, 0, ?e, 1] ?x)");
  run({"slice-full"});
  EXPECT_NE(g.find(s), g.find(vars.cls("x")));  // 2*(n//2) = n only for even n
}

TEST_F(SymbolicLemma, SliceFullFiresUnderAnEvenSize) {
  assumeEven();
  leaf("x", {N, 4});
  size("e", H2);
  eg::Id s = term("(slice[0, 0, ?e, 1] ?x)");
  run({"slice-full"});
  EXPECT_EQ(g.find(s), g.find(vars.cls("x")));
}

TEST_F(SymbolicLemma, AdjacentSymbolicSlicesMerge) {
  leaf("x", {N, 4});
  size("h", H);
  size("h2", H2);
  eg::Id c = term("(concat[0] (slice[0, 0, ?h, 1] ?x) (slice[0, ?h, ?h2, 1] ?x))");
  run({"concat-adjacent-slices"});
  EXPECT_TRUE(equiv(c, "(slice[0, 0, ?h2, 1] ?x)"));
  const TensorType* t = type(c);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->shape[0], H2);
}

TEST_F(SymbolicLemma, SliceOfASliceAddsBoundsWhenProvablyInside) {
  leaf("x", {N, 4});
  size("h", H);
  size("h2", H2);
  size("n", N);
  // slice[0, 0, h](slice[0, h, n](x)) = slice[0, h, 2h](x) needs 2h <= n: true for every n.
  eg::Id s = term("(slice[0, 0, ?h, 1] (slice[0, ?h, ?n, 1] ?x))");
  run({"slice-slice"});
  EXPECT_TRUE(equiv(s, "(slice[0, ?h, ?h2, 1] ?x)"));
}

TEST_F(SymbolicLemma, SliceOfConcatAtAPieceBoundary) {
  sym::ExprId m = sym::var("T.m");
  ctx.noteSize(m);
  Dim M = *sym::toDim(m);
  leaf("a", {N, 3});
  leaf("b", {M, 3});
  size("n", N);
  size("nm", *sym::toDim(sym::add(n, m)));
  eg::Id second = term("(slice[0, ?n, ?nm, 1] (concat[0] ?a ?b))");
  eg::Id first = term("(slice[0, 0, ?n, 1] (concat[0] ?a ?b))");
  run({"slice-concat"});
  EXPECT_EQ(g.find(second), g.find(vars.cls("b")));
  EXPECT_EQ(g.find(first), g.find(vars.cls("a")));
}

TEST_F(SymbolicLemma, ProductsDistributeOverSymbolicRowBlocks) {
  sym::ExprId m = sym::var("T.m");
  ctx.noteSize(m);
  leaf("a", {N, 8});
  leaf("b", {*sym::toDim(m), 8});
  leaf("w", {8, 4});
  eg::Id p = term("(relu (mm (concat[0] ?a ?b) ?w))");
  run({"mm-concat-rows", "relu-concat"});
  EXPECT_TRUE(equiv(p, "(concat[0] (relu (mm ?a ?w)) (relu (mm ?b ?w)))"));
}

TEST_F(SymbolicLemma, ReshapeOfConcatWithASymbolicLeadingDim) {
  // [n, 8] pieces of heads x head_dim, concatenated along dim 1, viewed as [n, 4, 4].
  leaf("a", {N, 8});
  leaf("b", {N, 8});
  vars.attrs["s"] = eg::Attr::ints({N, 4, 4});
  vars.attrs["p"] = eg::Attr::ints({N, 2, 4});
  eg::Id r = term("(reshape[?s] (concat[1] ?a ?b))");
  run({"reshape-concat"});
  EXPECT_TRUE(equiv(r, "(concat[1] (reshape[?p] ?a) (reshape[?p] ?b))"));
}

TEST_F(SymbolicLemma, IllTypedSymbolicSlicesAreRefused) {
  leaf("x", {N, 4});
  size("h", H);
  size("n1", *sym::toDim(sym::add(n, sym::constant(1))));
  EXPECT_FALSE(tryTerm("(slice[0, ?h, ?n1, 1] ?x)"));  // past the end
  EXPECT_FALSE(tryTerm("(slice[0, ?h, 0, 1] ?x)"));    // end before start (h may be > 0)
}

TEST_F(SymbolicLemma, IntegerReadersNeverSeeASymbolicBound) {
  eg::AttrList a = {eg::Attr::integer(0), eg::Attr::dim(H), eg::Attr::dim(3), eg::Attr::integer(1)};
  EXPECT_EQ(ops::attrInt(a, 1), std::nullopt);
  EXPECT_EQ(ops::attrDim(a, 1), H);
  EXPECT_EQ(ops::attrInt(a, 2), 3);  // a concrete size stays an Int
  EXPECT_EQ(a[1].toString(), "(T.n//2)");
}

}  // namespace
}  // namespace tangle::lemmas::testing
