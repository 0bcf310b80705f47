#include "infer/search_ahead.h"

#include <algorithm>
#include <cstdlib>
#include <ctime>

#include <pthread.h>

namespace tangle {

namespace {

// Operators ahead of the walk the helper looks at: bounds the results held.
constexpr size_t kWindow = 128;

template <class T>
void sortUnique(std::vector<T>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

}  // namespace

SearchAhead::SearchAhead(const InferState& st, const std::vector<SpecOp>& order)
    : order_(order),
      positionOf_(st.spec.nodes.size(), -1),
      mirror_(st),
      known_(order.size(), 0),
      decided_(order.size(), 0),
      corrupt_(std::getenv("TANGLE_TEST_CORRUPT_AHEAD") != nullptr) {
  for (size_t p = 0; p < order.size(); ++p) positionOf_[order[p].node] = static_cast<int>(p);
  thread_ = std::thread([this] { run(); });
}

SearchAhead::~SearchAhead() {
  {
    std::lock_guard lock(mu_);
    closed_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void SearchAhead::at(size_t position) {
  std::lock_guard lock(mu_);
  walkAt_ = position;
  results_.erase(results_.begin(), results_.lower_bound(position));
}

void SearchAhead::committed(size_t position, const InferState& st, bool searched,
                            std::vector<std::pair<int, int>> pairs) {
  int n = order_[position].node;
  Commit c{position, false, st.rels[n], st.deferredDepth[n], st.deferredOrigin[n], searched, std::move(pairs)};
  {
    std::lock_guard lock(mu_);
    commits_.push_back(std::move(c));
  }
  wake_.notify_one();
}

void SearchAhead::rolledBack(size_t from, size_t to, const std::vector<std::vector<std::pair<int, int>>>& removed) {
  {
    std::lock_guard lock(mu_);
    for (size_t p = to; p-- > from;) commits_.push_back(Commit{p, true, {}, 0, -1, false, removed[p]});
  }
  wake_.notify_one();
}

namespace {

double threadCpuSeconds(std::thread& t) {
  clockid_t clock;
  timespec ts{};
  if (pthread_getcpuclockid(t.native_handle(), &clock) != 0 || clock_gettime(clock, &ts) != 0) return 0;
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

std::optional<SearchAhead::Result> SearchAhead::take(size_t position) {
  std::unique_lock lock(mu_);
  if (running_ == position) {
    double before = threadCpuSeconds(thread_);
    done_.wait(lock, [&] { return running_ != position; });
    waitedCpu += threadCpuSeconds(thread_) - before;
  }
  auto it = results_.find(position);
  if (it == results_.end()) return std::nullopt;
  std::optional<Result> r = std::move(it->second);
  results_.erase(it);
  return r;
}

bool SearchAhead::confirmed(const Result& r, const InferState& st) {
  for (const SpecRead& s : r.specReads)
    if (st.deferredDepth[s.node] != s.depth || st.deferredOrigin[s.node] != s.origin || st.rels[s.node] != s.rels)
      return false;
  for (const auto& [d, seen] : r.implEqualReads) {
    const std::vector<int>* partners = st.implEqual.find(d);
    if (seen.has_value() != (partners != nullptr)) return false;
    if (seen && *seen != *partners) return false;
  }
  return true;
}

// --- the helper thread -----------------------------------------------------

void SearchAhead::applyCommits(std::vector<Commit>& commits) {
  for (Commit& c : commits) {
    int n = order_[c.position].node;
    if (c.undo) {
      // The mirror may hold such a pair from a search of its own too:
      // removing it only makes its later searches read less than the walk,
      // which `confirmed` then drops.
      removeImplEqualPairs(mirror_, c.pairs);
      mirror_.rels[n].clear();
      mirror_.deferredDepth[n] = 0;
      mirror_.deferredOrigin[n] = -1;
      known_[c.position] = decided_[c.position] = 0;
      continue;
    }
    mirror_.rels[n] = std::move(c.rels);
    mirror_.deferredDepth[n] = c.depth;
    mirror_.deferredOrigin[n] = c.origin;
    applyImplEqualPairs(mirror_, c.pairs);
    known_[c.position] = decided_[c.position] = 1;
    if (c.searched && mirror_.opts.reuse) recordedShapes_.insert(specShapeHash(mirror_, order_[c.position]));
  }
  commits.clear();
}

// Every input's relations are known in the mirror (inputs of the check are).
bool SearchAhead::ready(size_t p) const {
  for (int r : order_[p].reads) {
    int at = positionOf_[mirror_.spec.resolve(r)];
    if (at >= 0 && !known_[at]) return false;
  }
  return true;
}

// The first operator ahead of the walk that is ready, not a target (R_o is
// the walk's) and of no shape a footprint exists for (the walk will likely
// reuse it: left to the walk).
std::optional<size_t> SearchAhead::pick() {
  size_t from, to;
  {
    std::lock_guard lock(mu_);
    from = walkAt_ + 1;
  }
  to = std::min(order_.size(), from + kWindow);
  for (size_t p = from; p < to; ++p) {
    if (decided_[p] || known_[p] || !ready(p)) continue;
    decided_[p] = 1;
    if (mirror_.isTarget[order_[p].node]) continue;
    if (mirror_.opts.reuse && recordedShapes_.count(specShapeHash(mirror_, order_[p]))) continue;
    return p;
  }
  return std::nullopt;
}

std::optional<SearchAhead::Result> SearchAhead::search(size_t p) {
  const SpecOp& op = order_[p];
  int n = op.node;
  InferState& st = mirror_;
  st.rels[n].clear();  // as the walk has it when it searches
  st.deferredDepth[n] = 0;
  st.deferredOrigin[n] = -1;
  if (corrupt_)  // test hook: a wrong speculated relation, which the walk must not take
    for (int r : op.reads)
      if (auto& rels = st.rels[st.spec.resolve(r)]; rels.size() >= 2) {
        rels.pop_back();
        break;
      }
  Result res;
  res.position = p;
  SearchReads reads;
  st.reads = &reads;
  st.marks.nextOperator();
  OperatorSearch s(op, st.symbols);
  std::optional<Failure> failure;
  try {
    failure = seed(st, s);
    // Its implEqual lookups are all in seed; conclude adds to implEqual.
    sortUnique(reads.implEqual);
    for (int d : reads.implEqual) {
      const std::vector<int>* partners = st.implEqual.find(d);
      res.implEqualReads.emplace_back(d, partners ? std::optional(*partners) : std::nullopt);
    }
    if (!failure) {
      saturate(st, s, res.stats);
      exploreRelated(st, s, res.stats);
      failure = conclude(st, s, res.stats);
    }
  } catch (...) {
    failure = Failure{};
  }
  st.reads = nullptr;
  res.seconds = since(s.start);
  // A failure is left to the walk; so is a search that ran long enough for
  // the time limit to have stopped it (then its result depends on timing).
  if (failure || res.seconds >= st.opts.operatorSeconds) {
    st.rels[n].clear();
    st.deferredDepth[n] = 0;
    st.deferredOrigin[n] = -1;
    return std::nullopt;
  }
  sortUnique(reads.spec);
  for (int r : reads.spec) {
    if (r == n) res.specReads.push_back({r, {}, 0, -1});
    else res.specReads.push_back({r, st.rels[r], st.deferredDepth[r], st.deferredOrigin[r]});
  }
  res.rels = st.rels[n];
  res.deferredDepth = st.deferredDepth[n];
  res.deferredOrigin = st.deferredOrigin[n];
  if (res.deferredDepth == 0) res.implEqualPairs = implEqualPairs(st, s.g);  // conclude recorded these
  res.inlined.assign(s.inlined.begin(), s.inlined.end());
  std::sort(res.inlined.begin(), res.inlined.end());
  if (st.opts.reuse) res.footprint = OperatorReuse::footprintOf(st, s);
  res.enodes = s.g.numNodes();
  res.explored = s.explored.size();
  known_[p] = 1;
  if (res.footprint) recordedShapes_.insert(specShapeHash(st, op));
  return res;
}

void SearchAhead::run() {
  std::vector<Commit> commits;
  for (;;) {
    {
      std::unique_lock lock(mu_);
      if (closed_) return;
      commits.swap(commits_);
    }
    applyCommits(commits);
    std::optional<size_t> p = pick();
    if (!p) {
      std::unique_lock lock(mu_);
      wake_.wait(lock, [&] { return closed_ || !commits_.empty(); });
      continue;
    }
    {
      std::lock_guard lock(mu_);
      if (closed_) return;
      if (*p <= walkAt_) continue;  // the walk got there first
      running_ = *p;
    }
    std::optional<Result> r = search(*p);
    {
      std::lock_guard lock(mu_);
      running_.reset();
      if (*p >= walkAt_) results_[*p] = std::move(r);
    }
    done_.notify_all();
  }
}

}  // namespace tangle
