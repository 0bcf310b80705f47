// The driver of Entangle's relation inference (ASPLOS'26 §4, Listing 1): the
// walk over the spec graph's operators in topological order, one
// OperatorSearch per operator (seed, saturate, explore T_rel, conclude; see
// operator_search.h), stopping at the first operator left without a clean
// relation; then the outputs of interest and the expectations.
#include "infer/infer.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <span>
#include <thread>

#include "infer/operator_search.h"
#include "infer/reuse.h"
#include "infer/reuse_pipeline.h"
#include "infer/search_ahead.h"

namespace tangle {

namespace {

// One step of an index table (InferState::implTable): a source, or a cast or
// rearrangement of tables.
bool isTableStep(const LNode& n, std::span<const int> deps, const std::vector<char>& table) {
  if (n.aliasOf >= 0) return table[n.aliasOf] != 0;
  if (n.def.nodes.empty()) return false;
  if (deps.empty()) return true;
  const ops::Syms& y = ops::syms();
  for (const auto& tn : n.def.nodes)
    if (tn.op != y.cast && tn.op != y.reshape && tn.op != y.permute && tn.op != y.transpose && tn.op != y.slice &&
        tn.op != y.expand)
      return false;
  return std::all_of(deps.begin(), deps.end(), [&](int o) { return table[o] != 0; });
}

}  // namespace

InferState::InferState(const Problem& p, const std::vector<eg::Rule>& lemmaRules, const InferOptions& o)
    : spec(*p.spec), impl(*p.impl), rel(*p.relation), symbols(p.symbols), lemmas(lemmaRules), lemmaIndex(lemmaRules), opts(o) {
  // Reuse's flat records read the graphs only: with --jobs, all but their type
  // ids are built beside the type ids and the walk below.
  auto beside = [&] { implFlat = flatNodes(impl, definitionIds(impl), userOperatorHashes(impl)); };
  struct Joined {  // joined however the constructor ends
    std::thread t;
    ~Joined() {
      if (t.joinable()) t.join();
    }
  } besideThread;
  if (opts.jobs > 1) besideThread.t = std::thread(beside);
  else beside();
  specDataId = classDataIds(spec);
  std::vector<uint32_t> implDataIds = classDataIds(impl);
  rels.resize(spec.nodes.size());
  byEvaluation.assign(spec.nodes.size(), 0);
  inputRels.resize(spec.nodes.size());
  outRels.resize(spec.nodes.size());
  isTarget.assign(spec.nodes.size(), 0);
  deferredDepth.assign(spec.nodes.size(), 0);
  deferredOrigin.assign(spec.nodes.size(), -1);
  marks.related.assign(impl.nodes.size(), 0);
  marks.explored.assign(impl.nodes.size(), 0);
  for (size_t i = 0; i < impl.nodes.size(); ++i) {
    const LNode& n = impl.nodes[i];
    if (n.aliasOf < 0 && !n.isInput && n.operands.empty() && !n.def.nodes.empty())
      implSources.push_back(static_cast<int>(i));
  }
  markInputFree();
  if (besideThread.t.joinable()) besideThread.t.join();
  for (size_t i = 0; i < implDataIds.size(); ++i) implFlat.nodes[i].data = implDataIds[i];
}

void InferState::markInputFree() {
  implInputFree.assign(impl.nodes.size(), 0);
  implTable.assign(impl.nodes.size(), 0);
  std::vector<char> done(impl.nodes.size(), 0);
  // Iterative post-order: operands first (an alias is its target's value).
  // One stack for all roots, and a node's dependencies read in place: at 256
  // ranks (415k nodes) a stack and a copy of the operands per visit were
  // millions of allocations.
  std::vector<std::pair<int, size_t>> stack;
  for (size_t i = 0; i < impl.nodes.size(); ++i) {
    if (done[i]) continue;
    stack.assign(1, {static_cast<int>(i), 0});
    while (!stack.empty()) {
      auto& [d, k] = stack.back();
      if (done[d]) {
        stack.pop_back();
        continue;
      }
      const LNode& n = impl.nodes[d];
      const std::span<const int> deps =
          n.aliasOf >= 0 ? std::span<const int>(&n.aliasOf, 1) : std::span<const int>(n.operands);
      if (k < deps.size()) {
        int o = deps[k++];
        if (!done[o]) stack.push_back({o, 0});
        continue;
      }
      bool free;
      if (n.isInput) free = implConsts.count(d) > 0;
      else if (n.aliasOf >= 0) free = implInputFree[n.aliasOf];
      else if (deps.empty()) free = !n.def.nodes.empty();
      else free = std::all_of(deps.begin(), deps.end(), [&](int o) { return implInputFree[o] != 0; });
      implInputFree[d] = free;
      implTable[d] = free && !n.isInput && isTableStep(n, deps, implTable);
      done[d] = 1;
      stack.pop_back();
    }
  }
}

namespace {

// Developer aid: TANGLE_TRACE_OPS=1 prints each operator's e-graph size and time.
bool tracing() {
  static const bool trace = std::getenv("TANGLE_TRACE_OPS") != nullptr;
  return trace;
}

const char* specOpName(const InferState& st, int node) {
  const auto& def = st.spec.nodes[node].def.nodes;
  return def.empty() ? "" : eg::symbolName(def.back().op).c_str();
}

void addStats(InferStats& into, const InferStats& d) {
  into.enodesMax = std::max(into.enodesMax, d.enodesMax);
  into.enodesTotal += d.enodesTotal;
  into.exploredImplNodes += d.exploredImplNodes;
  for (const auto& [k, v] : d.firings) into.firings[k] += v;
  into.conflicts.insert(into.conflicts.end(), d.conflicts.begin(), d.conflicts.end());
  into.mergedSizes.insert(into.mergedSizes.end(), d.mergedSizes.begin(), d.mergedSizes.end());
}

// What the walk's own search would have written (search_ahead.h: confirmed).
void applyAhead(InferState& st, const SpecOp& op, SearchAhead::Result& r, InferStats& stats,
                std::unordered_set<int>& inlined, OperatorReuse* reuse) {
  st.rels[op.node] = std::move(r.rels);
  st.deferredDepth[op.node] = r.deferredDepth;
  st.deferredOrigin[op.node] = r.deferredOrigin;
  applyImplEqualPairs(st, r.implEqualPairs);
  addStats(stats, r.stats);
  inlined = std::unordered_set<int>(r.inlined.begin(), r.inlined.end());
  if (reuse && r.footprint) reuse->add(st, std::move(*r.footprint));
  if (tracing())
    std::fprintf(stderr, "op %s (%s): %zu e-nodes, %zu explored, %.3f s (searched ahead)\n",
                 st.spec.nodes[op.node].name.c_str(), specOpName(st, op.node), r.enodes, r.explored, r.seconds);
}

// The walk's position and helpers for one operator.
struct Step {
  size_t position = 0;
  OperatorReuse* reuse = nullptr;
  ReuseVerifier* verifier = nullptr;
  SearchAhead* ahead = nullptr;
  bool searched = false;                     // out: searched (here or ahead), not reused
  std::vector<std::pair<int, int>> pairs;    // out, with `ahead`: the implEqual pairs the search offered
  std::vector<std::pair<int, int>> reusedEqual;  // out: the implEqual pairs a reuse added (undone on rollback)
};

// One spec operator: an earlier operator's relations renamed when `reuse`
// allows it (reuse.cpp), else the steps of operator_search.h, in order (or
// their result computed ahead, search_ahead.h).
// `inlined` receives the spec definitions inlined into the operator's e-graph.
// With a verifier, every queued gate must have given its expected outcome
// before a search: else `rollback` is set and nothing is done.
std::optional<Failure> processOp(InferState& st, const SpecOp& op, InferStats& stats,
                                 std::unordered_set<int>& inlined, Step& step,
                                 std::optional<ReuseVerifier::Check>& rollback) {
  OperatorReuse* reuse = step.reuse;
  if (reuse && reuse->tryReuse(st, op, inlined, step.reusedEqual)) {
    ++stats.operatorsReused;
    step.pairs = step.reusedEqual;
    if (tracing())
      std::fprintf(stderr, "op %s (%s): reused from %s\n", st.spec.nodes[op.node].name.c_str(), specOpName(st, op.node),
                   st.spec.nodes[reuse->lastSource()].name.c_str());
    return std::nullopt;
  }
  if (step.verifier && (rollback = step.verifier->drain())) return std::nullopt;
  step.searched = true;
  // On the walk's thread (after the queued gates passed, with --jobs > 1): a block search
  // reads and writes the walk's state as a search does.
  std::vector<std::pair<int, int>> blockPairs;
  if (st.opts.blockMin > 0) {
    double cpu0 = tracing() ? threadCpuSeconds() : 0;
    if (searchByBlocks(st, op, stats, inlined, reuse, blockPairs)) {
      ++stats.operatorsBlocked;
      step.pairs = std::move(blockPairs);
      if (tracing())
        std::fprintf(stderr, "op %s (%s): by blocks, %.3f CPU s\n", st.spec.nodes[op.node].name.c_str(),
                     specOpName(st, op.node), threadCpuSeconds() - cpu0);
      return std::nullopt;
    }
  }
  if (step.ahead)
    if (auto r = step.ahead->take(step.position)) {
      if (SearchAhead::confirmed(*r, st)) {
        ++step.ahead->taken;
        step.pairs = std::move(blockPairs);
        step.pairs.insert(step.pairs.end(), r->implEqualPairs.begin(), r->implEqualPairs.end());
        applyAhead(st, op, *r, stats, inlined, reuse);
        return std::nullopt;
      }
      ++step.ahead->dropped;
      if (tracing())
        std::fprintf(stderr, "search ahead: %s read relations the walk does not have; searched again\n",
                     st.spec.nodes[op.node].name.c_str());
    }
  st.marks.nextOperator();
  double cpu0 = tracing() ? threadCpuSeconds() : 0;
  OperatorSearch s(op, st.symbols);
  std::optional<Failure> failure = seed(st, s);
  if (!failure) {
    saturate(st, s, stats);
    exploreRelated(st, s, stats);
    failure = conclude(st, s, stats);
  }
  if (!failure && reuse) reuse->record(st, s);
  if (!failure && step.ahead) {
    step.pairs = std::move(blockPairs);  // a block search that gave up may have applied some
    if (st.deferredDepth[op.node] == 0) {
      const auto found = implEqualPairs(st, s.g);
      step.pairs.insert(step.pairs.end(), found.begin(), found.end());
    }
  }
  inlined = std::move(s.inlined);
  if (tracing())
    std::fprintf(stderr, "op %s (%s): %zu e-nodes, %zu explored, %.3f s, %.3f CPU s\n",
                 st.spec.nodes[op.node].name.c_str(), specOpName(st, op.node), s.g.numNodes(), s.explored.size(),
                 since(s.start), threadCpuSeconds() - cpu0);
  return failure;
}

// Undoes the operators order[from, to), all reuses (reuse_pipeline.h): their
// relations, deferred state, implEqual pairs, entries of R and counters.
void rollBack(InferState& st, const std::vector<SpecOp>& order, size_t from, size_t to, InferResult& res,
              std::vector<std::vector<std::pair<int, int>>>& reusedEqual) {
  for (size_t i = to; i-- > from;) {
    removeImplEqualPairs(st, reusedEqual[i]);
    reusedEqual[i].clear();
  }
  for (size_t i = from; i < to; ++i) {
    int n = order[i].node;
    st.rels[n].clear();
    st.outRels[n].clear();
    st.deferredDepth[n] = 0;
    st.deferredOrigin[n] = -1;
  }
  res.all.resize(from);
  res.stats.operatorsReused -= to - from;
  res.stats.opsProcessed = from;
}

Failure outOfTime(const SpecOp& op) {
  Failure f;
  f.node = op.reported;
  f.tensor = op.node;
  f.limitReached = true;
  f.reason = "the run's time limit was reached before this operator";
  return f;
}

// Walks the operators; R grows in st.rels and res.all. With a verifier, the
// walk rolls back to an operator whose predicted gate was wrong (reuse_pipeline.h).
void walk(InferState& st, const std::vector<SpecOp>& order, double cpuStart, InferResult& res,
          std::unordered_set<int>& inlined, ReuseVerifier* verifier, SearchAhead* ahead) {
  std::optional<OperatorReuse> reuse;
  if (st.opts.reuse) reuse.emplace(verifier);
  size_t i = 0;
  std::vector<std::vector<std::pair<int, int>>> reusedEqual(order.size());  // per position
  auto rollBackTo = [&](const ReuseVerifier::Check& bad) {
    if (ahead) ahead->rolledBack(bad.position, i, reusedEqual);
    rollBack(st, order, bad.position, i, res, reusedEqual);
    reuse->stopPredicting(bad.shapeHash, bad.footprint);
    verifier->reset();
    i = bad.position;
  };
  for (;;) {
    if (i == order.size()) {
      auto bad = verifier ? verifier->drain() : std::nullopt;
      if (!bad) break;
      rollBackTo(*bad);
      continue;
    }
    const SpecOp& op = order[i];
    if (verifier)
      if (auto bad = verifier->failure()) {
        rollBackTo(*bad);
        continue;
      }
    if (st.opts.onOperator) st.opts.onOperator(res.stats.opsProcessed, order.size(), op.node);
    if (processCpuSeconds() - cpuStart > st.opts.totalSeconds) {
      if (auto bad = verifier ? verifier->drain() : std::nullopt) {
        rollBackTo(*bad);
        continue;
      }
      res.failure = outOfTime(op);
      break;
    }
    size_t reusedBefore = res.stats.operatorsReused;
    if (reuse) reuse->at(i);
    if (ahead) ahead->at(i);
    std::optional<ReuseVerifier::Check> bad;
    Step step{i, reuse ? &*reuse : nullptr, verifier, ahead, false, {}, {}};
    auto failure = processOp(st, op, res.stats, inlined, step, bad);
    if (bad) {
      rollBackTo(*bad);
      continue;
    }
    reusedEqual[i] = std::move(step.reusedEqual);
    if (ahead && !failure) ahead->committed(i, st, step.searched, std::move(step.pairs));
    ++res.stats.opsProcessed;
    ++i;
    if (failure) {  // a search's: the queue was drained before it
      res.failure = std::move(failure);
      break;
    }
    res.all.push_back(relationsOf(st, op.node));
    if (res.stats.operatorsReused != reusedBefore) res.all.back().reusedFrom = reuse->lastSource();
  }
}

// R_o for the outputs of interest (over implementation outputs when the
// graph's outputs are the targets), then the expectations.
void finish(InferState& st, const std::vector<int>& targets, std::unordered_set<int>& inlined, InferResult& res) {
  if (res.failure) {
    for (const Expectation& e : st.rel.expectations) res.uncheckedExpectations.push_back(&e);
    return;
  }
  for (int t : targets) {
    res.outputs.push_back(relationsOf(st, t));
    if (st.strictOutputs && !st.outRels[t].empty()) res.outputs.back().exprs = st.outRels[t];
  }
  checkExpectations(st, inlined, res);
}

}  // namespace

const char* toString(Verdict v) {
  switch (v) {
    case Verdict::Refines: return "refines";
    case Verdict::Violation: return "violation";
    case Verdict::Inconclusive: return "inconclusive";
  }
  return "?";
}

namespace {

// Stage-parallel searches need a symbolic-size context nobody writes: with
// concrete sizes only, the e-graphs never consult it.
bool concreteSizesOnly(const InferState& st) {
  if (st.symbols && !st.symbols->empty()) return false;
  for (const LGraph* g : {&st.spec, &st.impl})
    for (const LNode& n : g->nodes)
      for (const TensorType& t : n.data.types)
        if (std::any_of(t.shape.begin(), t.shape.end(), [](Dim d) { return isSymbolic(d); })) return false;
  return true;
}

InferResult inferOnce(const Problem& p, const std::vector<eg::Rule>& lemmas, const InferOptions& opts,
                      double cpuStart) {
  InferState st(p, lemmas, opts);
  InferResult res;
  loadInputRelations(st);
  std::vector<int> targets = outputsOfInterest(st);
  markTargets(st, targets);
  relateClosedByEvaluation(st, targets, res);
  std::vector<SpecOp> order = specOrder(st, targets);
  res.stats.specOps = countOps(st.spec);
  res.stats.implOps = countOps(st.impl);
  for (const eg::Rule& r : lemmas) res.stats.firings.emplace(r.name, 0);  // every lemma in the report
  std::unordered_set<int> inlined;  // of the last operator's e-graph (see checkExpectations)
  std::optional<ReuseVerifier> verifier;
  if (opts.jobs > 1 && opts.reuse) verifier.emplace(st);
  std::optional<SearchAhead> ahead;
  if (opts.jobs > 1 && concreteSizesOnly(st)) ahead.emplace(st, order);
  walk(st, order, cpuStart, res, inlined, verifier ? &*verifier : nullptr, ahead ? &*ahead : nullptr);
  verifier.reset();  // joins its thread: nothing reads st after this
  // TANGLE_TRACE_PHASES: the walk's calling-thread CPU leaves out the searches it waited for.
  static const bool tracePhases = std::getenv("TANGLE_TRACE_PHASES") != nullptr;
  if (ahead && (tracing() || tracePhases))
    std::fprintf(stderr, "search ahead: %zu searches taken, %zu searched again; the walk waited for %.3f s of helper CPU\n",
                 ahead->taken, ahead->dropped, ahead->waitedCpu);
  ahead.reset();
  finish(st, targets, inlined, res);
  res.verdict = verdictOf(res);
  return res;
}

}  // namespace

namespace {
double cpuSeconds(clockid_t clock) {
  timespec ts{};
  if (clock_gettime(clock, &ts) != 0) return 0;
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}
}  // namespace

double threadCpuSeconds() { return cpuSeconds(CLOCK_THREAD_CPUTIME_ID); }
double processCpuSeconds() { return cpuSeconds(CLOCK_PROCESS_CPUTIME_ID); }

InferResult inferRelations(const Problem& p, const std::vector<eg::Rule>& lemmas, const InferOptions& opts) {
  auto start = Clock::now();
  const double cpuStart = processCpuSeconds();  // total_seconds is CPU time, as the operator budget is
  InferResult res = inferOnce(p, lemmas, opts, cpuStart);
  // A reused or block-searched result is sound but may hold fewer relations than the search
  // would have found (reuse.cpp, blocks.cpp): a verdict other than `refines` is the
  // search's own only when computed without either.
  if (res.verdict != Verdict::Refines && (res.stats.operatorsReused > 0 || res.stats.operatorsBlocked > 0)) {
    if (tracing()) {  // why the pass with reuse is recomputed
      size_t unproved = 0;
      for (const auto& e : res.expectations) unproved += e.holds ? 0 : 1;
      std::fprintf(stderr, "reuse: the pass with reuse gave %s (%s, %zu expectations unproved); recomputing without reuse\n",
                   toString(res.verdict), res.failure ? "an operator failed" : "every operator related", unproved);
    }
    InferOptions searchOnly = opts;
    searchOnly.reuse = false;
    searchOnly.blockMin = 0;
    bool reused = res.stats.operatorsReused > 0, blocked = res.stats.operatorsBlocked > 0;
    res = inferOnce(p, lemmas, searchOnly, cpuStart);
    res.stats.reuseRerun = reused;
    res.stats.blocksRerun = blocked;
  }
  res.stats.seconds = since(start);
  return res;
}

}  // namespace tangle
