// The equality-saturation runner: search all rules, apply all matches, rebuild.
#include "egraph/rewrite.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace tangle::eg {

const char* toString(StopReason r) {
  switch (r) {
    case StopReason::Saturated: return "saturated";
    case StopReason::IterationLimit: return "iteration limit";
    case StopReason::NodeLimit: return "node limit";
    case StopReason::TimeLimit: return "time limit";
    case StopReason::MatchLimit: return "match limit";
  }
  return "?";
}

bool isLocal(const Rule& r) { return !r.opaqueRhs && (r.local || (r.rhs && !r.guard && !r.constrained)); }

namespace {

// The time limit counts this thread's CPU time, not wall time: a check on a loaded machine (or in
// a CI job sharing its cores) must reach the same verdict as on an idle one.
double threadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

double wallSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

class Limits {
 public:
  Limits(const EGraph& g, const RunLimits& l)
      : g_(g), l_(l), start_(threadCpuSeconds()), nextCpuRead_(wallSeconds() + l.maxSeconds) {}
  double elapsed() const { return threadCpuSeconds() - start_; }
  // True once this run's CPU time exceeds the limit. Reading the thread's CPU clock is a system
  // call (~1 us here, ~2 million of them in a check of an 8-rank pipeline plan, a third of its
  // CPU) while the wall clock is read in user space; a thread's CPU time never runs ahead of the
  // wall clock, so until the wall time since the last reading reaches what the budget had left
  // the limit cannot have been crossed, and the answer is the one a CPU reading would give.
  bool timeUp() {
    double wall = wallSeconds();
    if (wall < nextCpuRead_) return false;
    double left = l_.maxSeconds - elapsed();
    if (left < 0) return true;
    nextCpuRead_ = wall + left;
    return false;
  }
  // The first limit exceeded, if any (iterations are checked by the loop).
  std::optional<StopReason> exceeded() {
    if (g_.numNodes() > l_.maxNodes) return StopReason::NodeLimit;
    if (timeUp()) return StopReason::TimeLimit;
    return std::nullopt;
  }

 private:
  const EGraph& g_;
  const RunLimits& l_;
  double start_;
  double nextCpuRead_;  // wall time before which the CPU limit cannot have been crossed
};

// Applies one match of `rule`; true if the e-graph changed through the merge.
bool applyMatch(EGraph& g, const Rule& rule, Match& m) {
  if (rule.guard && !rule.guard(g, m.subst)) return false;
  // A class known to be a splat of zeros (zero padding) needs no other forms:
  // a rule would only add equal nodes to it, and over zeros of many shapes the
  // rearrangement rules enumerate every permutation, slice, reshape and concat
  // between them. (Skipping a rule is always sound.) Other splats keep their
  // rules: a backward seed of ones scaled per micro-batch is rebuilt from its
  // parts by them.
  const ClassData& d = g.data(m.eclass);
  if (!rule.onConstants && d.constant && *d.constant == 0.0 && d.tensor() && !d.tensor()->shape.empty())
    return false;
  std::optional<Id> rhs;
  if (rule.rhs) rhs = rule.rhs->instantiate(g, m.subst, rule.constrained);
  else if (rule.apply) rhs = rule.apply(g, m);
  return rhs && g.merge(m.eclass, *rhs);
}

// Where matches may be new since the e-graph's change log stood at `since`: the changed classes
// and their ancestors, by parent hops (layer k: at most k hops up), each layer sorted.
class ChangedRegion {
 public:
  // Empty until compute(); one region serves every partial search of a run, its vectors keeping
  // their storage (a region per iteration was a few dozen allocations, ~15k regions in a check).
  ChangedRegion(const EGraph& g, int maxHeight) : g_(g), maxHeight_(maxHeight) {}
  void compute(size_t since) {
    for (Symbol s : ops_) slotOf()[s] = kNoSlot;
    ops_.clear();
    for (OpTable& t : byOp_) t.built = false;
    seen_.assign(g_.numIds(), 0);
    raw_.clear();
    g_.changedSince(since, raw_);
    frontier_.clear();
    for (Id c : raw_) visit(g_.find(c), frontier_);
    changed_ = seen_;  // so far exactly the changed classes
    numLayers_ = 0;
    newLayer().assign(frontier_.begin(), frontier_.end());
    std::sort(layers_[0].begin(), layers_[0].end());
    for (int k = 1; k <= maxHeight_ && !frontier_.empty(); ++k) {
      next_.clear();
      for (Id c : frontier_)
        for (const auto& [node, parent] : g_.eclass(c).parents) visit(g_.find(parent), next_);
      std::swap(frontier_, next_);
      std::vector<Id>& layer = newLayer();
      layer = layers_[numLayers_ - 2];
      layer.insert(layer.end(), frontier_.begin(), frontier_.end());
      std::sort(layer.begin(), layer.end());
    }
  }
  // Marks (by canonical id) the classes changed since `since`: a match touching none of them was
  // present, with the same canonical classes, at the search that ended there.
  const std::vector<char>& changed() const { return changed_; }
  // The roots of the matches of a pattern of this height that may be new.
  const std::vector<Id>& roots(int height) const { return layers_[layerOf(height)]; }
  // The same roots restricted to the classes holding an e-node with this operator, in the same
  // order: the only ones where a pattern rooted at `op` can match. (Each rule scanned every root's
  // e-nodes for its operator; with a few hundred rules that scan was most of a partial search.)
  const std::vector<Id>& roots(int height, Symbol op) {
    size_t l = layerOf(height);
    if (byOp_.size() <= l) byOp_.resize(l + 1);
    auto& table = byOp_[l];
    if (!table.built) {
      table.built = true;
      building_ = l;
      for (auto& v : table.byOp) v.clear();  // lists of an earlier compute()
      for (Id c : layers_[l]) {
        const auto& nodes = g_.eclass(c).nodes;
        for (size_t i = 0; i < nodes.size(); ++i) {
          Symbol s = nodes[i].op;
          bool seenBefore = false;  // a class lists each operator once
          for (size_t j = 0; j < i && !seenBefore; ++j) seenBefore = nodes[j].op == s;
          if (seenBefore) continue;
          size_t k = slot(s);  // may grow table.byOp
          table.byOp[k].push_back(c);
        }
      }
    }
    static const std::vector<Id> kNone;
    if (op >= slotOf().size() || slotOf()[op] == kNoSlot) return kNone;
    size_t k = slotOf()[op];
    return k < table.byOp.size() ? table.byOp[k] : kNone;
  }

