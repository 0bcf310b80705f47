// Lemmas of layer norm, softmax, reductions and split; and the table itself.
#include "lemma_fixture.h"

#include <set>

namespace tangle::lemmas::testing {
namespace {

using Norm = LemmaTest;

TEST_F(Norm, LayerNormOverLeadingConcat) {
  leaf("a", {2, 3, 8});
  leaf("b", {4, 3, 8});
  leaf("w", {8});
  leaf("bias", {8});
  for (int k = 0; k < 3; ++k) {
    std::string ln = "(native_layer_norm[[8], 1e-5] ";
    eg::Id out = term("(getitem[" + std::to_string(k) + "] " + ln + "(concat[0] ?a ?b) ?w ?bias))");
    run({"layernorm-concat"});
    EXPECT_TRUE(equiv(out, "(concat[0] (getitem[" + std::to_string(k) + "] " + ln + "?a ?w ?bias)) (getitem[" +
                               std::to_string(k) + "] " + ln + "?b ?w ?bias)))"))
        << "output " << k;
  }
}

TEST_F(Norm, LayerNormRefusesConcatInsideNormalizedDims) {
  leaf("a", {2, 3, 4});
  leaf("b", {2, 3, 4});
  leaf("w", {3, 8});
  leaf("bias", {3, 8});
  leaf("w2", {8});
  leaf("b2", {8});
  term("(getitem[0] (native_layer_norm[[8], 1e-5] (concat[2] ?a ?b) ?w2 ?b2))");        // the normalized dim
  term("(getitem[0] (native_layer_norm[[3, 8], 1e-5] (concat[2] ?a ?b) ?w ?bias))");   // inside [3, 8]
  auto r = run({"layernorm-concat"});
  EXPECT_EQ(r.firings["layernorm-concat"], 0u);
}

TEST_F(Norm, ApexLayerNormOverConcat) {
  leaf("a", {2, 3, 8});
  leaf("b", {4, 3, 8});
  leaf("c", {2, 1, 8});
  leaf("d", {2, 2, 8});
  leaf("w", {8});
  leaf("bias", {8});
  const std::string ln = "(apex_layer_norm[[8], 1e-5] ";
  eg::Id out0 = term("(getitem[0] " + ln + "(concat[0] ?a ?b) ?w ?bias))");
  eg::Id mean0 = term("(getitem[1] " + ln + "(concat[0] ?a ?b) ?w ?bias))");
  eg::Id out1 = term("(getitem[0] " + ln + "(concat[1] ?c ?d) ?w ?bias))");
  eg::Id mean1 = term("(getitem[1] " + ln + "(concat[1] ?c ?d) ?w ?bias))");
  EXPECT_EQ(type(mean0)->shape, (std::vector<Dim>{18}));
  run({"apex-layernorm-concat"});
  EXPECT_TRUE(equiv(out0, "(concat[0] (getitem[0] " + ln + "?a ?w ?bias)) (getitem[0] " + ln + "?b ?w ?bias)))"));
  EXPECT_TRUE(equiv(mean0, "(concat[0] (getitem[1] " + ln + "?a ?w ?bias)) (getitem[1] " + ln + "?b ?w ?bias)))"));
  EXPECT_TRUE(equiv(out1, "(concat[1] (getitem[0] " + ln + "?c ?w ?bias)) (getitem[0] " + ln + "?d ?w ?bias)))"));
  // The flattened statistics of a concat on dim 1 interleave: no rewrite.
  EXPECT_EQ(g.eclass(mean1).nodes.size(), 1u);
}

TEST_F(Norm, SoftmaxOverConcatOnAnotherDim) {
  leaf("a", {2, 5});
  leaf("b", {3, 5});
  eg::Id s = term("(softmax[1, false] (concat[0] ?a ?b))");
  eg::Id same = term("(softmax[0, false] (concat[0] ?a ?b))");
  run({"softmax-concat"});
  EXPECT_TRUE(equiv(s, "(concat[0] (softmax[1, false] ?a) (softmax[1, false] ?b))"));
  EXPECT_EQ(g.eclass(same).nodes.size(), 1u);
}

TEST_F(Norm, SumDimOverConcat) {
  leaf("a", {2, 3, 4});
  leaf("b", {5, 3, 4});
  eg::Id kept = term("(sum_dim[[1], false] (concat[0] ?a ?b))");
  eg::Id shifted = term("(sum_dim[[0], false] (concat[2] (transpose[0, 2] ?a) (transpose[0, 2] ?b)))");
  eg::Id reduced = term("(sum_dim[[0, 2], true] (concat[0] ?a ?b))");
  run({"sum_dim-concat"});
  EXPECT_TRUE(equiv(kept, "(concat[0] (sum_dim[[1], false] ?a) (sum_dim[[1], false] ?b))"));
  EXPECT_TRUE(equiv(shifted, "(concat[1] (sum_dim[[0], false] (transpose[0, 2] ?a)) (sum_dim[[0], false] (transpose[0, 2] ?b)))"));
  EXPECT_TRUE(equiv(reduced, "(sum (sum_dim[[0, 2], true] ?a) (sum_dim[[0, 2], true] ?b))"));
}

TEST_F(Norm, MeanAndAmaxOnlyOverKeptDims) {
  leaf("a", {2, 3});
  leaf("b", {5, 3});
  eg::Id mk = term("(mean_dim[[1], true] (concat[0] ?a ?b))");
  eg::Id ak = term("(amax[[1], false] (concat[0] ?a ?b))");
  eg::Id mr = term("(mean_dim[[0], false] (concat[0] ?a ?b))");
  eg::Id ar = term("(amax[[], false] (concat[0] ?a ?b))");
  run({"mean_dim-concat", "amax-concat"});
  EXPECT_TRUE(equiv(mk, "(concat[0] (mean_dim[[1], true] ?a) (mean_dim[[1], true] ?b))"));
  EXPECT_TRUE(equiv(ak, "(concat[0] (amax[[1], false] ?a) (amax[[1], false] ?b))"));
  EXPECT_EQ(g.eclass(mr).nodes.size(), 1u);  // mean over the concat dim is not a sum of means
  EXPECT_EQ(g.eclass(ar).nodes.size(), 1u);
}

TEST_F(Norm, ReductionsOverSum) {
  leaf("a", {2, 3});
  leaf("b", {2, 3});
  eg::Id s = term("(sum_dim[[0], false] (sum ?a ?b))");
  eg::Id m = term("(mean_dim[[1], true] (sum ?a ?b))");
  eg::Id x = term("(amax[[1], true] (sum ?a ?b))");
  run({"sum_dim-sum", "mean_dim-sum"});
  EXPECT_TRUE(equiv(s, "(sum (sum_dim[[0], false] ?a) (sum_dim[[0], false] ?b))"));
  EXPECT_TRUE(equiv(m, "(sum (mean_dim[[1], true] ?a) (mean_dim[[1], true] ?b))"));
  EXPECT_EQ(g.eclass(x).nodes.size(), 1u);
}

TEST_F(Norm, GetitemOfSplit) {
  leaf("x", {4, 9});
  eg::Id s1 = term("(getitem[1] (split[1, [2, 3, 4]] ?x))");
  eg::Id s2 = term("(getitem[2] (split[1, [2, 3, 4]] ?x))");
  run({"getitem-split"});
  EXPECT_TRUE(equiv(s1, "(slice[1, 2, 5, 1] ?x)"));
  EXPECT_TRUE(equiv(s2, "(slice[1, 5, 9, 1] ?x)"));
}

TEST(LemmaTable, NamesAreUniqueAndDocumented) {
  std::set<std::string> names;
  for (const Lemma& l : lemmaTable()) {
    EXPECT_TRUE(names.insert(l.rule.name).second) << l.rule.name;
    EXPECT_FALSE(l.doc.empty()) << l.rule.name;
    EXPECT_NE(l.rule.rhs.has_value(), static_cast<bool>(l.rule.apply)) << l.rule.name;
  }
  EXPECT_EQ(allLemmas().size(), lemmaTable().size());
  EXPECT_GT(lemmaTable().size(), 100u);
  EXPECT_THROW(lemmasNamed({"no-such-lemma"}), std::invalid_argument);
}

// All lemmas together on a TP-style MLP: S.x replicated, S.w1 column-sharded,
// S.w2 row-sharded; the spec output must equal the sum of the rank outputs.
TEST_F(Norm, AllLemmasOnTensorParallelMlp) {
  leaf("x", {4, 8});
  leaf("w1a", {8, 6});
  leaf("w1b", {8, 6});
  leaf("w2a", {6, 8});
  leaf("w2b", {6, 8});
  eg::Id spec = term("(mm (gelu[\"none\"] (mm ?x (concat[1] ?w1a ?w1b))) (concat[0] ?w2a ?w2b))");
  eg::RunLimits limits;
  limits.maxIterations = 8;
  limits.maxSeconds = 5;
  eg::run(g, allLemmas(), limits);
  EXPECT_TRUE(g.conflicts().empty());
  EXPECT_TRUE(equiv(spec, "(sum (mm (gelu[\"none\"] (mm ?x ?w1a)) ?w2a) (mm (gelu[\"none\"] (mm ?x ?w1b)) ?w2b))"));
}

}  // namespace
}  // namespace tangle::lemmas::testing
