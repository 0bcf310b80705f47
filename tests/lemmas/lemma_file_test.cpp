// Lemma files: parsing (and each error), custom-op types and semantics,
// validation of file lemmas, and the CLI (`check --lemmas`, `lemmas FILE` in
// a relation file, `lemmas --validate --lemmas`).
#include <gtest/gtest.h>

#include "../e2e/cli_support.h"
#include "interp/interp.h"
#include "lemmas/lemma_file.h"
#include "ops/ops.h"
#include "sym/context.h"
#include "validate/lemma_file_check.h"

namespace tangle::lemmas {
namespace {

using e2e::runTangle;

const std::string kDefine =
    "define (aten.leaky_relu.default[\"<tensor>\", ?s] ?x) = (where (gt ?x (const[0])) ?x (mul ?x (const[?s])))\n";

std::string dataPath(const std::string& name) { return e2e::sourcePath("tests/data/lemmas/" + name); }

// The InputError message of parsing `text` as "t.lemmas" ("" when it parses).
std::string parseError(const std::string& text) {
  try {
    parseLemmaText(text, "t.lemmas");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(LemmaFileParse, GoodFile) {
  LemmaFile f = parseLemmaText(kDefine +
                                   "opaque aten.my_fused.default   # no meaning\n"
                                   "\n"
                                   "lemma a: (aten.leaky_relu.default[\"<tensor>\", ?s] (concat[?d] ?a ?b))\n"
                                   "   => (concat[?d] (aten.leaky_relu.default[\"<tensor>\", ?s] ?a)\n"
                                   "                  (aten.leaky_relu.default[\"<tensor>\", ?s] ?b))\n"
                                   "lemma b: (transpose[?p, ?q] (transpose[?p, ?q] ?x)) => ?x if ?p != ?q, ?p >= 0\n"
                                   "lemma c: (aten.my_fused.default ?x) => (neg (neg (aten.my_fused.default ?x)))\n",
                               "t.lemmas");
  ASSERT_EQ(f.ops.size(), 2u);
  EXPECT_EQ(f.ops[0].op, "aten.leaky_relu.default");
  EXPECT_FALSE(f.ops[0].opaque);
  EXPECT_TRUE(f.ops[1].opaque);
  ASSERT_EQ(f.lemmas.size(), 3u);
  EXPECT_EQ(f.lemmas[0].loc.line, 4);  // continuation lines belong to the statement
  EXPECT_TRUE(f.lemmas[0].opaqueOps.empty());
  ASSERT_EQ(f.lemmas[1].conditions.size(), 2u);
  EXPECT_EQ(f.lemmas[1].conditions[0].rhsVar, std::optional<std::string>("q"));
  EXPECT_EQ(f.lemmas[1].conditions[1].rhsInt, 0);
  EXPECT_TRUE(f.lemmas[1].lemma.rule.guard);
  EXPECT_EQ(f.lemmas[2].opaqueOps, std::vector<std::string>{"aten.my_fused.default"});
  EXPECT_EQ(f.rules().size(), 3u);
}

TEST(LemmaFileParse, ConditionsGuardTheRule) {
  LemmaFile f = parseLemmaText("lemma b: (transpose[?p, ?q] ?x) => ?x if ?p != ?q, ?q < 3\n", "t.lemmas");
  const auto& guard = f.lemmas[0].lemma.rule.guard;
  auto with = [&](eg::Attr p, eg::Attr q) {
    eg::Subst s;
    s.attrs["p"] = p;
    s.attrs["q"] = q;
    return guard(eg::EGraph{}, s);
  };
  EXPECT_TRUE(with(eg::Attr::integer(0), eg::Attr::integer(1)));
  EXPECT_FALSE(with(eg::Attr::integer(1), eg::Attr::integer(1)));
  EXPECT_FALSE(with(eg::Attr::integer(0), eg::Attr::integer(3)));
  EXPECT_FALSE(with(eg::Attr::real(0.5), eg::Attr::integer(1)));  // not an integer: refused
}

TEST(LemmaFileParse, ConditionsOnSymbolicSizesNeedAProof) {
  LemmaFile f = parseLemmaText("lemma h: (slice[?d, ?s, ?e, 1] ?x) => ?x if ?s < ?e, ?e >= 2\n", "t.lemmas");
  const auto& guard = f.lemmas[0].lemma.rule.guard;
  sym::ExprId n = sym::var("L.n");
  int64_t half = *sym::toDim(*sym::floorDiv(n, 2)), whole = *sym::toDim(n);
  sym::Context ctx;
  eg::EGraph g(nullptr, &ctx);  // the guard asks the e-graph's context
  auto with = [&](int64_t s, int64_t e) {
    eg::Subst sub;
    sub.attrs["s"] = eg::Attr::dim(s);
    sub.attrs["e"] = eg::Attr::dim(e);
    return guard(g, sub);
  };
  ctx.noteSize(n);
  EXPECT_FALSE(with(half, whole));  // n // 2 < n fails for n = 0
  ASSERT_TRUE(ctx.assumeLE(sym::constant(2), n, false, nullptr));
  EXPECT_TRUE(with(half, whole));   // proved from n >= 2
  EXPECT_FALSE(with(whole, half));  // never n < n // 2
}

TEST(LemmaFileParse, ErrorsNameFileAndLine) {
  EXPECT_NE(parseError("\n\nlemma x: (neg ?a => ?a\n").find("t.lemmas:3: error:"), std::string::npos);  // unclosed
  EXPECT_NE(parseError("\n\nlemma x: (neg ?a 3) => ?a\n").find("t.lemmas:3: error: bad left-hand side"),
            std::string::npos);
  EXPECT_NE(parseError("lemma x: (neg ?a) => (neg ?b)\n").find("t.lemmas:1: error: unknown variable ?b"),
            std::string::npos);
  EXPECT_NE(parseError("lemma x: (slice[?d, 0, 2, 1] ?a) => (slice[?e, 0, 2, 1] ?a)\n")
                .find("unknown attribute variable ?e"),
            std::string::npos);
  EXPECT_NE(parseError("lemma x: (neg (neg ?a)) => ?a\n# c\nlemma x: (neg ?a) => ?a\n")
                .find("t.lemmas:3: error: lemma x defined twice (first on line 1)"),
            std::string::npos);
  const std::string builtin = lemmaTable().front().rule.name;
  EXPECT_NE(parseError("lemma " + builtin + ": (neg ?a) => ?a\n").find("clashes with a built-in lemma"),
            std::string::npos);
  EXPECT_NE(parseError("lemma x: (neg ?a) ?a\n").find("missing '=>'"), std::string::npos);
  EXPECT_NE(parseError("lemma x: ?a => (neg (neg ?a))\n").find("must be an operator"), std::string::npos);
  EXPECT_NE(parseError("lemma x: (transpose[?p, ?q] ?a) => ?a if ?r != 0\n").find("names ?r"), std::string::npos);
  EXPECT_NE(parseError("lemma x: (transpose[?p, ?q] ?a) => ?a if ?p ~ 0\n").find("unknown comparison"),
            std::string::npos);
  EXPECT_NE(parseError("rule x: (neg ?a) => ?a\n").find("t.lemmas:1: error: unknown statement 'rule'"),
            std::string::npos);
  EXPECT_NE(parseError("define (gelu[?a] ?x) = (relu ?x)\n").find("is a canonical operator"), std::string::npos);
  EXPECT_NE(parseError("define (aten.foo.default ?x) = (aten.bar.default ?x)\n").find("neither canonical nor defined"),
            std::string::npos);
  EXPECT_NE(parseError("define (aten.foo.default ?x) = (neg ?y)\n").find("not a parameter"), std::string::npos);
  EXPECT_NE(parseError(kDefine + kDefine).find("t.lemmas:2: error: operator 'aten.leaky_relu.default' declared twice"),
            std::string::npos);
}

TEST(LemmaFileParse, MissingFile) {
  try {
    parseLemmaFile(dataPath("no_such.lemmas"));
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot read the lemma file"), std::string::npos);
  }
}

TEST(LemmaFileOps, DefinitionGivesTypesAndValues) {
  LemmaFile f = parseLemmaText(kDefine, "t.lemmas");
  validate::installCustomOps(f);
  eg::EGraph g(ops::inferData);
  eg::ClassData d;
  d.types.push_back(TensorType{DType::F32, {2, 3}});
  eg::Id x = g.leaf("D0.x", d);
  eg::Symbol leaky = eg::intern("aten.leaky_relu.default");
  eg::AttrList attrs{eg::Attr::str("<tensor>"), eg::Attr::real(0.1)};
  auto y = g.tryAdd(eg::ENode{leaky, eg::internAttrs(attrs), {x}});
  ASSERT_TRUE(y);
  ASSERT_TRUE(g.data(*y).tensor());
  EXPECT_EQ(g.data(*y).tensor()->shape, (std::vector<Dim>{2, 3}));
  // Another form (inplace flag) is not covered by the definition: opaque, untyped.
  attrs.push_back(eg::Attr::boolean(true));
  auto z = g.tryAdd(eg::ENode{leaky, eg::internAttrs(attrs), {x}});
  ASSERT_TRUE(z);
  EXPECT_TRUE(g.data(*z).types.empty());

  EXPECT_TRUE(ops::hasKernel(leaky));
  eg::ENode n{leaky, eg::internAttrs({eg::Attr::str("<tensor>"), eg::Attr::real(0.1)}), {x}};
  auto v = ops::evaluate(n, {interp::Value::of(interp::Tensor::of({3}, {-2.0, 0.0, 3.0}))});
  ASSERT_TRUE(v && v->tensor());
  EXPECT_NEAR(v->tensor()->data[0], -0.2, 1e-12);
  EXPECT_NEAR(v->tensor()->data[1], 0.0, 1e-12);
  EXPECT_NEAR(v->tensor()->data[2], 3.0, 1e-12);
}

TEST(LemmaFileValidate, RightWrongAndOpaque) {
  validate::Options opts;
  opts.cases = 4;
  LemmaFile good = parseLemmaFile(dataPath("leaky.lemmas"));
  validate::installCustomOps(good);
  auto r = validate::validateFileLemmas(good, opts);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].status, validate::Status::Tested) << r[0].detail;
  EXPECT_EQ(validate::requireValidated(good, r, false), "");

  LemmaFile wrong = parseLemmaFile(dataPath("wrong.lemmas"));
  validate::installCustomOps(wrong);
  r = validate::validateFileLemmas(wrong, opts);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].status, validate::Status::Failed);
  try {
    validate::requireValidated(wrong, r, true);  // trusting unvalidated lemmas never admits a wrong one
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("wrong.lemmas:4: error: lemma leaky-relu-concat-swapped is wrong"),
              std::string::npos);
  }

  LemmaFile opaque = parseLemmaFile(dataPath("opaque.lemmas"));
  r = validate::validateFileLemmas(opaque, opts);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].status, validate::Status::Unvalidated);
  EXPECT_THROW(validate::requireValidated(opaque, r, false), InputError);
  EXPECT_NE(validate::requireValidated(opaque, r, true).find("warning: TRUSTING UNVALIDATED LEMMA"), std::string::npos);
}