  ~ChangedRegion() {
    for (Symbol s : ops_) slotOf()[s] = kNoSlot;
  }
  ChangedRegion(const ChangedRegion&) = delete;
  ChangedRegion& operator=(const ChangedRegion&) = delete;

 private:
  void visit(Id c, std::vector<Id>& into) {
    if (!seen_[c]) {
      seen_[c] = 1;
      into.push_back(c);
    }
  }
  size_t layerOf(int height) const { return std::min<size_t>(static_cast<size_t>(height), numLayers_ - 1); }
  std::vector<Id>& newLayer() {
    if (layers_.size() <= numLayers_) layers_.resize(numLayers_ + 1);
    return layers_[numLayers_++];
  }
  struct OpTable {
    bool built = false;
    std::vector<std::vector<Id>> byOp;  // operator slot -> the layer's roots holding it, in layer order
  };
  // Operators are numbered densely per region (slotOf, ops_): a table indexed by the operator's
  // symbol itself was as long as the largest symbol (tensor names are symbols too), and sizing
  // and freeing it for every layer of every partial search was a fiftieth of a check's
  // instructions. slotOf is this thread's symbol -> slot map, all kNoSlot outside a region's life.
  static constexpr uint32_t kNoSlot = UINT32_MAX;
  static std::vector<uint32_t>& slotOf() {
    thread_local std::vector<uint32_t> m;
    return m;
  }
  size_t slot(Symbol s) {
    auto& m = slotOf();
    if (s >= m.size()) m.resize(static_cast<size_t>(s) + 1, kNoSlot);
    if (m[s] == kNoSlot) {
      m[s] = static_cast<uint32_t>(ops_.size());
      ops_.push_back(s);
    }
    size_t k = m[s];
    auto& byOp = byOp_[building_].byOp;
    if (k >= byOp.size()) byOp.resize(k + 1);
    return k;
  }
  const EGraph& g_;
  int maxHeight_;
  std::vector<Symbol> ops_;  // the symbols given a slot in slotOf, in slot order
  size_t building_ = 0;      // the layer whose table slot() extends
  std::vector<char> seen_;
  std::vector<char> changed_;
  std::vector<Id> raw_, frontier_, next_;  // compute()'s scratch
  std::vector<std::vector<Id>> layers_;    // the first numLayers_ are this compute()'s
  size_t numLayers_ = 0;
  std::vector<OpTable> byOp_;  // per layer, built on first use after each compute()
};

// One MatchSet per rule, taken from this thread's pool and given back (cleared) at the end of the
// run; a nested run (none today) takes another.
struct PooledMatchSets {
  explicit PooledMatchSets(size_t n) {
    if (!pool().empty()) {
      sets = std::move(pool().back());
      pool().pop_back();
    }
    if (sets.size() < n) sets.resize(n);
  }
  ~PooledMatchSets() {
    for (MatchSet& m : sets) m.clear();
    pool().push_back(std::move(sets));
  }
  PooledMatchSets(const PooledMatchSets&) = delete;
  PooledMatchSets& operator=(const PooledMatchSets&) = delete;
  static std::vector<std::vector<MatchSet>>& pool() {
    thread_local std::vector<std::vector<MatchSet>> p;
    return p;
  }
  std::vector<MatchSet> sets;
};

}  // namespace

