#include "driver/check.h"

#include <chrono>

#include "import/import.h"
#include "infer/symbol_facts.h"
#include "lemmas/lemma_file.h"
#include "lemmas/lemmas.h"
#include "validate/lemma_file_check.h"

namespace tangle {

namespace {
double secondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}
// Parses, installs (custom op types and semantics) and validates the lemma
// files; returns their rules. Throws InputError for a wrong lemma.
std::vector<eg::Rule> loadLemmaFiles(const CheckRequest& req, const RelationFile& raw, CheckRun& run) {
  std::vector<lemmas::LemmaFile> files;
  for (const std::string& p : req.lemmaPaths) files.push_back(lemmas::parseLemmaFile(p));
  for (size_t i = 0; i < raw.lemmaPaths.size(); ++i) {
    try {
      files.push_back(lemmas::parseLemmaFile(raw.lemmaPaths[i]));
    } catch (const InputError& e) {
      if (e.loc().line > 0) throw;
      throw InputError(raw.lemmaLocs[i], "cannot read the lemma file " + raw.lemmaPaths[i]);
    }
  }
  if (files.empty()) return {};
  lemmas::LemmaFile file = lemmas::mergeLemmaFiles(std::move(files));
  validate::installCustomOps(file);
  validate::Options vo;
  vo.cases = req.lemmaCases;
  vo.attemptsPerCase = 100;
  auto results = validate::validateFileLemmas(file, vo);
  run.lemmaWarnings = validate::requireValidated(file, results, req.trustUnvalidated);
  run.fileLemmas = file.lemmas.size();
  return file.rules();
}

}  // namespace

std::unique_ptr<CheckRun> runCheck(const CheckRequest& req) {
  auto run = std::make_unique<CheckRun>();
  RelationFile raw = parseRelationFile(req.relationPath);
  std::string specPath = req.specPath ? *req.specPath : raw.specPath.value_or("");
  std::vector<std::string> implPaths = !req.implPaths.empty() ? req.implPaths : raw.implPaths();
  if (specPath.empty()) throw InputError({req.relationPath, 0}, "no spec graph: give `spec PATH` in the relation file or a SPEC argument");
  if (implPaths.empty())
    throw InputError({req.relationPath, 0}, "no implementation graphs: give `impl PATTERN ranks N` in the relation file or --impl");

  InferOptions options = inferOptionsFrom(raw);  // bad options fail before any graph is read
  std::vector<eg::Rule> fileRules = loadLemmaFiles(req, raw, *run);
  auto t0 = std::chrono::steady_clock::now();
  run->spec = importGraph(specPath);
  for (auto& p : implPaths) run->impl.push_back(importGraph(p));
  run->info.importSeconds = secondsSince(t0);
  // Each graph's symbolic sizes are its own ("S.s0", "D1.s0") until a fact relates them.
  qualifySymbols(run->spec, "S.");
  noteSymbolicSizes(run->spec, *run->symbols);
  for (size_t r = 0; r < run->impl.size(); ++r) {
    qualifySymbols(run->impl[r], "D" + std::to_string(r) + ".");
    noteSymbolicSizes(run->impl[r], *run->symbols);
  }
  run->info.relationPath = req.relationPath;
  run->info.specPath = specPath;
  run->info.implPaths = implPaths;

  run->relation = raw.expand(static_cast<int>(implPaths.size()));
  addAssumptions(run->relation, run->spec, run->impl, *run->symbols);
  LowerOptions lo;
  lo.groups = run->relation.groups;
  for (auto& t : run->relation.cutInputs) {
    if (t.side == TensorName::Side::Spec) lo.cutSpec.push_back(t.name);
    else lo.cutImpl.push_back({t.rank, t.name});
  }
  run->specL = std::make_unique<LGraph>(lowerSpec(run->spec, lo, *run->symbols));
  run->implL = std::make_unique<LGraph>(lowerImpl(run->impl, lo, *run->symbols));
  Problem p{run->specL.get(), run->implL.get(), &run->relation, run->symbols.get()};
  addRelationShapeFacts(p, *run->symbols);
  canonicalizeSymbols(*run->specL, *run->symbols);
  canonicalizeSymbols(*run->implL, *run->symbols);
  run->info.symbolFacts = run->symbols->describe();
  checkAnnotatedShapes(*run->specL, *run->symbols);
  checkAnnotatedShapes(*run->implL, *run->symbols);

  if (fileRules.empty()) {
    run->result = inferRelations(p, lemmas::allLemmas(), options);
  } else {
    std::vector<eg::Rule> rules = lemmas::allLemmas();
    rules.insert(rules.end(), fileRules.begin(), fileRules.end());
    run->result = inferRelations(p, rules, options);
  }
  if (req.replay) run->replay = replay::replayCheck(*run->specL, *run->implL, run->relation, run->result, *req.replay, *run->symbols);
  return run;
}

int exitCodeOf(Verdict v) {
  switch (v) {
    case Verdict::Refines: return 0;
    case Verdict::Violation: return 1;
    case Verdict::Inconclusive: return 3;
  }
  return 1;
}

}  // namespace tangle
