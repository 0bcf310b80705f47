// Evaluation of a lowered graph (spec or implementation, all ranks at once)
// with the reference interpreter, on demand: asking for one tensor evaluates
// exactly the definitions it depends on, in dependency order (computed here:
// the implementation's cross-rank references make the per-rank node order
// insufficient). Inputs, and any tensor given a value with set() (cut
// points), are taken as given.
// Memory: an intermediate tensor is freed once every node reading it has been
// computed, unless it was set() or asked for by value() (a caller may hold
// it); asking again for a freed tensor recomputes it (the kernels are
// deterministic), so freeing never changes a value, only when it is held.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "interp/interp.h"
#include "lower/lower.h"

namespace tangle::replay {

// Why a tensor has no value: an op without reference semantics, inputs that
// do not fit an op, an input nobody gave, or a dependency cycle.
struct EvalFailure {
  int node = -1;        // LNode that could not be evaluated
  std::string op;       // its operator ("aten.foo.default"); empty for inputs/cycles
  std::string where;    // "file:line" of the node
  std::string reason;   // one line, e.g. "aten.foo.default has no reference semantics"
  bool refused = false; // its operands had values but the kernel refused their shapes (a program fault)
};

class LGraphEvaluator {
 public:
  explicit LGraphEvaluator(const LGraph& lg);

  // Gives a tensor (alias-resolved) its value; it is then never recomputed.
  void set(int node, interp::Value v);
  // The value of a tensor, computing it (and what it needs) if necessary.
  // nullptr when it cannot be computed: failure() then says why (it holds
  // the most recent failure).
  const interp::Value* value(int node);
  // The value of a tensor already computed (recomputed when it was freed) or
  // set; nullptr for one never computed, without computing it.
  const interp::Value* known(int node);
  // Elements alive at most at once so far, and computed in all (recomputation included).
  int64_t peakLiveElements() const { return peak_; }
  int64_t computedElements() const { return computed_; }
  const std::optional<EvalFailure>& failure() const { return failure_; }
  const LGraph& graph() const { return lg_; }

 private:
  const LGraph& lg_;
  std::vector<std::optional<interp::Value>> values_;
  std::optional<EvalFailure> failure_;
  std::vector<int> readers_;     // per node: readers not yet computed for the first time
  std::vector<char> kept_;       // set() or asked for: never freed
  std::vector<char> computed1_;  // computed at least once (its operands' readers counted down)
  int64_t live_ = 0, peak_ = 0, computed_ = 0;
  bool computeOne(int node);  // all operands have values
  void store(int node, interp::Value v);
  void release(int node);     // frees the operands whose last reader `node` was
  void fail(int node, std::string op, std::string reason);
};

// "file:line" of an LNode's origin.
std::string whereOf(const LGraph& lg, int node);

}  // namespace tangle::replay