RuleIndex::RuleIndex(const std::vector<Rule>& rules)
    : anyRoot_((rules.size() + 63) / 64, 0), words_((rules.size() + 63) / 64), local_(rules.size(), 0) {
  std::vector<std::pair<Symbol, uint32_t>> rooted;
  for (size_t i = 0; i < rules.size(); ++i) {
    const Rule& r = rules[i];
    if (r.rhs.has_value() == static_cast<bool>(r.apply))
      throw std::invalid_argument("rule " + r.name + ": exactly one of rhs / apply must be set");
    local_[i] = isLocal(r);
    maxHeight_ = std::max(maxHeight_, r.lhs.height());
    if (auto op = r.lhs.rootOp()) rooted.emplace_back(*op, static_cast<uint32_t>(i));
    else anyRoot_[i / 64] |= uint64_t{1} << (i % 64);
  }
  std::sort(rooted.begin(), rooted.end());
  for (auto [op, i] : rooted) {
    if (rootOps_.empty() || rootOps_.back() != op) {
      rootOps_.push_back(op);
      masks_.resize(masks_.size() + words_, 0);
    }
    masks_[masks_.size() - words_ + i / 64] |= uint64_t{1} << (i % 64);
  }
}

void RuleIndex::mayMatch(const EGraph& g, std::vector<uint64_t>& mask, std::vector<uint32_t>& out) const {
  mask.assign(anyRoot_.begin(), anyRoot_.end());
  for (size_t k = 0; k < rootOps_.size(); ++k)
    if (!g.classesWithOp(rootOps_[k]).empty())
      for (size_t w = 0; w < words_; ++w) mask[w] |= masks_[k * words_ + w];
  out.clear();
  for (size_t w = 0; w < words_; ++w)
    for (uint64_t x = mask[w]; x; x &= x - 1) out.push_back(static_cast<uint32_t>(w * 64 + __builtin_ctzll(x)));
}