// ---- the CLI ------------------------------------------------------------------

TEST(LemmaFileCli, CheckUsesAValidatedFileLemma) {
  auto without = runTangle({"check", dataPath("check.rel")});
  EXPECT_EQ(without.exitCode, 1) << without.out << without.err;  // leaky_relu is opaque: no relation
  auto with = runTangle({"check", dataPath("check.rel"), "--lemmas", dataPath("leaky.lemmas")});
  EXPECT_EQ(with.exitCode, 0) << with.out << with.err;
  EXPECT_NE(with.out.find("S.leaky_relu = concat(D0.leaky_relu, D1.leaky_relu, dim=0)"), std::string::npos);
  EXPECT_NE(with.out.find("leaky-relu-concat=1"), std::string::npos);
  auto inRel = runTangle({"check", dataPath("check_with_lemmas.rel")});
  EXPECT_EQ(inRel.exitCode, 0) << inRel.out << inRel.err;
}

TEST(LemmaFileCli, WrongLemmaIsRefused) {
  auto r = runTangle({"check", dataPath("check.rel"), "--lemmas", dataPath("wrong.lemmas"), "--trust-unvalidated"});
  EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("wrong.lemmas:4: error: lemma leaky-relu-concat-swapped is wrong"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("refines"), std::string::npos);
}

