// Lemma synthesis (Emerge §3.3-3.4, Algorithm 2): `tangle synth`.
//
// When the check cannot prove a relation between a spec tensor and an
// implementation expression whose values agree -- the first spec tensor left
// without a relation (candidates from values, or given), or an expectation that
// does not hold -- the two computations are taken back to their coarsest
// shared frontier (frontier.h) and abstracted into a rule lhs => rhs. Every
// rule is validated by the lemma validator (Z3 for pure rearrangements, else
// random instances against the reference kernels, domain-aware sampling) in
// its most general form first (integer attributes as variables), then with its
// attributes as found. Accepted rules go into a lemma file (docs/lemma-files.md)
// with their evidence level and origin; rejected ones are reported with the
// counterexample and never used. The check is then re-run with that file
// loaded (which validates it again), for a few rounds while rules are found.
#pragma once

#include <string>
#include <vector>

#include "driver/check.h"
#include "validate/validate.h"

namespace tangle::synth {

struct SynthRequest {
  CheckRequest check;                   // the check whose gaps to close (its --lemmas, --without-lemma, options)
  std::vector<std::string> candidates;  // "S.x = EXPR" in the relation language (e.g. from tangle propose)
  std::string outPath;                  // the lemma file written (overwritten)
  size_t rounds = 4;                    // checks re-run with the new rules, at most
  validate::Options validation = {};    // cases per rule (20 by default)
  uint64_t seed = 1;                    // random inputs of the value candidates
};

struct SynthRule {
  std::string name, lhs, rhs;
  std::string conditions;  // shape side conditions ("?v1:1 == ?v3:0, ..."), empty when none
  std::string target;      // "S.gelu = concat(D0.gelu, D1.gelu, dim=1)"
  std::string origin;      // where the candidate came from, and the spec line
  bool generalized = false;
  validate::LemmaResult result;
  bool accepted() const {
    return result.status == validate::Status::Proved || result.status == validate::Status::Tested;
  }
  std::string evidence() const;  // "proved (z3, 20 shapes)", "tested 20 cases (random instances, reference kernels)"
};

struct SynthReport {
  std::vector<SynthRule> rules;     // accepted and rejected, in the order tried
  std::vector<std::string> notes;   // targets without a rule, and why
  Verdict before = Verdict::Refines, after = Verdict::Refines;
  size_t failingExpectationsAfter = 0;
  size_t accepted() const;
  bool refines() const { return after == Verdict::Refines && failingExpectationsAfter == 0; }
};

// Throws InputError for bad input (the check's, a bad candidate, an unwritable output).
SynthReport synthesize(const SynthRequest& req);

// The lemma file: accepted rules with their evidence and origin; rejected ones as comments.
std::string lemmaFileText(const SynthReport& r, const std::string& relationPath);
// What was tried, accepted and refused (with counterexamples), and the final verdict.
std::string reportText(const SynthReport& r, const std::string& outPath);

}  // namespace tangle::synth
