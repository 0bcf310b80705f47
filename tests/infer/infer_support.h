// Small checks for the inference tests: FX text graphs written in the test,
// lowered as the driver does (src/driver/check.cpp, static shapes only), and
// the relation given as text.
#pragma once

#include "../fx_text.h"
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "import/fx_importer.h"
#include "infer/infer.h"
#include "infer/infer_state.h"
#include "lemmas/lemmas.h"

namespace tangle::testing {

// The FX text print_readable() gives for `forward(self, PARAMS)` with BODY
// (one statement per line, the last one `return (...)`).
inline std::string fx(const std::string& params, const std::string& body) {
  std::string text = testing::fxModuleText(params, body);
  return text;
}

// One check: graphs, relation, lowered graphs and (after infer()) the result.
// Heap-allocated: the lowered graphs and the result point into it.
struct Check {
  Graph spec;
  std::vector<Graph> impl;
  RelationFile relation;
  std::unique_ptr<LGraph> specL, implL;
  InferResult result;
  sym::Context symbols;  // facts about symbolic sizes (none in these graphs)

  Problem problem() const { return Problem{specL.get(), implL.get(), &relation, &symbols}; }

  const InferResult& infer(const InferOptions& opts = {}) {
    result = inferRelations(problem(), lemmas::allLemmas(), opts);
    return result;
  }
  // Options from the relation text (`option ...`).
  const InferResult& inferWithRelationOptions() { return infer(inferOptionsFrom(relation)); }

  std::string specName(int node) const { return specL->nodes[node].name; }
  std::string implName(int node) const { return implL->nodes[node].name; }
  int specId(const std::string& name) const { return specL->resolve(specL->find(name).value()); }
  int implId(const std::string& name) const { return implL->resolve(implL->find(name).value()); }
};

// Every rank runs `implText`.
inline std::unique_ptr<Check> makeCheck(const std::string& specText, const std::vector<std::string>& implTexts,
                                        const std::string& relationText) {
  auto c = std::make_unique<Check>();
  c->spec = importFxText(specText, "spec.py");
  for (size_t r = 0; r < implTexts.size(); ++r)
    c->impl.push_back(importFxText(implTexts[r], "impl.r" + std::to_string(r) + ".py"));
  c->relation = parseRelationText(relationText, "check.rel").expand(static_cast<int>(implTexts.size()));
  LowerOptions lo;
  lo.groups = c->relation.groups;
  c->specL = std::make_unique<LGraph>(lowerSpec(c->spec, lo, c->symbols));
  c->implL = std::make_unique<LGraph>(lowerImpl(c->impl, lo, c->symbols));
  checkAnnotatedShapes(*c->specL, c->symbols);
  checkAnnotatedShapes(*c->implL, c->symbols);
  return c;
}

inline std::unique_ptr<Check> makeCheck(const std::string& specText, const std::string& implText, int ranks,
                                        const std::string& relationText) {
  return makeCheck(specText, std::vector<std::string>(ranks, implText), relationText);
}

inline std::vector<std::string> formatted(const std::vector<eg::Term>& terms) {
  std::vector<std::string> out;
  for (auto& t : terms) out.push_back(formatTerm(t));
  return out;
}

// The relations found for spec tensor `name` (R, in res.all), formatted.
inline std::vector<std::string> relationsFound(const InferResult& res, const std::string& name) {
  for (auto& tr : res.all)
    if (tr.tensor == name) return formatted(tr.exprs);
  return {};
}

inline bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// An InferState ready for its operators' searches (what inferRelations does
// before the walk); `order` receives the spec operators in walk order.
inline std::unique_ptr<InferState> prepareState(const Check& c, const InferOptions& opts, std::vector<SpecOp>& order) {
  auto st = std::make_unique<InferState>(c.problem(), lemmas::allLemmas(), opts);
  loadInputRelations(*st);
  std::vector<int> targets = outputsOfInterest(*st);
  markTargets(*st, targets);
  order = specOrder(*st, targets);
  return st;
}

}  // namespace tangle::testing
