// Internal to src/infer: stage-parallel checking (--jobs N > 1, concrete sizes
// only). A second thread searches spec operators AHEAD of the walk, as soon as
// the relations of their inputs are known (committed by the walk, or found by
// one of its own earlier searches: a stage may start from speculated
// boundary relations), on its own copy of the walk's state (the mirror). The
// walk itself is unchanged: it still visits the operators in order, makes
// every reuse decision and writes R; where it would search, it takes the
// search done ahead instead, if that search's speculation is confirmed.
//
// Why the report is the sequential one. A search (seed, saturate, explore,
// conclude) is a deterministic function of the immutable problem (graphs,
// relation file, lemmas, options, a symbolic-size context that concrete sizes
// never touch) and of the walk's mutable state it READS: the relations and
// deferred state of spec tensors (addSpecTensor, deferredChain, relationsOf)
// and the implEqual entries it looks up (mergeImplEqualities). The mirror
// records those reads (InferState::reads) and the values it saw. The walk
// takes a search done ahead only when every value it read equals the walk's
// own value now, i.e. exactly the inputs the walk's own search would have
// read; then its outputs (the operator's relations, deferred state, the
// implEqual pairs it records, its statistics, inlined set and reuse
// footprint) are the outputs the walk's search would have produced, and they
// are applied in the walk's order. Otherwise (a speculated relation was wrong,
// a rollback changed one, another search recorded an equality it looked up)
// the result is dropped and the walk searches itself. Searches that failed or
// stopped at a limit (time-dependent) are never taken. The mirror is written
// only by the helper thread; the walk's state only by the walk's thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_set>
#include <vector>

#include "infer/reuse.h"

namespace tangle {

class SearchAhead {
 public:
  // st: the walk's state once its input relations and targets are loaded.
  SearchAhead(const InferState& st, const std::vector<SpecOp>& order);
  ~SearchAhead();
  SearchAhead(const SearchAhead&) = delete;
  SearchAhead& operator=(const SearchAhead&) = delete;

  struct SpecRead {
    int node;
    std::vector<eg::Term> rels;
    size_t depth;
    int origin;
  };
  struct Result {
    size_t position = 0;
    std::vector<SpecRead> specReads;                                  // the values it read
    std::vector<std::pair<int, std::optional<std::vector<int>>>> implEqualReads;
    std::vector<eg::Term> rels;                                       // what it wrote
    size_t deferredDepth = 0;
    int deferredOrigin = -1;
    std::vector<std::pair<int, int>> implEqualPairs;
    InferStats stats;                                                 // its own counts
    std::vector<int> inlined;
    std::optional<Footprint> footprint;
    size_t enodes = 0, explored = 0;
    double seconds = 0;
  };

  // The walk is about to process order[position]; results before it are dropped.
  void at(size_t position);
  // The walk processed order[position] (searched: `searched`, with the
  // implEqual pairs its search offered).
  void committed(size_t position, const InferState& st, bool searched, std::vector<std::pair<int, int>> pairs);
  // The walk undid order[from, to) (reuse_pipeline.h), and removed the
  // implEqual pairs those reuses had added (removed[p] for position p).
  void rolledBack(size_t from, size_t to, const std::vector<std::vector<std::pair<int, int>>>& removed);
  // The search of order[position] done ahead, waiting for it if it is
  // running; nullopt if there is none (or it failed or hit a limit).
  std::optional<Result> take(size_t position);
  // Every value r read equals st's: the walk's own search would read the same.
  static bool confirmed(const Result& r, const InferState& st);
  // Statistics for traces: searches taken, dropped; CPU seconds the helper
  // spent on searches while the walk waited for them (on idle cores the
  // walk's critical path includes them; its own thread's CPU does not).
  size_t taken = 0, dropped = 0;
  double waitedCpu = 0;

 private:
  struct Commit {
    size_t position;
    bool undo;  // rolled back: forget it
    std::vector<eg::Term> rels;
    size_t depth;
    int origin;
    bool searched;
    std::vector<std::pair<int, int>> pairs;
  };
  void run();
  void applyCommits(std::vector<Commit>& commits);
  bool ready(size_t p) const;
  std::optional<size_t> pick();
  std::optional<Result> search(size_t p);

  const std::vector<SpecOp>& order_;
  std::vector<int> positionOf_;  // spec node -> position in order_ (-1: not computed by the walk)
  InferState mirror_;            // the helper's copy; only the helper thread touches it
  std::vector<char> known_;      // per position, in the mirror: committed by the walk or found ahead
  std::vector<char> decided_;    // per position: searched ahead, or left to the walk
  std::unordered_set<uint64_t> recordedShapes_;  // spec-side shapes with a footprint: likely reused
  bool corrupt_ = false;         // test hook (TANGLE_TEST_CORRUPT_AHEAD): wrong speculations

  std::mutex mu_;
  std::condition_variable wake_, done_;
  std::vector<Commit> commits_;
  size_t walkAt_ = 0;
  std::optional<size_t> running_;
  std::map<size_t, std::optional<Result>> results_;  // position -> result (nullopt: none usable)
  bool closed_ = false;
  std::thread thread_;
};

}  // namespace tangle
