// Internal to src/infer: with --jobs N > 1, reuse's soundness gate
// (preservesFootprint, reuse_verify.cpp) runs on a second thread, behind the
// walk. The first times the gate meets a candidate footprint for operators of
// one spec-side shape it runs on the walk's thread (reuse.cpp); once it gave
// the same outcome a few times in a row, the walk predicts that outcome, acts
// on it and queues the gate with the outcome it expects.
//
// Why the result is the sequential walk's. A queued gate reads the graphs
// (never written during the walk) and the relations and deferred depths of
// spec tensors processed before its operator (each written once, before the
// gate is queued). The walk drains the queue before every search and at its
// end. When a gate did not give the expected outcome, the walk rolls back to
// that operator (every operator after it was a reuse: only its relations,
// deferred state and counters are undone) and goes on from there with the
// gate run on the walk's thread. So every reuse kept passed the gate and
// every candidate skipped failed it, in the sequential order.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

#include "infer/reuse.h"

namespace tangle {

class ReuseVerifier {
 public:
  explicit ReuseVerifier(const InferState& st);
  ~ReuseVerifier();
  ReuseVerifier(const ReuseVerifier&) = delete;
  ReuseVerifier& operator=(const ReuseVerifier&) = delete;

  struct Check {
    const Footprint* f;  // must outlive the check (OperatorReuse keeps footprints in a deque)
    SpecOp op;
    Renaming phi;
    bool expected;       // preservesFootprint(f, op, phi) must give this
    size_t position;     // of op in the walk
    uint64_t shapeHash;  // of op (to stop predicting for it)
    size_t footprint;    // index of f
  };
  void enqueue(Check c);
  // The first check that failed, without waiting (nullopt: none so far).
  std::optional<Check> failure() const;
  // Waits until every queued check ran; the first that failed, if any.
  std::optional<Check> drain();
  // After a rollback: forgets the failure and whatever is still queued.
  void reset();

 private:
  void run();

  const InferState& st_;
  mutable std::mutex mu_;
  std::condition_variable wake_, idle_;
  std::deque<Check> queue_;
  std::optional<Check> failed_;
  bool busy_ = false, closed_ = false;
  std::thread thread_;
};

}  // namespace tangle
