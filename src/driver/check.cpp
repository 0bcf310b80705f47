#include "driver/check.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <thread>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include <sys/resource.h>

#include "import/import.h"
#include "infer/merged_sizes.h"
#include "infer/symbol_facts.h"
#include "lower/fsdp.h"
#include "lower/inplace.h"
#include "lemmas/lemma_file.h"
#include "lemmas/lemmas.h"
#include "support/parallel.h"
#include "validate/lemma_file_check.h"

namespace tangle {

namespace {

double secondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Developer aid: TANGLE_TRACE_PHASES=1 prints each stage's wall seconds (profiling --jobs).
// Wall, process CPU and this thread's CPU: under load only the CPU figures mean much.
double cpuSeconds(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}
// The process's peak resident memory so far (first touches of fresh pages
// cost the kernel's zeroing: a tenth of a 256-rank check).
long peakRssMb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;
}
struct PhaseTimer {
  const char* name;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  double cpu0 = cpuSeconds(CLOCK_PROCESS_CPUTIME_ID), thread0 = cpuSeconds(CLOCK_THREAD_CPUTIME_ID);
  ~PhaseTimer() {
    static const bool on = std::getenv("TANGLE_TRACE_PHASES") != nullptr;
    if (on)
      std::fprintf(stderr, "phase %s: %.3f s wall, %.3f s CPU (%.3f s on the calling thread), peak RSS %ld MB\n", name,
                   secondsSince(start), cpuSeconds(CLOCK_PROCESS_CPUTIME_ID) - cpu0,
                   cpuSeconds(CLOCK_THREAD_CPUTIME_ID) - thread0, peakRssMb());
  }
};

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

// Imports the spec, then the implementation graphs (timed), `jobs` ranks at a
// time. A graph's import touches nothing shared but the symbolic-size tables,
// whose ids (and so the order terms print in) follow the order symbols are
// first met: when the spec has symbolic sizes, the ranks are imported in order.
void importGraphs(PreparedCheck& pc, size_t jobs) {
  auto t0 = std::chrono::steady_clock::now();
  auto load = [](Graph& g, const std::string& path) {
    g = importGraph(path);
    lowerFsdpBuffers(g);      // FSDP2's out= buffer ops and in-place c10d collectives (lower/fsdp.h)
    functionalizeInplace(g);  // eager traces keep in-place grad accumulation and recv_ (lower/inplace.h)
  };
  load(pc.spec, pc.info.specPath);
  pc.impl.resize(pc.info.implPaths.size());
  parallelFor(pc.impl.size(), anySymbolicSize(pc.spec) ? 1 : jobs, [&](size_t r) { load(pc.impl[r], pc.info.implPaths[r]); });
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
void lowerGraphs(PreparedCheck& pc, size_t jobs) {
  LowerOptions lo;
  lo.jobs = jobs;
  lo.groups = pc.relation.groups;
  lo.fold = inferOptionsFrom(pc.relation).fold;
  for (auto& t : pc.relation.cutInputs) {
    if (t.side == TensorName::Side::Spec) lo.cutSpec.push_back(t.name);
    else lo.cutImpl.push_back({t.rank, t.name});
  }
  pc.specL = std::make_unique<LGraph>(lowerSpec(pc.spec, lo, *pc.symbols));
  pc.implL = std::make_unique<LGraph>(lowerImpl(pc.impl, lo, *pc.symbols));
}

void settleShapes(const PreparedCheck& pc) {
  checkAnnotatedShapes(*pc.specL, *pc.symbols);
  checkAnnotatedShapes(*pc.implL, *pc.symbols);
}

// With every fact known: the input relations' shapes, then every symbolic
// size in normal form, then (unless deferred) the annotated shapes checked under the facts.
void settleSymbols(PreparedCheck& pc, bool checkShapes) {
  addRelationShapeFacts(pc.problem(), *pc.symbols);
  canonicalizeSymbols(*pc.specL, *pc.symbols);
  canonicalizeSymbols(*pc.implL, *pc.symbols);
  pc.info.symbolFacts = pc.symbols->describe();
  if (checkShapes) settleShapes(pc);
}

bool hasSymbolicSizes(const LGraph& lg) {
  for (const LNode& n : lg.nodes)
    for (const TensorType& t : n.data.types)
      if (std::any_of(t.shape.begin(), t.shape.end(), [](Dim d) { return isSymbolic(d); })) return true;
  return false;
}

// Inference with the built-in lemmas and the lemma files'.
InferResult infer(const PreparedCheck& pc, const CheckRequest& req) {
  InferOptions opts = pc.options;
  opts.jobs = req.jobs;
  if (req.onOperator)
    opts.onOperator = [&](size_t done, size_t total, int node) { req.onOperator(done, total, *pc.specL, node); };
  if (pc.fileRules.empty() && pc.withoutLemmas.empty()) return inferRelations(pc.problem(), lemmas::allLemmas(), opts);
  std::vector<eg::Rule> rules = lemmas::allLemmas();
  rules.insert(rules.end(), pc.fileRules.begin(), pc.fileRules.end());
  std::erase_if(rules, [&](const eg::Rule& r) {
    return std::find(pc.withoutLemmas.begin(), pc.withoutLemmas.end(), r.name) != pc.withoutLemmas.end();
  });
  return inferRelations(pc.problem(), rules, opts);
}

}  // namespace

// The order of the steps is the order in which input errors are reported:
// the relation file and its options first, then lemma files, graphs,
// the relation file's rank expansion, assumptions, lowering, shapes.
namespace {

// prepareCheck; with checkShapes false the caller runs checkAnnotatedShapes.
std::unique_ptr<PreparedCheck> prepare(const CheckRequest& req, bool checkShapes) {
  auto pc = std::make_unique<PreparedCheck>();
  RelationFile& rel = pc->relation;
  {
    PhaseTimer t{"read-relation"};
    rel = parseRelationFile(req.relationPath);  // the only time it is read
  }
  resolveGraphPaths(req, rel, pc->info);
  for (const std::string& kv : req.options) {
    auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) throw InputError({}, "--option needs KEY=VALUE, got '" + kv + "'");
    rel.options[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  pc->options = inferOptionsFrom(rel);  // bad options fail before any graph is read
  loadLemmaFiles(req, rel, *pc);
  for (const std::string& name : req.withoutLemmas) {
    bool known = false;
    for (const eg::Rule& r : lemmas::allLemmas()) known = known || r.name == name;
    for (const eg::Rule& r : pc->fileRules) known = known || r.name == name;
    if (!known) throw InputError({}, "--without-lemma: no lemma named '" + name + "' (see tangle lemmas)");
  }
  pc->withoutLemmas = req.withoutLemmas;
  {
    PhaseTimer t{"import"};
    importGraphs(*pc, req.jobs);
  }
  {
    PhaseTimer t{"expand-relation"};
    qualifyAndNoteSymbols(*pc);
    rel = rel.expand(static_cast<int>(pc->impl.size()));
    addAssumptions(rel, pc->spec, pc->impl, *pc->symbols);
  }
  {
    PhaseTimer t{"lower"};
    lowerGraphs(*pc, req.jobs);
  }
  PhaseTimer t{"settle-symbols"};
  settleSymbols(*pc, checkShapes);
  return pc;
}

// With --jobs > 1 and concrete sizes only (the shared symbolic-size context
// is not thread-safe, and concrete sizes never touch it), the annotated
// shapes are checked on a second thread while inference runs. A shape error
// is still the error reported (a sequential run stops there before
// inference); the inference result is then dropped.
InferResult inferCheckingShapes(const PreparedCheck& pc, const CheckRequest& req) {
  std::exception_ptr shapeError, inferError;
  std::thread shapes([&] {
    try {
      settleShapes(pc);
    } catch (...) {
      shapeError = std::current_exception();
    }
  });
  InferResult result;
  try {
    result = infer(pc, req);
  } catch (...) {
    inferError = std::current_exception();
  }
  shapes.join();
  if (shapeError) std::rethrow_exception(shapeError);
  if (inferError) std::rethrow_exception(inferError);
  return result;
}

}  // namespace

std::unique_ptr<PreparedCheck> prepareCheck(const CheckRequest& req) { return prepare(req, true); }

std::unique_ptr<CheckRun> runCheck(const CheckRequest& req) {
  auto run = std::make_unique<CheckRun>();
  bool overlapShapes = false;
  if (req.jobs > 1) {
    // Whether any size is symbolic is known only once lowered: prepare, then decide.
    run->prepared = prepare(req, false);
    const PreparedCheck& p = *run->prepared;
    overlapShapes = p.symbols->empty() && !hasSymbolicSizes(*p.specL) && !hasSymbolicSizes(*p.implL);
    if (!overlapShapes) settleShapes(p);
  } else {
    run->prepared = prepareCheck(req);
  }
  const PreparedCheck& pc = *run->prepared;
  // Developer aid: TANGLE_STOP_BEFORE_INFER=1 ends the process here (profiling the phases before inference).
  if (std::getenv("TANGLE_STOP_BEFORE_INFER") != nullptr) {
    std::fflush(stderr);
    std::_Exit(0);
  }
  PhaseTimer t{"infer"};
  run->result = overlapShapes ? inferCheckingShapes(pc, req) : infer(pc, req);
  // Unbacked sizes that a search proved equal (infer/merged_sizes.h): learnt,
  // then searched again under them. Each round adds a fact or stops.
  for (int round = 0; round < 16; ++round) {
    if (learnMergedSizes(run->result, *pc.specL, *pc.symbols).empty()) break;
    canonicalizeSymbols(*pc.specL, *pc.symbols);
    canonicalizeSymbols(*pc.implL, *pc.symbols);
    run->prepared->info.symbolFacts = pc.symbols->describe();
    run->result = infer(pc, req);
  }
  if (req.replay) {
    auto t0 = std::chrono::steady_clock::now();
    double cpu0 = cpuSeconds(CLOCK_THREAD_CPUTIME_ID);
    run->replay = replay::replayCheck(*pc.specL, *pc.implL, pc.relation, run->result, *req.replay, *pc.symbols);
    run->replay->seconds = secondsSince(t0);
    run->replay->cpuSeconds = cpuSeconds(CLOCK_THREAD_CPUTIME_ID) - cpu0;
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

