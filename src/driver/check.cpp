#include "driver/check.h"

#include <chrono>

#include "import/import.h"
#include "infer/symbol_facts.h"
#include "lower/inplace.h"
#include "lemmas/lemma_file.h"
#include "lemmas/lemmas.h"
#include "validate/lemma_file_check.h"

namespace tangle {

namespace {

double secondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// The graphs to check: the request's paths, else the relation file's.
// Missing ones are InputErrors at the relation file.
void resolveGraphPaths(const CheckRequest& req, const RelationFile& rel, RunInfo& info) {
  info.relationPath = req.relationPath;
  info.specPath = req.specPath ? *req.specPath : rel.specPath.value_or("");
  info.implPaths = !req.implPaths.empty() ? req.implPaths : rel.implPaths();
  if (info.specPath.empty())
    throw InputError({req.relationPath, 0}, "no spec graph: give `spec PATH` in the relation file or a SPEC argument");
  if (info.implPaths.empty())
    throw InputError({req.relationPath, 0}, "no implementation graphs: give `impl PATTERN ranks N` in the relation file or --impl");
}

// Parses, installs (custom op types and semantics) and validates the lemma
// files of the request and of the relation file's `lemmas` statements; keeps
// their rules. Throws InputError for a wrong lemma.
void loadLemmaFiles(const CheckRequest& req, const RelationFile& rel, PreparedCheck& pc) {
  std::vector<lemmas::LemmaFile> files;
  for (const std::string& p : req.lemmaPaths) files.push_back(lemmas::parseLemmaFile(p));
  for (size_t i = 0; i < rel.lemmaPaths.size(); ++i) {
    try {
      files.push_back(lemmas::parseLemmaFile(rel.lemmaPaths[i]));
    } catch (const InputError& e) {
      if (e.loc().line > 0) throw;
      throw InputError(rel.lemmaLocs[i], "cannot read the lemma file " + rel.lemmaPaths[i]);
    }
  }
  if (files.empty()) return;
  lemmas::LemmaFile file = lemmas::mergeLemmaFiles(std::move(files));
  validate::installCustomOps(file);
  validate::Options vo;
  vo.cases = req.lemmaCases;
  vo.attemptsPerCase = 100;
  auto results = validate::validateFileLemmas(file, vo);
  pc.lemmaWarnings = validate::requireValidated(file, results, req.trustUnvalidated);
  pc.fileLemmas = file.lemmas.size();
  pc.fileRules = file.rules();
}

// Imports the spec and the implementation graphs (timed).
void importGraphs(PreparedCheck& pc) {
  auto t0 = std::chrono::steady_clock::now();
  pc.spec = importGraph(pc.info.specPath);
  for (auto& p : pc.info.implPaths) pc.impl.push_back(importGraph(p));
  // Eager traces keep in-place grad accumulation and recv_ (lower/inplace.h).
  functionalizeInplace(pc.spec);
  for (auto& g : pc.impl) functionalizeInplace(g);
  pc.info.importSeconds = secondsSince(t0);
}

// Each graph's symbolic sizes are its own ("S.s0", "D1.s0") until a fact
// relates them; every one of them is a size (>= 0).
void qualifyAndNoteSymbols(PreparedCheck& pc) {
  qualifySymbols(pc.spec, Owner::spec());
  noteSymbolicSizes(pc.spec, *pc.symbols);
  for (size_t r = 0; r < pc.impl.size(); ++r) {
    qualifySymbols(pc.impl[r], Owner::impl(static_cast<int32_t>(r)));
    noteSymbolicSizes(pc.impl[r], *pc.symbols);
  }
}

// Lowers both sides (input cuts and groups from the expanded relation file);
// collectives teach the context that their inputs have equal sizes.
void lowerGraphs(PreparedCheck& pc) {
  LowerOptions lo;
  lo.groups = pc.relation.groups;
  for (auto& t : pc.relation.cutInputs) {
    if (t.side == TensorName::Side::Spec) lo.cutSpec.push_back(t.name);
    else lo.cutImpl.push_back({t.rank, t.name});
  }
  pc.specL = std::make_unique<LGraph>(lowerSpec(pc.spec, lo, *pc.symbols));
  pc.implL = std::make_unique<LGraph>(lowerImpl(pc.impl, lo, *pc.symbols));
}

// With every fact known: the input relations' shapes, then every symbolic
// size in normal form, then the annotated shapes checked under the facts.
void settleSymbols(PreparedCheck& pc) {
  addRelationShapeFacts(pc.problem(), *pc.symbols);
  canonicalizeSymbols(*pc.specL, *pc.symbols);
  canonicalizeSymbols(*pc.implL, *pc.symbols);
  pc.info.symbolFacts = pc.symbols->describe();
  checkAnnotatedShapes(*pc.specL, *pc.symbols);
  checkAnnotatedShapes(*pc.implL, *pc.symbols);
}

// Inference with the built-in lemmas and the lemma files'.
InferResult infer(const PreparedCheck& pc, const CheckRequest& req) {
  InferOptions opts = pc.options;
  if (req.onOperator)
    opts.onOperator = [&](size_t done, size_t total, int node) { req.onOperator(done, total, *pc.specL, node); };
  if (pc.fileRules.empty()) return inferRelations(pc.problem(), lemmas::allLemmas(), opts);
  std::vector<eg::Rule> rules = lemmas::allLemmas();
  rules.insert(rules.end(), pc.fileRules.begin(), pc.fileRules.end());
  return inferRelations(pc.problem(), rules, opts);
}

}  // namespace

// The order of the steps is the order in which input errors are reported:
// the relation file and its options first, then lemma files, graphs,
// the relation file's rank expansion, assumptions, lowering, shapes.
std::unique_ptr<PreparedCheck> prepareCheck(const CheckRequest& req) {
  auto pc = std::make_unique<PreparedCheck>();
  RelationFile& rel = pc->relation;
  rel = parseRelationFile(req.relationPath);  // the only time it is read
  resolveGraphPaths(req, rel, pc->info);
  for (const std::string& kv : req.options) {
    auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) throw InputError({}, "--option needs KEY=VALUE, got '" + kv + "'");
    rel.options[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  pc->options = inferOptionsFrom(rel);  // bad options fail before any graph is read
  loadLemmaFiles(req, rel, *pc);
  importGraphs(*pc);
  qualifyAndNoteSymbols(*pc);
  rel = rel.expand(static_cast<int>(pc->impl.size()));
  addAssumptions(rel, pc->spec, pc->impl, *pc->symbols);
  lowerGraphs(*pc);
  settleSymbols(*pc);
  return pc;
}

std::unique_ptr<CheckRun> runCheck(const CheckRequest& req) {
  auto run = std::make_unique<CheckRun>();
  run->prepared = prepareCheck(req);
  const PreparedCheck& pc = *run->prepared;
  run->result = infer(pc, req);
  if (req.replay) {
    auto t0 = std::chrono::steady_clock::now();
    run->replay = replay::replayCheck(*pc.specL, *pc.implL, pc.relation, run->result, *req.replay, *pc.symbols);
    run->replay->seconds = secondsSince(t0);
  }
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

