#include "validate/validate.h"

#include <chrono>
#include <fmt/format.h>
#include <random>

#include "ops/ops.h"
#include "validate/check.h"
#include "validate/generate.h"

namespace tangle::validate {

namespace {

bool anyClassMerged(const eg::EGraph& g) {
  for (eg::Id c : g.classIds())
    if (g.eclass(c).nodes.size() > 1) return true;
  return false;
}

uint64_t seedFor(uint64_t seed, const std::string& name) {
  uint64_t h = 1469598103934665603ULL ^ seed;  // FNV-1a over the name
  for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  return h;
}

}  // namespace

std::string LemmaResult::method() const {
  if (cases == 0) return "-";
  if (proved == cases) return fmt::format("proved (z3, {} shapes)", proved);
  if (proved) return fmt::format("tested {} cases ({} proved with z3)", cases, proved);
  return fmt::format("tested {} cases", cases);
}

LemmaResult validateRule(const eg::Rule& rule, const Options& opts) {
  auto start = std::chrono::steady_clock::now();
  LemmaResult res;
  res.name = rule.name;
  std::mt19937_64 rng(seedFor(opts.seed, rule.name));
  const Builder* builder = builderFor(rule.name);
  auto tree = parsePatternTree(rule.lhs.text());
  if (!builder && !tree) {
    res.detail = "cannot read the left-hand side pattern " + rule.lhs.text();
    return res;
  }
  eg::RunLimits limits;
  limits.maxIterations = 2;
  limits.maxNodes = 5000;
  limits.maxSeconds = 2;
  std::vector<eg::Rule> rules{rule};
  size_t maxAttempts = opts.cases * opts.attemptsPerCase;
  for (; res.attempts < maxAttempts && res.cases < opts.cases; ++res.attempts) {
    eg::EGraph g(ops::inferData);
    Gen gen(g, rng);
    auto root = builder ? (*builder)(gen) : gen.instantiate(*tree);
    if (!root) continue;
    ++res.built;
    if (gen.chance(0.3)) gen.addComplementarySlices();
    std::vector<eg::ENode> original;
    for (eg::Id c : g.classIds())
      for (const eg::ENode& n : g.eclass(c).nodes) original.push_back(n);
    try {
      eg::run(g, rules, limits);
    } catch (const std::exception& e) {
      res.status = Status::Failed;
      res.detail = std::string("the rule threw: ") + e.what();
      break;
    }
    if (!g.conflicts().empty()) {
      res.status = Status::Failed;
      res.detail = "type conflict on merge: " + g.conflicts().front();
      break;
    }
    if (!anyClassMerged(g)) continue;
    if (opts.symbolic && isPureRearrangement(g)) {
      if (auto r = checkSymbolic(g)) {
        ++res.cases;
        if (!r->ok) {
          res.status = Status::Failed;
          res.detail = r->counterexample;
          break;
        }
        ++res.proved;
        continue;
      }
    }
    // Two value draws (signed, positive) that the instance is defined on;
    // a few redraws when a draw leaves its domain.
    size_t checked = 0;
    CheckResult r;
    for (int draw = 0; draw < 8 && checked < 2 && r.ok; ++draw) {
      r = checkNumeric(g, rng, draw % 2 == 1, gen.intLeaves(), original);
      if (r.outOfDomain) {
        ++res.outOfDomain;
        continue;
      }
      ++checked;
    }
    if (!r.ok) {
      ++res.cases;
      res.status = Status::Failed;
      res.detail = r.counterexample;
      break;
    }
    if (checked) ++res.cases;
  }
  if (res.status != Status::Failed) {
    if (res.cases == 0) {
      res.status = Status::Unvalidated;
      res.detail = res.built == 0 ? fmt::format("no well-typed left-hand side in {} attempts", res.attempts)
                   : res.outOfDomain
                       ? fmt::format("{} left-hand sides built in {} attempts; where the rule fired, the random "
                                     "values were outside the instance's domain {} times",
                                     res.built, res.attempts, res.outOfDomain)
                       : fmt::format("never fired: {} left-hand sides built in {} attempts, the guard or "
                                     "applier refused all",
                                     res.built, res.attempts);
    } else {
      res.status = res.proved == res.cases ? Status::Proved : Status::Tested;
    }
  }
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return res;
}

std::vector<LemmaResult> validateLemmas(const std::vector<lemmas::Lemma>& lemmas, const Options& opts) {
  std::vector<LemmaResult> out;
  out.reserve(lemmas.size());
  for (const lemmas::Lemma& l : lemmas) out.push_back(validateRule(l.rule, opts));
  return out;
}

bool allValidated(const std::vector<LemmaResult>& results) {
  for (const LemmaResult& r : results)
    if (r.status == Status::Failed || r.status == Status::Unvalidated) return false;
  return true;
}

std::string formatReport(const std::vector<LemmaResult>& results, double seconds) {
  size_t width = 5;
  for (const LemmaResult& r : results) width = std::max(width, r.name.size());
  std::string out = fmt::format("{:<{}}  {:<36}  {}\n", "lemma", width, "method", "result");
  size_t counts[4] = {0, 0, 0, 0};
  std::string details;
  for (const LemmaResult& r : results) {
    ++counts[static_cast<int>(r.status)];
    const char* result = r.status == Status::Failed ? "FAILED" : r.status == Status::Unvalidated ? "UNVALIDATED" : "ok";
    out += fmt::format("{:<{}}  {:<36}  {}\n", r.name, width, r.method(), result);
    if (!r.detail.empty()) details += fmt::format("\n{} {}:\n{}\n", result, r.name, r.detail);
  }
  out += details;
  out += fmt::format("\n{} lemmas: {} proved, {} tested, {} failed, {} unvalidated ({:.1f} s)\n", results.size(),
                     counts[0], counts[1], counts[2], counts[3], seconds);
  return out;
}

}  // namespace tangle::validate