RunReport run(EGraph& g, const std::vector<Rule>& rules, const RunLimits& limits, std::optional<size_t> resumeFrom,
              const RuleIndex* index) {
  RunReport report;
  Limits clock(g, limits);
  std::optional<RuleIndex> own;
  if (!index || index->size() != rules.size()) index = &own.emplace(rules);
  g.rebuild();

  // Counted by rule index: a lookup by name per rule and iteration was a tenth of a check's CPU.
  std::vector<size_t> fired(rules.size(), 0);
  // Matches stay flat until applied: one Subst per match was a third of a check's CPU in malloc/free.
  // Their storage is kept from run to run on this thread (a check runs hundreds of small
  // saturations, and growing every rule's buffers again was a twentieth of its instructions).
  PooledMatchSets pooled(rules.size());
  std::vector<MatchSet>& matches = pooled.sets;
  Match m;  // the match being applied, its storage reused
  // Per rule: matches taken this iteration (doubled after a truncated search).
  std::vector<size_t> caps(rules.size(), limits.maxMatchesPerRule);
  size_t maxCap = limits.maxMatchesPerRule;
  for (size_t k = 1; k < limits.maxMatchesGrowth && maxCap <= SIZE_MAX / 2; k *= 2) maxCap *= 2;
  // Incremental matching. After an iteration's search every match present was found (and applied,
  // unless cut short by a cap); a match the next search has not seen has a class changed since
  // (a new or merged e-node, new data) at most the pattern's height below its root, so the next
  // search looks only at those roots, and keeps only the matches that touch a changed class (the
  // others were present, with the same canonical classes, at the last search and were applied
  // then: a class that gains or re-keys an e-node, is merged into or gains data is logged; most
  // of a partial search's matches were such repeats). Guards and appliers may read more than the
  // matched classes (a constrained lemma's existing sub-nodes), so a run never stops on such a
  // partial search: when one changes nothing, the whole e-graph is searched once more, every
  // match kept, and only a full search that changes nothing ends the run as saturated, as
  // before. Skipping matches is sound. That full search leaves out the rules that read only their
  // match (Rule::local): every match touching a class changed since its last application was
  // applied again by a partial search (above), and the others cannot change anything. With
  // TANGLE_CHECK_LOCAL=1 they are searched and applied anyway, and any change they make is
  // reported on stderr (a rule wrongly declared local).
  const int maxHeight = index->maxHeight();
  // A resumed run starts with a partial search: the earlier run's last search found nothing to
  // apply, so a match new since then touches a class logged since then.
  bool full = !resumeFrom || *resumeFrom > g.changeCount();
  size_t searchedAt = full ? 0 : *resumeFrom;  // the change log's length at the last search
  std::vector<char> needsFull(rules.size(), 0);  // a rule cut short by its cap: search it all again
  std::optional<StopReason> stop;
  static const bool checkLocal = std::getenv("TANGLE_CHECK_LOCAL") != nullptr;
  ChangedRegion changedRegion(g, maxHeight);
  std::vector<uint32_t> active;  // this iteration's rules that may match
  std::vector<uint64_t> activeMask;
  bool confirming = false;  // this iteration is the full search that follows an idle partial one
  size_t lastSearchAt = 0;
  while (!stop) {
    if (report.iterations >= limits.maxIterations) {
      stop = StopReason::IterationLimit;
      break;
    }
    if ((stop = clock.exceeded())) break;

    ChangedRegion* region = nullptr;
    if (!full) {
      changedRegion.compute(searchedAt);
      region = &changedRegion;
    }
    searchedAt = g.changeCount();
    lastSearchAt = searchedAt;
    // Only the rules that may match are searched and applied, in rule order: one rooted at an
    // operator no class holds finds nothing (looping over a few hundred rules twice per iteration
    // of a small e-graph was a thirtieth of a check's instructions).
    index->mayMatch(g, activeMask, active);
    // Search everything first so all rules see the same e-graph.
    bool truncated = false, canGrow = false;
    for (size_t k = 0; k < active.size() && !stop; ++k) {
      const size_t i = active[k];
      // One extra match tells whether the limit cut the search short.
      size_t cap = caps[i];
      size_t limit = cap == SIZE_MAX ? cap : cap + 1;
      if (confirming && index->local(i) && !needsFull[i] && !checkLocal) {
        matches[i].clear();
      } else if (region && !needsFull[i]) {
        const Pattern& lhs = rules[i].lhs;
        std::optional<Symbol> op = lhs.rootOp();
        lhs.searchRoots(g, op ? region->roots(lhs.height(), *op) : region->roots(lhs.height()), limit, matches[i],
                        &region->changed());
      }
      else rules[i].lhs.search(g, limit, matches[i]);
      needsFull[i] = 0;
      if (matches[i].size() > cap) {
        truncated = true;
        needsFull[i] = 1;
        matches[i].truncate(cap);
        if (cap < maxCap) {
          caps[i] = std::min(maxCap, cap * 2);
          canGrow = true;
        }
      }
      // Every 8th rule: most searches of a small e-graph take less than reading the clock (a
      // twentieth of a check's CPU when read after each), and 8 searches overshoot the limit little.
      if ((k % 8 == 7 || k + 1 == active.size()) && clock.timeUp()) stop = StopReason::TimeLimit;
    }

    size_t nodesBefore = g.numNodes(), classesBefore = g.numClasses();
    bool merged = false;
    size_t applied = 0;
    for (size_t r = 0; r < active.size() && !stop; ++r) {
      const size_t i = active[r];
      for (size_t k = 0; k < matches[i].size(); ++k) {
        matches[i].load(k, m);
        size_t nodes = checkLocal ? g.numNodes() : 0, classes = checkLocal ? g.numClasses() : 0;
        bool fires = applyMatch(g, rules[i], m);
        if (fires) {
          ++fired[i];
          merged = true;
        }
        if (checkLocal && confirming && index->local(i) && (fires || nodes != g.numNodes() || classes != g.numClasses()))
          std::fprintf(stderr, "runner: local rule %s changed the e-graph in a confirming search\n",
                       rules[i].name.c_str());
        // A runaway rule must not run far past the limits.
        if (++applied % 64 == 0 && (stop = clock.exceeded())) break;
      }
      matches[i].clear();
    }
    if (!stop) stop = clock.exceeded();

    g.rebuild();
    bool changed = merged || g.numNodes() != nodesBefore || g.numClasses() != classesBefore;
    // A partial search that changed nothing is not counted: the full search that follows is the
    // iteration a full-search runner would have ended with.
    bool partialIdle = !full && !changed && !stop && !canGrow;
    if (!partialIdle) ++report.iterations;
    full = partialIdle;
    confirming = partialIdle;
    // A truncated rule whose allowance grew gets another iteration.
    if (!changed && !stop && !canGrow && !partialIdle) stop = truncated ? StopReason::MatchLimit : StopReason::Saturated;
  }
  g.rebuild();
  report.stop = *stop;
  if (*stop == StopReason::Saturated) report.saturatedAt = lastSearchAt;
  report.seconds = clock.elapsed();
  report.firings = std::move(fired);
  return report;
}

}  // namespace tangle::eg
