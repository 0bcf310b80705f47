// The LGraph evaluator, relation inversion and output replay (src/replay).
#include "../fx_text.h"
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "import/fx_importer.h"
#include "replay/class_sizes.h"
#include "replay/dim_classes.h"
#include "replay/inputs.h"
#include "replay/lgraph_eval.h"
#include "replay/reduce.h"
#include "replay/replay.h"
#include "replay/size_roles.h"
#include "replay/term_eval.h"

namespace tangle::replay {
namespace {

Graph fx(const std::string& params, const std::string& body, const std::string& file) {
  std::string text = testing::fxModuleText(params, body);
  return importFxText(text, file);
}

interp::Value val(interp::Shape shape, std::vector<double> data) {
  return interp::Value::of(interp::Tensor::of(std::move(shape), std::move(data)));
}

int id(const LGraph& lg, const std::string& name) {
  auto i = lg.find(name);
  EXPECT_TRUE(i.has_value()) << name;
  return lg.resolve(i.value_or(0));
}

// A spec and a 2-rank implementation built from FX bodies, with a relation file.
struct Case {
  Graph spec;
  std::vector<Graph> ranks;
  LGraph specL, implL;
  RelationFile rel;
  sym::Context symbols;
  Case(const std::string& specParams, const std::string& specBody, const std::string& implParams,
        const std::string& implBody, const std::string& relText) {
    spec = fx(specParams, specBody, "spec.py");
    for (int r = 0; r < 2; ++r) ranks.push_back(fx(implParams, implBody, "impl.r" + std::to_string(r) + ".py"));
    specL = lowerSpec(spec, {}, symbols);
    implL = lowerImpl(ranks, {}, symbols);
    rel = parseRelationText(relText, "check.rel").expand(2);
  }
  const interp::Tensor& implInput(const InputValues& v, const std::string& name) {
    return *v.impl.at(id(implL, name)).tensor();
  }
  const interp::Tensor& specInput(const InputValues& v, const std::string& name) {
    return *v.spec.at(id(specL, name)).tensor();
  }
};

TEST(LGraphEval, AllReduceReadsTheOtherRanksInputs) {
  sym::Context symbols;
  std::vector<Graph> g;
  for (int r = 0; r < 2; ++r)
    g.push_back(fx("x: \"f32[2]\"",
                   "y: \"f32[2]\" = torch.ops.aten.mul.Tensor(x, 2)\n"
                   "a: \"f32[2]\" = torch.ops._c10d_functional.all_reduce.default(y, 'sum', '0')\n"
                   "w: \"f32[2]\" = torch.ops._c10d_functional.wait_tensor.default(a)\n"
                   "return (w,)",
                   "r" + std::to_string(r) + ".py"));
  LGraph lg = lowerImpl(g, {}, symbols);
  LGraphEvaluator ev(lg);
  ev.set(id(lg, "D0.x"), val({2}, {1, 2}));
  ev.set(id(lg, "D1.x"), val({2}, {10, 20}));
  const interp::Value* w = ev.value(id(lg, "D0.w"));
  ASSERT_NE(w, nullptr) << ev.failure()->reason;
  EXPECT_EQ(w->tensor()->data, (std::vector<double>{22, 44}));
  EXPECT_NE(ev.known(id(lg, "D1.y")), nullptr);  // computed on demand for rank 0's sum
}

TEST(LGraphEval, OpWithoutSemanticsIsNamedWithItsLocation) {
  sym::Context symbols;
  Graph g = fx("x: \"f32[3]\"",
               "c: \"f32[3]\" = torch.ops.aten.logcumsumexp.default(x, 0)\n"
               "n: \"f32[3]\" = torch.ops.aten.neg.default(c)\n"
               "return (n,)",
               "spec.py");
  LGraph lg = lowerSpec(g, {}, symbols);
  LGraphEvaluator ev(lg);
  ev.set(id(lg, "S.x"), val({3}, {1, 2, 3}));
  EXPECT_EQ(ev.value(id(lg, "S.n")), nullptr);
  ASSERT_TRUE(ev.failure());
  EXPECT_EQ(ev.failure()->op, "aten.logcumsumexp.default");
  EXPECT_EQ(ev.failure()->where, "spec.py:5");
}

TEST(LGraphEval, MissingInputAndAnnotationMismatchFail) {
  sym::Context symbols;
  Graph g = fx("x: \"f32[3]\"",
               "n: \"f32[4]\" = torch.ops.aten.neg.default(x)\n"
               "return (n,)",
               "spec.py");
  LGraph lg = lowerSpec(g, {}, symbols);
  LGraphEvaluator ev(lg);
  EXPECT_EQ(ev.value(id(lg, "S.n")), nullptr);
  EXPECT_NE(ev.failure()->reason.find("no value for input S.x"), std::string::npos);
  ev.set(id(lg, "S.x"), val({3}, {1, 2, 3}));
  EXPECT_EQ(ev.value(id(lg, "S.n")), nullptr);
  EXPECT_NE(ev.failure()->reason.find("differs from the annotated f32[4]"), std::string::npos);
}

const char* kMmBody = "mm: \"f32[4, 6]\" = torch.ops.aten.mm.default(A, B)\nreturn (mm,)";

TEST(Inputs, ConcatAndReplicationAreInverted) {
  Case s("A: \"f32[4, 8]\", B: \"f32[8, 6]\"", kMmBody, "A: \"f32[2, 8]\", B: \"f32[8, 6]\"",
          "mm: \"f32[2, 6]\" = torch.ops.aten.mm.default(A, B)\nreturn (mm,)",
          "S.A = shard(D*.A, dim=0)\nS.B = D*.B\n");
  InputValues v = drawInputs(s.specL, s.implL, s.rel, 7);
  ASSERT_FALSE(v.error) << *v.error;
  const auto& A = s.specInput(v, "S.A");
  const auto& A1 = s.implInput(v, "D1.A");
  ASSERT_EQ(A1.shape, (interp::Shape{2, 8}));
  EXPECT_TRUE(std::equal(A1.data.begin(), A1.data.end(), A.data.begin() + 16));  // rows 2..3
  EXPECT_EQ(s.implInput(v, "D0.B"), s.specInput(v, "S.B"));
  EXPECT_EQ(s.implInput(v, "D1.B"), s.specInput(v, "S.B"));
  EXPECT_TRUE(v.notes.empty());
  // Different seeds give different values.
  EXPECT_NE(drawInputs(s.specL, s.implL, s.rel, 8).spec.at(id(s.specL, "S.A")).tensor()->data, A.data);
}

TEST(Inputs, SumIsSplitRandomlyAndTransposeInverted) {
  Case s("P: \"f32[2, 3]\", T: \"f32[3, 2]\"", "y: \"f32[2, 3]\" = torch.ops.aten.add.Tensor(P, P)\nreturn (y,)",
          "P: \"f32[2, 3]\", T: \"f32[2, 3]\"", "y: \"f32[2, 3]\" = torch.ops.aten.add.Tensor(P, P)\nreturn (y,)",
          "S.P = sum(D*.P)\nS.T = transpose(D0.T, 0, 1)\n");
  InputValues v = drawInputs(s.specL, s.implL, s.rel, 3);
  ASSERT_FALSE(v.error) << *v.error;
  const auto& P = s.specInput(v, "S.P");
  const auto& P0 = s.implInput(v, "D0.P");
  const auto& P1 = s.implInput(v, "D1.P");
  for (size_t i = 0; i < P.data.size(); ++i) EXPECT_NEAR(P0.data[i] + P1.data[i], P.data[i], 1e-12);
  EXPECT_NE(P0.data, P.data);  // a real split, not (S, 0)
  const auto& T = s.specInput(v, "S.T");
  const auto& T0 = s.implInput(v, "D0.T");
  EXPECT_EQ(T0.data[0 * 3 + 2], T.data[2 * 2 + 0]);  // T0[0][2] = T[2][0]
  EXPECT_EQ(T0.data[1 * 3 + 0], T.data[0 * 2 + 1]);
}

TEST(Inputs, SliceLeavesTheRestZeroAndSaysSo) {
  Case s("Y: \"f32[2, 3]\"", "n: \"f32[2, 3]\" = torch.ops.aten.neg.default(Y)\nreturn (n,)", "Y: \"f32[4, 3]\"",
          "n: \"f32[4, 3]\" = torch.ops.aten.neg.default(Y)\nreturn (n,)",
          "S.Y = slice(D0.Y, dim=0, start=1, end=3)\nS.Y = slice(D1.Y, dim=0, start=1, end=3)\n");
  InputValues v = drawInputs(s.specL, s.implL, s.rel, 1);
  ASSERT_FALSE(v.error) << *v.error;
  const auto& Y = s.specInput(v, "S.Y");
  const auto& Y0 = s.implInput(v, "D0.Y");
  EXPECT_EQ(Y0.data[0], 0);
  EXPECT_EQ(Y0.data[3], Y.data[0]);
  EXPECT_EQ(Y0.data[9], 0);
  ASSERT_EQ(v.notes.size(), 2u);
  EXPECT_NE(v.notes[0].find("6 of 12 elements constrained by no relation"), std::string::npos);
}

TEST(Inputs, ConflictingRelationsAreReported) {
  Case s("a: \"f32[2]\", b: \"f32[2]\"", "y: \"f32[2]\" = torch.ops.aten.add.Tensor(a, b)\nreturn (y,)",
          "z: \"f32[2]\"", "y: \"f32[2]\" = torch.ops.aten.add.Tensor(z, z)\nreturn (y,)", "S.a = D0.z\nS.b = D0.z\n");
  InputValues v = drawInputs(s.specL, s.implL, s.rel, 1);
  ASSERT_TRUE(v.error);
  EXPECT_NE(v.error->find("'S.b = D0.z' (check.rel:2) cannot hold"), std::string::npos) << *v.error;
}

TEST(Inputs, IndicesStayInsideTheTableTheyIndex) {
  Case s("w: \"f32[3, 2]\", ids: \"i64[50]\"", "e: \"f32[50, 2]\" = torch.ops.aten.embedding.default(w, ids)\nreturn (e,)",
          "w: \"f32[3, 2]\", ids: \"i64[50]\"", "e: \"f32[50, 2]\" = torch.ops.aten.embedding.default(w, ids)\nreturn (e,)",
          "S.w = D*.w\nS.ids = D*.ids\n");
  InputValues v = drawInputs(s.specL, s.implL, s.rel, 5);
  ASSERT_FALSE(v.error) << *v.error;
  const auto& ids = s.specInput(v, "S.ids");
  EXPECT_EQ(*std::max_element(ids.data.begin(), ids.data.end()), 2);  // 50 draws from {0, 1, 2}
  EXPECT_EQ(*std::min_element(ids.data.begin(), ids.data.end()), 0);
  EXPECT_EQ(s.implInput(v, "D1.ids"), ids);
}

TEST(InvertRelation, NonRearrangementIsRefused) {
  Case s("x: \"f32[2]\"", "y: \"f32[2]\" = torch.ops.aten.neg.default(x)\nreturn (y,)", "x: \"f32[2]\"",
          "y: \"f32[2]\" = torch.ops.aten.neg.default(x)\nreturn (y,)", "S.x = D*.x\n");
  eg::Term t = termOf(s.rel.relations[0].rhs, s.specL, s.implL);
  t.nodes.push_back({eg::intern("neg"), eg::kNoAttrs, {t.root()}});
  std::unordered_map<int, PartialTensor> leaves;
  std::mt19937_64 rng(1);
  auto err = invertRelation(t, interp::Tensor::filled({2}, 1), s.implL, leaves, rng);
  ASSERT_TRUE(err);
  EXPECT_EQ(*err, "cannot run neg backwards");
}

// replayCheck on a hand-made inference result: a true relation matches, a
// wrong one is a mismatch with exit code 4.
TEST(Replay, WrongOutputRelationIsAMismatch) {
  Case s("A: \"f32[4, 8]\", B: \"f32[8, 6]\"", kMmBody, "A: \"f32[2, 8]\", B: \"f32[8, 6]\"",
          "mm: \"f32[2, 6]\" = torch.ops.aten.mm.default(A, B)\n"
          "ag: \"f32[4, 6]\" = torch.ops._c10d_functional.all_gather_into_tensor.default(mm, 2, '0')\n"
          "w: \"f32[4, 6]\" = torch.ops._c10d_functional.wait_tensor.default(ag)\n"
          "return (w,)",
          "S.A = shard(D*.A, dim=0)\nS.B = D*.B\n");
  auto rel = parseRelationText("S.mm = D1.w\nS.mm = concat(D0.mm, D0.mm, dim=0)\n", "r.rel");
  InferResult res;
  res.verdict = Verdict::Refines;
  res.outputs.push_back({id(s.specL, "S.mm"), "S.mm", {termOf(rel.relations[0].rhs, s.specL, s.implL)}, false});
  ReplayReport good = replayCheck(s.specL, s.implL, s.rel, res, {}, s.symbols);
  EXPECT_EQ(good.status, ReplayStatus::Matched) << good.text();
  EXPECT_EQ(good.summary.rfind("replay: 1 outputs match (max abs error", 0), 0u) << good.summary;
  EXPECT_FALSE(good.exitCode());

  res.outputs[0].exprs.push_back(termOf(rel.relations[1].rhs, s.specL, s.implL));
  ReplayReport bad = replayCheck(s.specL, s.implL, s.rel, res, {}, s.symbols);
  EXPECT_EQ(bad.status, ReplayStatus::Mismatch);
  EXPECT_EQ(bad.exitCode(), 4);
  ASSERT_TRUE(bad.mismatch);
  EXPECT_EQ(bad.mismatch->index[0], 2);  // rows 0..1 agree; row 2 is the first wrong one
  EXPECT_NE(bad.text().find("soundness bug"), std::string::npos);
  EXPECT_EQ(bad.json()["status"], "mismatch");
}

TEST(Replay, LargeGraphsWithoutASmallerInstanceAreSkipped) {
  Case s("A: \"f32[4, 4]\", B: \"f32[4, 3]\"", "mm: \"f32[4, 3]\" = torch.ops.aten.mm.default(A, B)\nreturn (mm,)",
         "A: \"f32[2, 4]\", B: \"f32[4, 3]\"", "mm: \"f32[2, 3]\" = torch.ops.aten.mm.default(A, B)\nreturn (mm,)",
         "S.A = shard(D*.A, dim=0)\nS.B = D*.B\n");
  InferResult res;
  ReplayOptions o;
  o.maxInputElements = 20;
  ReplayReport r = replayCheck(s.specL, s.implL, s.rel, res, o, s.symbols);
  EXPECT_EQ(r.status, ReplayStatus::Skipped);
  // 4 = 2 x 2 (the shard) and 3 pinned by the matmul: no smaller instance.
  EXPECT_EQ(r.summary.rfind("replay skipped: graphs too large (", 0), 0u) << r.summary;
  EXPECT_NE(r.summary.find("no smaller instance"), std::string::npos) << r.summary;
}

TEST(Replay, OpWithoutSemanticsMakesReplayNotPossible) {
  Case s("x: \"f32[3]\"", "c: \"f32[3]\" = torch.ops.aten.logcumsumexp.default(x, 0)\nreturn (c,)", "x: \"f32[3]\"",
         "c: \"f32[3]\" = torch.ops.aten.logcumsumexp.default(x, 0)\nreturn (c,)", "S.x = D*.x\n");
  auto rel = parseRelationText("S.c = D0.c\n", "r.rel");
  InferResult res;
  res.outputs.push_back({id(s.specL, "S.c"), "S.c", {termOf(rel.relations[0].rhs, s.specL, s.implL)}, false});
  ReplayReport r = replayCheck(s.specL, s.implL, s.rel, res, {}, s.symbols);
  EXPECT_EQ(r.status, ReplayStatus::NotPossible);
  EXPECT_EQ(r.summary.rfind("replay not possible: aten.logcumsumexp.default at spec.py:5", 0), 0u) << r.summary;
  EXPECT_FALSE(r.exitCode());
}

TEST(Replay, ViolationWithoutSameShapedCandidateSaysSo) {
  Case s("A: \"f32[4, 8]\", B: \"f32[8, 6]\"", kMmBody, "A: \"f32[2, 8]\", B: \"f32[8, 3]\"",
         "mm: \"f32[2, 3]\" = torch.ops.aten.mm.default(A, B)\nreturn (mm,)",
         "S.A = shard(D*.A, dim=0)\nS.B = shard(D*.B, dim=1)\n");
  InferResult res;
  res.verdict = Verdict::Violation;
  Failure f;
  f.node = f.tensor = id(s.specL, "S.mm");
  f.nearbyImpl = {id(s.implL, "D0.mm"), id(s.implL, "D1.mm")};
  res.failure = f;
  ReplayReport r = replayCheck(s.specL, s.implL, s.rel, res, {}, s.symbols);
  EXPECT_EQ(r.status, ReplayStatus::NoCounterexample);
  EXPECT_EQ(r.summary,
            "replay: S.mm has shape [4, 6]; no same-shaped implementation tensor exists among the candidates");
  EXPECT_NE(r.text().find("candidates of other shapes: D0.mm [2, 3], D1.mm [2, 3]"), std::string::npos) << r.text();
  EXPECT_TRUE(r.counterexamples.empty());
}

// Labels reach the table they index only through other integer tensors (a
// transpose, a copy, an offset): they are drawn over the whole table, so every
// rank's shard of a vocabulary is hit, not just its first rows.
TEST(Inputs, IndicesReachingTheTableThroughIntegerOpsCoverIt) {
  const char* body =
      "t: \"i64[40, 2]\" = torch.ops.aten.transpose.int(ids, 0, 1)\n"
      "c: \"i64[40, 2]\" = torch.ops.aten.clone.default(t)\n"
      "o: \"i64[40, 2]\" = torch.ops.aten.sub.Tensor(c, 0)\n"
      "e: \"f32[40, 2, 2]\" = torch.ops.aten.embedding.default(w, o)\nreturn (e,)";
  Case s("w: \"f32[30, 2]\", ids: \"i64[2, 40]\"", body, "w: \"f32[30, 2]\", ids: \"i64[2, 40]\"", body,
         "S.w = D*.w\nS.ids = D*.ids\n");
  InputValues v = drawInputs(s.specL, s.implL, s.rel, 5);
  ASSERT_FALSE(v.error) << *v.error;
  const auto& ids = s.specInput(v, "S.ids");
  EXPECT_GE(*std::max_element(ids.data.begin(), ids.data.end()), 20);  // 80 draws from [0, 30)
  EXPECT_LT(*std::max_element(ids.data.begin(), ids.data.end()), 30);
  EXPECT_GE(*std::min_element(ids.data.begin(), ids.data.end()), 0);
}

// Equal sizes are one class only when an operator or a relation links them; the
// certificate ties a spec dim to the implementation dim at its position.
TEST(DimClasses, EqualSizesAreLinkedByOperatorsAndTheCertificate) {
  Case s("A: \"f32[6, 8]\", B: \"f32[8, 10]\", C: \"f32[8, 7]\"",
         "mm: \"f32[6, 10]\" = torch.ops.aten.mm.default(A, B)\n"
         "r: \"f32[8, 7]\" = torch.ops.aten.relu.default(C)\nreturn (mm, r)",
         "A: \"f32[3, 8]\", B: \"f32[8, 10]\"", "mm: \"f32[3, 10]\" = torch.ops.aten.mm.default(A, B)\nreturn (mm,)",
         "");
  auto node = [&](bool spec, const char* name) { return spec ? id(s.specL, name) : id(s.implL, name); };
  auto rel = parseRelationText("S.mm = concat(D0.mm, D1.mm, dim=0)\n", "r.rel");
  std::vector<TensorRelations> cert{{id(s.specL, "S.mm"), "S.mm", {termOf(rel.relations[0].rhs, s.specL, s.implL)}}};
  for (bool withCert : {false, true}) {
    detail::DimClasses dc = detail::collectDimClasses(s.specL, s.implL, s.rel, withCert ? cert : std::vector<TensorRelations>{});
    auto cls = [&](bool spec, const char* name, size_t dim) { return dc.find(dc.of(spec, node(spec, name), 0, dim)); };
    EXPECT_EQ(cls(true, "S.A", 1), cls(true, "S.B", 0));  // the matmul's inner dim
    EXPECT_EQ(cls(true, "S.mm", 1), cls(true, "S.B", 1));
    EXPECT_NE(cls(true, "S.A", 1), cls(true, "S.C", 0));  // 8 by coincidence: another class
    EXPECT_EQ(dc.classesByValue(4).at(8), 4);  // spec mm, spec relu, each rank's mm
    EXPECT_NE(cls(true, "S.mm", 0), cls(false, "D0.mm", 0));  // 6 and 3: never one size
    EXPECT_EQ(cls(true, "S.mm", 1) == cls(false, "D0.mm", 1), withCert) << "the certificate links the 10s";
    EXPECT_EQ(cls(false, "D0.mm", 1) == cls(false, "D1.mm", 1), withCert);
  }
}

// 4 = 2 x 2 in one view and 8 = 2 x 4 in another: one size per value ties the 4s and pins every
// size at its real value; one size per dim class leaves B's 4 free, so B shrinks to [2, 2].
// Class mode end to end on a test case: classes, the smallest solution, the rewritten check in rc.
void reduceByClass(const Case& s, std::unique_ptr<detail::ReducedCheck>& rc) {
  InferResult res;
  detail::ClassSizes cs = detail::collectClassSizes(s.specL, s.implL, s.rel, res, 1);
  ASSERT_EQ(cs.problem, "");
  auto solved = detail::solveSizeRoles(cs.roles, false, /*preferSmall=*/true);
  ASSERT_TRUE(solved);
  std::string why;
  rc = detail::mapCheckByClass(s.specL, s.implL, s.rel, res, cs, *solved, why);
  ASSERT_TRUE(rc) << why;
}

TEST(ClassSizes, CoincidenceThatPinsValuesDoesNotPinClasses) {
  const char* body =
      "a: \"f32[4]\" = torch.ops.aten.view.default(A, [4])\n"
      "b: \"f32[8]\" = torch.ops.aten.view.default(B, [8])\nreturn (a, b)";
  Case s("A: \"f32[2, 2]\", B: \"f32[2, 4]\"", body, "A: \"f32[2, 2]\", B: \"f32[2, 4]\"", body,
         "S.A = D*.A\nS.B = D*.B\n");
  auto byValue = detail::solveSizeRoles(detail::collectSizeRoles(s.specL, s.implL, s.rel, 1), false);
  ASSERT_TRUE(byValue);
  EXPECT_EQ(byValue->at(4), 4);
  EXPECT_EQ(byValue->at(8), 8);

  std::unique_ptr<detail::ReducedCheck> rc;
  ASSERT_NO_FATAL_FAILURE(reduceByClass(s, rc));
  auto shape = [](const LGraph& lg, const char* name) { return lg.nodes[size_t(id(lg, name))].data.types[0].shape; };
  for (const LGraph* lg : {&rc->spec, &rc->impl}) {
    bool spec = lg == &rc->spec;
    EXPECT_EQ(shape(*lg, spec ? "S.A" : "D0.A"), (std::vector<Dim>{2, 2}));  // 4 = 2 x 2 holds only at 2
    EXPECT_EQ(shape(*lg, spec ? "S.a" : "D1.a"), (std::vector<Dim>{4}));
    EXPECT_EQ(shape(*lg, spec ? "S.B" : "D1.B"), (std::vector<Dim>{2, 2}));
    EXPECT_EQ(shape(*lg, spec ? "S.b" : "D0.b"), (std::vector<Dim>{4}));
  }
}

// A tuple of a known operator (apex's fused layer norm) has no annotation: its getitems must still be
// tied to the operator's operand through it, or a reduction rewrites getitem[0]'s 8 apart from the
// operand's (GPT TP=4: computed [48, 2, 24] against an annotation [48, 8, 24]).
TEST(DimClasses, GetitemOfAnUnannotatedTupleIsTiedToTheOperatorsOperand) {
  const char* params = "X: \"f32[6, 8, 4]\", W: \"f32[4]\", B: \"f32[4]\"";
  const char* body =
      "ap = torch.ops.apex.fused_layer_norm_affine_fwd.default(X, W, B, [4], 1e-05)\n"
      "g0: \"f32[6, 8, 4]\" = ap[0]\n"
      "g1: \"f32[48]\" = ap[1]\n"
      "g2: \"f32[48]\" = ap[2]\nreturn (g0, g1, g2)";
  Case s(params, body, params, body, "S.X = D*.X\nS.W = D*.W\nS.B = D*.B\n");
  detail::DimClasses dc = detail::collectDimClasses(s.specL, s.implL, s.rel, {});
  auto cls = [&](const char* name, size_t dim) { return dc.find(dc.of(true, id(s.specL, name), 0, dim)); };
  for (size_t d = 0; d < 3; ++d) EXPECT_EQ(cls("S.g0", d), cls("S.X", d)) << "dim " << d;
  EXPECT_EQ(cls("S.g1", 0), cls("S.g2", 0));  // both statistics: one tuple, one operator

  std::unique_ptr<detail::ReducedCheck> rc;
  ASSERT_NO_FATAL_FAILURE(reduceByClass(s, rc));
  auto shape = [](const LGraph& lg, const char* name) { return lg.nodes[size_t(id(lg, name))].data.types[0].shape; };
  for (const LGraph* lg : {&rc->spec, &rc->impl}) {
    bool spec = lg == &rc->spec;
    auto x = shape(*lg, spec ? "S.X" : "D1.X");
    EXPECT_LT(x[0] * x[1], 48) << "reduced";
    EXPECT_EQ(shape(*lg, spec ? "S.g0" : "D1.g0"), x);
    EXPECT_EQ(shape(*lg, spec ? "S.g1" : "D1.g1"), (std::vector<Dim>{x[0] * x[1]}));  // stats: the leading dims
  }
}

// Two dims of one tensor that merely have the same size (8 heads x a rotary half of 8) stay two
// classes through elementwise ops (right-aligned broadcasting), transposes, reductions and
// products: tying equal values inside an operator made aws_llama TP=4's head count its rotary half,
// which pinned every size (dim_ties.h).
TEST(DimClasses, OperatorsTieDimsByPositionNotByValue) {
  const char* params = "X: \"f32[4, 8, 8]\", Y: \"f32[8]\", M: \"f32[8, 8]\", N: \"f32[8, 8]\"";
  const char* body =
      "m: \"f32[4, 8, 8]\" = torch.ops.aten.mul.Tensor(X, Y)\n"
      "t: \"f32[4, 8, 8]\" = torch.ops.aten.transpose.int(m, 1, 2)\n"
      "s: \"f32[4, 8]\" = torch.ops.aten.sum.dim_IntList(t, [-1])\n"
      "p: \"f32[8, 8]\" = torch.ops.aten.mm.default(M, N)\nreturn (s, p)";
  Case c(params, body, params, body, "S.X = D*.X\nS.Y = D*.Y\nS.M = D*.M\nS.N = D*.N\n");
  detail::DimClasses dc = detail::collectDimClasses(c.specL, c.implL, c.rel, {});
  auto cls = [&](const char* name, size_t dim) { return dc.find(dc.of(true, id(c.specL, name), 0, dim)); };
  EXPECT_NE(cls("S.X", 1), cls("S.X", 2));  // heads and half: 8 by coincidence
  EXPECT_EQ(cls("S.Y", 0), cls("S.X", 2));  // broadcast from the right
  EXPECT_NE(cls("S.Y", 0), cls("S.X", 1));
  EXPECT_EQ(cls("S.m", 1), cls("S.X", 1));
  EXPECT_EQ(cls("S.t", 1), cls("S.X", 2));  // transposed
  EXPECT_EQ(cls("S.t", 2), cls("S.X", 1));
  EXPECT_EQ(cls("S.s", 1), cls("S.X", 2));  // the kept dim of the sum over the last one
  EXPECT_NE(cls("S.s", 1), cls("S.X", 1));
  EXPECT_EQ(cls("S.M", 1), cls("S.N", 0));  // the product's inner dim
  EXPECT_EQ(cls("S.p", 0), cls("S.M", 0));
  EXPECT_EQ(cls("S.p", 1), cls("S.N", 1));
  EXPECT_NE(cls("S.M", 0), cls("S.M", 1));
  EXPECT_NE(cls("S.N", 0), cls("S.N", 1));

  // Reduced, the heads and the half may differ, and every operator still accepts its operands.
  std::unique_ptr<detail::ReducedCheck> rc;
  ASSERT_NO_FATAL_FAILURE(reduceByClass(c, rc));
  auto x = rc->spec.nodes[size_t(id(rc->spec, "S.X"))].data.types[0].shape;
  EXPECT_EQ(rc->spec.nodes[size_t(id(rc->spec, "S.s"))].data.types[0].shape, (std::vector<Dim>{x[0], x[2]}));
  EXPECT_EQ(rc->spec.nodes[size_t(id(rc->spec, "S.Y"))].data.types[0].shape, (std::vector<Dim>{x[2]}));
}

// The builder only joins equal sizes; a class that held two would be a contradiction, refused.
TEST(ClassSizes, ClassOfTwoRealSizesIsRefused) {
  detail::DimClasses dc;
  int a = dc.add(6), b = dc.add(6), c = dc.add(4);
  dc.unite(a, b);
  EXPECT_EQ(detail::mixedClass(dc), "");
  dc.unite(b, c);
  std::string why = detail::mixedClass(dc);
  EXPECT_TRUE(why == "a dim class joins sizes 6 and 4" || why == "a dim class joins sizes 4 and 6") << why;
}

// Slice windows keep their index at reduced sizes; their bounds are no size roles.
TEST(SizeRoles, SliceWindowIsAWholeNumberOfItsLength) {
  EXPECT_EQ(detail::sliceWindow(384, 768, 1), std::make_pair(int64_t(1), int64_t(384)));
  EXPECT_EQ(detail::sliceWindow(0, 1024, 1), std::make_pair(int64_t(0), int64_t(1024)));
  EXPECT_FALSE(detail::sliceWindow(8, 776, 1));               // shifted by 8: its bounds stay sizes
  EXPECT_FALSE(detail::sliceWindow(0, int64_t(1) << 50, 1));  // "to the end"
  EXPECT_FALSE(detail::sliceWindow(0, 768, 2));
}

// Least values follow sums and products of other least values; a fact with a negative coefficient
// (a slice window's end - start) proves nothing and is skipped; `<=` raises its right side only.
TEST(SizeRoles, LeastValuesArePropagatedThroughTheFacts) {
  detail::SizeRoles r;
  r.roles = {4, 8, 32, 64, 96};
  using M = detail::SizeMono;
  r.facts.push_back({{M{1, {8}}}, {M{1, {4}}, M{1, {4}}}, false});                 // 8 = 4 + 4
  r.facts.push_back({{M{1, {8, 4}}}, {M{1, {32}}}, false});                       // 8 x 4 = 32
  r.facts.push_back({{M{1, {32}}}, {M{1, {64}}}, true});                          // 32 <= 64
  r.facts.push_back({{M{1, {96}}}, {M{1, {8}}, M{-1, {4}}}, false});              // 96 = 8 - 4: skipped
  auto lo = detail::leastValues(r);
  EXPECT_EQ(lo.at(4), 2);
  EXPECT_EQ(lo.at(8), 4);
  EXPECT_EQ(lo.at(32), 8);  // 4 x 2
  EXPECT_EQ(lo.at(64), 8);
  EXPECT_EQ(lo.at(96), 2);
}

// With `divide`, a side known to be at least some value raises its roles too: 4 x 6 >= 23 needs
// 4 >= 23 / 6 and 6 >= 23 / 4 (each other factor at most its real size). Checked against every
// assignment of the roles in [2, real size] that satisfies the facts: none is below its least value.
TEST(SizeRoles, LeastValuesByDivisionStayBelowEverySolution) {
  detail::SizeRoles r;
  r.roles = {4, 6, 24, 30};
  using M = detail::SizeMono;
  r.facts.push_back({{M{1, {24}}}, {M{1, {4, 6}}}, false});           // 24 = 4 x 6
  r.facts.push_back({{M{1, {30}}}, {M{1, {24}}, M{1, {6}}}, false});  // 30 = 24 + 6
  r.facts.push_back({{M{29, {}}}, {M{1, {30}}}, true});               // 29 <= 30
  auto plain = detail::leastValues(r);
  EXPECT_EQ(plain.at(4), 2);
  EXPECT_EQ(plain.at(6), 2);
  auto lo = detail::leastValues(r, /*divide=*/true);
  EXPECT_EQ(lo.at(30), 30);
  EXPECT_EQ(lo.at(24), 24);  // 29 - at most 6
  EXPECT_EQ(lo.at(6), 6);    // 23 / at most 4, rounded up
  EXPECT_EQ(lo.at(4), 4);
  auto value = [](const detail::SizeSum& t, const std::map<int64_t, int64_t>& a) {
    int64_t out = 0;
    for (const M& m : t) {
      int64_t p = m.coeff;
      for (int64_t v : m.sizes) p *= a.at(v);
      out += p;
    }
    return out;
  };
  int solutions = 0;
  for (int64_t a = 2; a <= 4; ++a)
    for (int64_t b = 2; b <= 6; ++b)
      for (int64_t c = 2; c <= 24; ++c)
        for (int64_t d = 2; d <= 30; ++d) {
          std::map<int64_t, int64_t> x{{4, a}, {6, b}, {24, c}, {30, d}};
          bool ok = std::all_of(r.facts.begin(), r.facts.end(), [&](const detail::SizeFact& f) {
            return f.le ? value(f.lhs, x) <= value(f.rhs, x) : value(f.lhs, x) == value(f.rhs, x);
          });
          if (!ok) continue;
          ++solutions;
          for (auto [v, k] : x) EXPECT_GE(k, lo.at(v)) << v;
        }
  EXPECT_EQ(solutions, 1);  // 4, 6, 24, 30: every least value is reached
}

// Rank 2's vocabulary start (2 x the shard) scales with the shard, not with a token count that divides it.
TEST(SizeRoles, ScalarMultipleOfALargeRoleKeepsTheMultiple) {
  detail::SizeMap m;
  m.roles = {{98304, 28}, {24576, 7}, {12288, 48}};
  EXPECT_EQ(m.scalar(49152), 14);
  EXPECT_EQ(m.scalar(-73728), -21);
  EXPECT_EQ(m.scalar(24576), 7);
  EXPECT_EQ(m.scalar(0.5), 0.5);
  EXPECT_EQ(m.scalar(100), 100);  // no large role divides it
}

}  // namespace
}  // namespace tangle::replay