TEST(LemmaFileCli, OpaqueLemmaNeedsTrust) {
  auto r = runTangle({"check", dataPath("check.rel"), "--lemmas", dataPath("opaque.lemmas")});
  EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("opaque.lemmas:4: error: lemma leaky-relu-concat-trusted is unvalidated"), std::string::npos)
      << r.err;
  auto t = runTangle({"check", dataPath("check.rel"), "--lemmas", dataPath("opaque.lemmas"), "--trust-unvalidated"});
  EXPECT_EQ(t.exitCode, 0) << t.out << t.err;
  EXPECT_NE(t.err.find("warning: TRUSTING UNVALIDATED LEMMA leaky-relu-concat-trusted"), std::string::npos) << t.err;
}

TEST(LemmaFileCli, ValidateTableIncludesFileLemmas) {
  auto ok = runTangle({"lemmas", "--validate", "--cases", "1", "--lemmas", dataPath("leaky.lemmas")});
  EXPECT_EQ(ok.exitCode, 0) << ok.out << ok.err;
  EXPECT_NE(ok.out.find("leaky-relu-concat "), std::string::npos);
  auto bad = runTangle({"lemmas", "--validate", "--cases", "1", "--lemmas", dataPath("wrong.lemmas")});
  EXPECT_EQ(bad.exitCode, 1) << bad.out << bad.err;
  EXPECT_NE(bad.out.find("FAILED leaky-relu-concat-swapped"), std::string::npos);
  auto missing = runTangle({"check", dataPath("check.rel"), "--lemmas", dataPath("no_such.lemmas")});
  EXPECT_EQ(missing.exitCode, 2);
  auto missingInRel = runTangle({"check", dataPath("missing_lemmas.rel")});
  EXPECT_EQ(missingInRel.exitCode, 2);
  EXPECT_NE(missingInRel.err.find("missing_lemmas.rel:5: error: cannot read the lemma file"), std::string::npos)
      << missingInRel.err;
}

}  // namespace
}  // namespace tangle::lemmas
