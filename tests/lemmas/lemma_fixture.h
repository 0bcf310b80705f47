// Test fixture for lemmas: an e-graph typed by ops::inferData, leaves with
// types, terms written as patterns over named leaves, and equivalence checks.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "egraph/pattern.h"
#include "egraph/rewrite.h"
#include "lemmas/lemmas.h"
#include "ops/ops.h"
#include "sym/context.h"

namespace tangle::lemmas::testing {

class LemmaTest : public ::testing::Test {
 protected:
  sym::Context symbols;  // the e-graph's facts about symbolic sizes (none unless a test adds some)
  eg::EGraph g{ops::inferData, &symbols};
  eg::Subst vars;  // leaves by name, for terms

  // A leaf "D0.<name>" of type f32[shape], usable as ?name in terms.
  eg::Id leaf(const std::string& name, std::vector<Dim> shape, DType dt = DType::F32) {
    eg::ClassData d;
    d.types.push_back(TensorType{dt, std::move(shape)});
    eg::Id id = g.leaf("D0." + name, d);
    vars.classes[name] = id;
    return id;
  }
  eg::Id constant(const std::string& name, double v) {
    eg::ENode n;
    n.op = ops::syms().constant;
    n.attrs = eg::internAttrs({eg::Attr::real(v)});
    eg::Id id = g.add(n);
    vars.classes[name] = id;
    return id;
  }
  // Adds a term (pattern syntax, leaves as ?name); fails the test if ill-typed.
  eg::Id term(const std::string& text) {
    auto id = eg::Pattern::parse(text).instantiate(g, vars);
    EXPECT_TRUE(id.has_value()) << "ill-typed term " << text;
    return id ? *id : 0;
  }
  std::optional<eg::Id> tryTerm(const std::string& text) { return eg::Pattern::parse(text).instantiate(g, vars); }

  // The runner's report with the firings by lemma name (the runner counts them by index).
  struct NamedReport : eg::RunReport {
    std::map<std::string, size_t> firings;
  };
  NamedReport run(const std::vector<std::string>& names, size_t iterations = 6) {
    eg::RunLimits limits;
    limits.maxIterations = iterations;
    limits.maxSeconds = 5;
    std::vector<eg::Rule> rules = lemmasNamed(names);
    NamedReport report;
    static_cast<eg::RunReport&>(report) = eg::run(g, rules, limits);
    for (size_t i = 0; i < rules.size(); ++i) report.firings[rules[i].name] += report.eg::RunReport::firings[i];
    EXPECT_TRUE(g.conflicts().empty()) << g.conflicts().front();
    return report;
  }
  // True when `text` (added now; nodes the rules made are found by hashconsing)
  // is in the class of `id`.
  bool equiv(eg::Id id, const std::string& text) {
    auto other = tryTerm(text);
    if (!other) return false;
    g.rebuild();
    return g.find(id) == g.find(*other);
  }
  const TensorType* type(eg::Id id) { return g.data(id).tensor(); }
};

}  // namespace tangle::lemmas::testing
