#include "infer/reuse_pipeline.h"

#include <cstdio>
#include <cstdlib>

namespace tangle {

ReuseVerifier::ReuseVerifier(const InferState& st) : st_(st), thread_([this] { run(); }) {}

ReuseVerifier::~ReuseVerifier() {
  {
    std::lock_guard lock(mu_);
    closed_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void ReuseVerifier::enqueue(Check c) {
  {
    std::lock_guard lock(mu_);
    if (failed_) return;  // everything after a failure is rolled back anyway
    queue_.push_back(std::move(c));
  }
  wake_.notify_one();
}

std::optional<ReuseVerifier::Check> ReuseVerifier::failure() const {
  std::lock_guard lock(mu_);
  return failed_;
}

std::optional<ReuseVerifier::Check> ReuseVerifier::drain() {
  std::unique_lock lock(mu_);
  idle_.wait(lock, [&] { return failed_ || (queue_.empty() && !busy_); });
  // After a failure the worker may still be checking a later operator; its
  // outcome is dropped, but wait for it so that a rollback does not race it.
  idle_.wait(lock, [&] { return !busy_; });
  return failed_;
}

void ReuseVerifier::reset() {
  std::lock_guard lock(mu_);
  queue_.clear();
  failed_.reset();
}

void ReuseVerifier::run() {
  for (;;) {
    std::optional<Check> next;
    {
      std::unique_lock lock(mu_);
      wake_.wait(lock, [&] { return closed_ || (!failed_ && !queue_.empty()); });
      if (closed_) return;
      next = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
    }
    Check& c = *next;
    bool ok = false;
    try {
      ok = preservesFootprint(st_, *c.f, c.op, c.phi) == c.expected;
    } catch (...) {
      ok = false;  // rolled back: the walk's thread runs this gate itself
    }
    {
      std::lock_guard lock(mu_);
      busy_ = false;
      if (!ok && !failed_) {
        if (std::getenv("TANGLE_TRACE_OPS"))
          std::fprintf(stderr, "reuse pipeline: the gate of %s from %s was not %s; rolling back\n",
                       st_.spec.nodes[c.op.node].name.c_str(), st_.spec.nodes[c.f->op.node].name.c_str(),
                       c.expected ? "passed" : "refused");
        failed_ = std::move(c);
      }
    }
    idle_.notify_all();
  }
}

}  // namespace tangle
