// `tangle lemmas --validate`: every lemma is instantiated on random small
// shapes satisfying its guard (random left-hand sides in a fresh e-graph,
// then only that rule is run), and every e-class it touched is checked:
//   * pure rearrangement / sum e-graphs: proved element-wise with Z3 for
//     symbolic leaf contents ("proved (z3, K shapes)");
//   * otherwise: all nodes of a class must agree under the reference
//     interpreter on random leaf values ("tested N cases").
// A lemma that never fired in the attempts is "unvalidated", with the reason.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "egraph/rewrite.h"
#include "lemmas/lemmas.h"

namespace tangle::validate {

struct Options {
  uint64_t seed = 1;
  size_t cases = 20;         // fired instances wanted per lemma
  size_t attemptsPerCase = 200;  // instance attempts allowed per wanted case
  bool symbolic = true;      // use Z3 where the e-graph is a pure rearrangement
};

enum class Status { Proved, Tested, Failed, Unvalidated };

struct LemmaResult {
  std::string name;
  Status status = Status::Unvalidated;
  size_t cases = 0;     // instances where the rule fired (all checked)
  size_t proved = 0;    // of which proved with Z3
  size_t built = 0;     // well-typed left-hand sides built
  size_t attempts = 0;
  size_t outOfDomain = 0;  // value draws outside the instance's domain (redrawn)
  double seconds = 0;
  std::string detail;   // Failed: the counterexample; Unvalidated: the reason
  std::string method() const;  // "proved (z3, 20 shapes)", "tested 20 cases", ...
};

LemmaResult validateRule(const eg::Rule& rule, const Options& opts);
std::vector<LemmaResult> validateLemmas(const std::vector<lemmas::Lemma>& lemmas, const Options& opts);

// The table (lemma | method | result), then the counterexamples and reasons, then a summary line.
std::string formatReport(const std::vector<LemmaResult>& results, double seconds);
// True when every lemma is proved or tested.
bool allValidated(const std::vector<LemmaResult>& results);

}  // namespace tangle::validate
