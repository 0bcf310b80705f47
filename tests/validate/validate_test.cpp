#include "validate/validate.h"

#include <gtest/gtest.h>

#include "egraph/pattern.h"
#include "lemmas/lemmas.h"

namespace tangle::validate {
namespace {

using eg::Attr;
using eg::Id;

Options fast(size_t cases = 8) {
  Options o;
  o.cases = cases;
  return o;
}

std::optional<Id> make(eg::EGraph& g, const char* op, eg::AttrList a, std::vector<Id> kids) {
  eg::ENode n;
  n.op = eg::intern(op);
  n.attrs = eg::internAttrs(a);
  n.children = std::move(kids);
  return g.tryAdd(std::move(n));
}

eg::Rule applierRule(std::string name, const char* lhs, std::function<std::optional<Id>(eg::EGraph&, const eg::Match&)> f) {
  eg::Rule r;
  r.name = std::move(name);
  r.lhs = eg::Pattern::parse(lhs);
  r.apply = std::move(f);
  return r;
}

eg::Rule rewriteRule(std::string name, const char* lhs, const char* rhs) {
  eg::Rule r;
  r.name = std::move(name);
  r.lhs = eg::Pattern::parse(lhs);
  r.rhs = eg::Pattern::parse(rhs);
  return r;
}

// add(arange, c) = arange shifted by c with no dtype guard (equiv4's first
// version, in effect): wrong when c is a 0-d f32 tensor holding an integer,
// which makes the sum f32. The builder draws such scalars: the merge of an
// f32 class with an i64 range fails validation; the real lemma passes.
TEST(Validate, CatchesArangeShiftIgnoringDtypes) {
  auto shift = [](eg::EGraph& g, const eg::Match& m) -> std::optional<Id> {
    const eg::ClassData& c = g.data(m.subst.cls("c"));
    if (!c.constant || *c.constant != static_cast<double>(static_cast<int64_t>(*c.constant))) return std::nullopt;
    int64_t k = static_cast<int64_t>(*c.constant);
    auto a = m.subst.attr("a"), b = m.subst.attr("b"), s = m.subst.attr("s");
    return make(g, "arange", {Attr::integer(a.i + k), Attr::integer(b.i + k), s}, {});
  };
  eg::Rule wrong = applierRule("add-arange-scalar", "(add (arange[?a, ?b, ?s]) ?c)", shift);
  LemmaResult r = validateRule(wrong, fast(16));
  EXPECT_EQ(r.status, Status::Failed) << r.detail;
  EXPECT_NE(r.detail.find("type conflict"), std::string::npos) << r.detail;
  for (const auto& l : lemmas::lemmaTable())
    if (l.rule.name == "add-arange-scalar") {
      EXPECT_NE(validateRule(l.rule, fast(16)).status, Status::Failed);
    }
}

// softmax distributed over a concat with no guard: wrong when the concat runs
// along the softmax dim (each piece is normalized on its own).
TEST(Validate, CatchesSoftmaxAlongItsDim) {
  auto rule = applierRule("wrong-softmax-concat", "(softmax[?dim, ?h] (concat[?d] ?xs...))",
                          [](eg::EGraph& g, const eg::Match& m) -> std::optional<Id> {
                            std::vector<Id> parts;
                            for (Id x : m.subst.list("xs")) {
                              auto s = make(g, "softmax", {m.subst.attr("dim"), m.subst.attr("h")}, {x});
                              if (!s) return std::nullopt;
                              parts.push_back(*s);
                            }
                            return make(g, "concat", {m.subst.attr("d")}, parts);
                          });
  LemmaResult r = validateRule(rule, fast());
  EXPECT_EQ(r.status, Status::Failed);
  EXPECT_NE(r.detail.find("softmax"), std::string::npos) << r.detail;
  EXPECT_NE(r.detail.find("differs"), std::string::npos) << r.detail;
  // The library's version (guarded: dim != d) passes.
  auto good = lemmas::lemmasNamed({"softmax-concat"});
  EXPECT_EQ(validateRule(good[0], fast()).status, Status::Tested);
}

// slice of a slice with the inner offset forgotten: Z3 finds the difference.
TEST(Validate, CatchesWrongSliceShiftWithZ3) {
  auto rule = rewriteRule("wrong-slice-slice", "(slice[?d, ?s2, ?e2, 1] (slice[?d, ?s1, ?e1, 1] ?x))",
                          "(slice[?d, ?s2, ?e2, 1] ?x)");
  LemmaResult r = validateRule(rule, fast());
  EXPECT_EQ(r.status, Status::Failed);
  EXPECT_NE(r.detail.find("Z3 found"), std::string::npos) << r.detail;
  // Without Z3 the interpreter finds it too.
  Options noZ3 = fast();
  noZ3.symbolic = false;
  LemmaResult n = validateRule(rule, noZ3);
  EXPECT_EQ(n.status, Status::Failed);
  EXPECT_NE(n.detail.find("differs"), std::string::npos) << n.detail;
}

// add(sum(xs), y) = sum(add(x_i, y)) counts y n times.
TEST(Validate, CatchesAddOverSum) {
  auto rule = applierRule("wrong-add-sum", "(add (sum ?xs...) ?y)", [](eg::EGraph& g, const eg::Match& m) -> std::optional<Id> {
    std::vector<Id> parts;
    for (Id x : m.subst.list("xs")) {
      auto a = make(g, "add", {}, {x, m.subst.cls("y")});
      if (!a) return std::nullopt;
      parts.push_back(*a);
    }
    return parts.size() == 1 ? parts[0] : make(g, "sum", {}, parts);
  });
  EXPECT_EQ(validateRule(rule, fast()).status, Status::Failed);
}

// mean over the concat dim is not the sum of the pieces' means.
TEST(Validate, CatchesMeanOverReducedConcatDim) {
  auto rule = applierRule("wrong-mean-concat", "(mean_dim[?dims, ?keep] (concat[?d] ?xs...))",
                          [](eg::EGraph& g, const eg::Match& m) -> std::optional<Id> {
                            const auto& dims = m.subst.attr("dims").list;
                            int64_t d = m.subst.integer("d");
                            if (std::find(dims.begin(), dims.end(), d) == dims.end()) return std::nullopt;
                            std::vector<Id> parts;
                            for (Id x : m.subst.list("xs")) {
                              auto r = make(g, "mean_dim", {m.subst.attr("dims"), m.subst.attr("keep")}, {x});
                              if (!r) return std::nullopt;
                              parts.push_back(*r);
                            }
                            return make(g, "sum", {}, parts);
                          });
  EXPECT_EQ(validateRule(rule, fast()).status, Status::Failed);
}

// A missing guard that merges tensors of different shapes.
TEST(Validate, CatchesShapeChangingRule) {
  auto rule = rewriteRule("wrong-slice-full", "(slice[?d, 0, ?e, 1] ?x)", "?x");
  LemmaResult r = validateRule(rule, fast());
  EXPECT_EQ(r.status, Status::Failed);
  EXPECT_FALSE(r.detail.empty());
}

TEST(Validate, NeverFiringRuleIsUnvalidated) {
  eg::Rule rule = rewriteRule("never", "(exp ?x)", "?x");
  rule.guard = [](const eg::EGraph&, eg::Subst&) { return false; };
  Options o = fast(2);
  o.attemptsPerCase = 20;
  LemmaResult r = validateRule(rule, o);
  EXPECT_EQ(r.status, Status::Unvalidated);
  EXPECT_NE(r.detail.find("never fired"), std::string::npos) << r.detail;
  std::string report = formatReport({r}, 0.1);
  EXPECT_NE(report.find("UNVALIDATED"), std::string::npos);
  EXPECT_FALSE(allValidated({r}));
}

TEST(Validate, RearrangementLemmasAreProvedWithZ3) {
  for (const auto& rule : lemmas::lemmasNamed({"slice-concat", "reshape-concat", "sum-of-concats", "slices-tile-whole"})) {
    LemmaResult r = validateRule(rule, fast(4));
    EXPECT_EQ(r.status, Status::Proved) << rule.name << ": " << r.detail;
    EXPECT_EQ(r.method(), "proved (z3, 4 shapes)");
  }
}

// The whole library, a few cases per lemma: nothing fails, nothing is left unvalidated.
TEST(Validate, WholeLibrary) {
  auto results = validateLemmas(lemmas::lemmaTable(), fast(3));
  ASSERT_EQ(results.size(), lemmas::lemmaTable().size());
  for (const LemmaResult& r : results) {
    EXPECT_TRUE(r.status == Status::Proved || r.status == Status::Tested) << r.name << ": " << r.detail;
    EXPECT_EQ(r.cases, 3u) << r.name;
  }
  EXPECT_TRUE(allValidated(results));
}

TEST(Validate, DeterministicForASeed) {
  auto rule = lemmas::lemmasNamed({"matmul-concat-lhs"})[0];
  LemmaResult a = validateRule(rule, fast(5)), b = validateRule(rule, fast(5));
  EXPECT_EQ(a.attempts, b.attempts);
  EXPECT_EQ(a.built, b.built);
  Options other = fast(5);
  other.seed = 7;
  EXPECT_EQ(validateRule(rule, other).status, Status::Tested);
}

}  // namespace
}  // namespace tangle::validate
