// Lemma synthesis: a real gap (a built-in lemma left out of a check) is closed
// by a synthesized, validated rule; a wrong rule proposed from values that
// agree on a degenerate input is refused; bad candidates are input errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "replay/inputs.h"
#include "replay/lgraph_eval.h"
#include "lemmas/lemma_file.h"
#include "support/error.h"
#include "synth/synth.h"

namespace tangle::synth {
namespace {

namespace fs = std::filesystem;

std::string src(const std::string& rel) { return std::string(TANGLE_SOURCE_DIR) + "/" + rel; }

std::string tempLemmas(const std::string& stem) {
  return (fs::temp_directory_path() / ("tangle_synth_" + std::to_string(::getpid()) + "_" + stem + ".lemmas")).string();
}

std::string readAll(const std::string& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

SynthRequest columnRowWithout(const std::string& lemma, const std::string& out) {
  SynthRequest req;
  req.check.relationPath = src("examples/mlp/column_row/check.rel");
  req.check.withoutLemmas = {lemma};
  req.outPath = out;
  return req;
}

TEST(Synth, RecoversALeftOutElementwiseLemma) {
  std::string out = tempLemmas("gelu");
  SynthReport rep = synthesize(columnRowWithout("gelu-concat", out));
  EXPECT_EQ(rep.before, Verdict::Violation) << reportText(rep, out);  // the gap is real
  ASSERT_TRUE(rep.refines()) << reportText(rep, out);
  ASSERT_EQ(rep.accepted(), 1u) << reportText(rep, out);
  const SynthRule& r = rep.rules.back();
  EXPECT_EQ(r.lhs, "(gelu[\"none\"] (concat[?p0] ?v0 ?v1))");
  EXPECT_EQ(r.rhs, "(concat[?p0] (gelu[\"none\"] ?v0) (gelu[\"none\"] ?v1))");
  EXPECT_TRUE(r.generalized);
  EXPECT_EQ(r.result.status, validate::Status::Tested);  // gelu is a kernel: random tests, not Z3
  std::string text = readAll(out);
  EXPECT_NE(text.find("lemma " + r.name + ":"), std::string::npos) << text;
  EXPECT_NE(text.find("# evidence: tested"), std::string::npos) << text;
  EXPECT_NE(text.find("# relation: S.gelu = concat(D0.gelu, D1.gelu, dim=1)"), std::string::npos) << text;

  // The written file is an ordinary lemma file: the check loads (re-validates) it and refines.
  CheckRequest check;
  check.relationPath = src("examples/mlp/column_row/check.rel");
  check.withoutLemmas = {"gelu-concat"};
  EXPECT_EQ(runCheck(check)->result.verdict, Verdict::Violation);
  check.lemmaPaths = {out};
  EXPECT_EQ(runCheck(check)->result.verdict, Verdict::Refines);
  fs::remove(out);
}

TEST(Synth, KeepsConcreteDimsWhenTheGeneralRuleIsWrong) {
  std::string out = tempLemmas("mm");
  SynthReport rep = synthesize(columnRowWithout("mm-concat-inner", out));
  ASSERT_TRUE(rep.refines()) << reportText(rep, out);
  ASSERT_EQ(rep.rules.size(), 3u) << reportText(rep, out);
  // mm(concat[?a], concat[?b]) => sum of products is wrong for other dims: refused, never written,
  // also under the shapes of the model (ranks, equal sizes) as side conditions...
  EXPECT_TRUE(rep.rules[0].generalized);
  EXPECT_EQ(rep.rules[0].result.status, validate::Status::Failed);
  EXPECT_TRUE(rep.rules[1].generalized);
  EXPECT_NE(rep.rules[1].conditions.find("?v0:rank == 2"), std::string::npos) << rep.rules[1].conditions;
  EXPECT_EQ(rep.rules[1].result.status, validate::Status::Failed);
  // ...and the rule with the dims of the model (inner dim split) is accepted, without conditions.
  EXPECT_FALSE(rep.rules[2].generalized);
  EXPECT_TRUE(rep.rules[2].accepted());
  EXPECT_EQ(rep.rules[2].conditions, "");
  EXPECT_EQ(rep.rules[2].lhs, "(mm (concat[1] ?v0 ?v1) (concat[0] ?v2 ?v3))");
  EXPECT_EQ(rep.rules[2].rhs, "(sum (mm ?v0 ?v2) (mm ?v1 ?v3))");
  std::string text = readAll(out);
  EXPECT_NE(text.find("# REJECTED (never used) " + rep.rules[0].name), std::string::npos) << text;
  EXPECT_EQ(text.find("\nlemma " + rep.rules[0].name), std::string::npos) << text;
  fs::remove(out);
}

TEST(Synth, RefusesAWrongRuleFromDegenerateValues) {
  // The implementation transposes the square weight. On a symmetric weight
  // both outputs agree, so a value-driven proposal S.mm = D0.mm looks right.
  CheckRequest check;
  check.relationPath = src("tests/data/synth/check.rel");
  auto run = runCheck(check);
  ASSERT_EQ(run->result.verdict, Verdict::Violation);
  const PreparedCheck& pc = *run->prepared;
  auto inputs = replay::drawInputs(*pc.specL, *pc.implL, pc.relation, 7);
  ASSERT_FALSE(inputs.error);
  int sw = pc.specL->resolve(*pc.specL->find("S.w")), iw = pc.implL->resolve(*pc.implL->find("D0.w"));
  interp::Value sym = inputs.spec.at(sw);  // w := w + w^T
  interp::Tensor& t = sym.items[0];
  interp::Tensor orig = t;
  int64_t n = t.shape[0];
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) t.data[i * n + j] = orig.data[i * n + j] + orig.data[j * n + i];
  inputs.spec[sw] = sym;
  inputs.impl[iw] = sym;
  replay::LGraphEvaluator se(*pc.specL), ie(*pc.implL);
  for (auto& [id, v] : inputs.spec) se.set(id, v);
  for (auto& [id, v] : inputs.impl) ie.set(id, v);
  const interp::Tensor* a = se.value(*pc.specL->find("S.mm"))->tensor();
  const interp::Tensor* b = ie.value(*pc.implL->find("D0.mm"))->tensor();
  ASSERT_EQ(a->shape, b->shape);
  for (size_t k = 0; k < a->data.size(); ++k) ASSERT_NEAR(a->data[k], b->data[k], 1e-9);  // they agree, by accident

  std::string out = tempLemmas("wrong");
  SynthRequest req;
  req.check = check;
  req.candidates = {"S.mm = D0.mm"};
  req.outPath = out;
  SynthReport rep = synthesize(req);
  ASSERT_EQ(rep.rules.size(), 2u) << reportText(rep, out);  // as stated, then under the model's shapes
  EXPECT_EQ(rep.rules[1].result.status, validate::Status::Failed);
  const SynthRule& r = rep.rules[0];
  EXPECT_EQ(r.lhs, "(mm ?v0 ?v1)");
  EXPECT_EQ(r.rhs, "(mm ?v0 (transpose[0, 1] ?v1))");
  EXPECT_EQ(r.result.status, validate::Status::Failed);
  EXPECT_NE(r.result.detail.find("differs"), std::string::npos) << r.result.detail;  // the counterexample
  EXPECT_EQ(rep.accepted(), 0u);
  EXPECT_EQ(rep.after, Verdict::Violation);  // never used: the bug stays reported
  std::string text = readAll(out);
  EXPECT_EQ(text.find("\nlemma "), std::string::npos) << text;
  EXPECT_NE(text.find("# REJECTED (never used)"), std::string::npos) << text;
  fs::remove(out);
}

TEST(Synth, BadCandidatesAndLemmaNamesAreInputErrors) {
  SynthRequest req;
  req.check.relationPath = src("tests/data/synth/check.rel");
  req.outPath = tempLemmas("bad");
  req.candidates = {"S.nope = D0.mm"};
  EXPECT_THROW(synthesize(req), InputError);
  req.candidates = {"S.mm = = D0.mm"};
  EXPECT_THROW(synthesize(req), InputError);
  req.candidates = {"D0.mm = S.mm"};
  EXPECT_THROW(synthesize(req), InputError);
  req.candidates = {};
  req.check.withoutLemmas = {"no-such-lemma"};
  EXPECT_THROW(synthesize(req), InputError);
  fs::remove(req.outPath);
}

TEST(Synth, ShapeConditionsInLemmaFiles) {
  // The side conditions synthesis writes: ?x:k is dim k of the e-class ?x, ?x:rank its rank.
  auto f = lemmas::parseLemmaText(
      "lemma c: (add (concat[?d] ?a ?b) ?c)\n    => (add ?c (concat[?d] ?a ?b))\n    if ?a:rank == 2, ?a:1 == ?c:0, ?d < 2\n",
      "x.lemmas");
  ASSERT_EQ(f.lemmas.size(), 1u);
  ASSERT_EQ(f.lemmas[0].conditions.size(), 3u);
  EXPECT_EQ(f.lemmas[0].conditions[0].lhsDim, lemmas::kRankDim);
  EXPECT_EQ(f.lemmas[0].conditions[1].lhsDim, 1);
  EXPECT_EQ(f.lemmas[0].conditions[1].rhsDim, 0);
  auto bad = [](const std::string& cond) {
    return "lemma c: (add (concat[?d] ?a ?b) ?c) => (add ?c (concat[?d] ?a ?b)) if " + cond + "\n";
  };
  EXPECT_THROW(lemmas::parseLemmaText(bad("?d:0 == 1"), "x.lemmas"), InputError);   // ?d is an attribute
  EXPECT_THROW(lemmas::parseLemmaText(bad("?a:x == 1"), "x.lemmas"), InputError);   // not a dim
  EXPECT_THROW(lemmas::parseLemmaText(bad("?z:0 == 1"), "x.lemmas"), InputError);   // unbound
}

}  // namespace
}  // namespace tangle::synth
