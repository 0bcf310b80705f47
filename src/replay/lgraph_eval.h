// Evaluation of a lowered graph (spec or implementation, all ranks at once)
// with the reference interpreter, on demand: asking for one tensor evaluates
// exactly the definitions it depends on, in dependency order (computed here:
// the implementation's cross-rank references make the per-rank node order
// insufficient). Inputs, and any tensor given a value with set() (cut
// points), are taken as given.
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
  // The value of a tensor already computed or set, without computing.
  const interp::Value* known(int node) const;
  const std::optional<EvalFailure>& failure() const { return failure_; }
  const LGraph& graph() const { return lg_; }

 private:
  const LGraph& lg_;
  std::vector<std::optional<interp::Value>> values_;
  std::optional<EvalFailure> failure_;
  bool computeOne(int node);  // all operands have values
  void fail(int node, std::string op, std::string reason);
};

// "file:line" of an LNode's origin.
std::string whereOf(const LGraph& lg, int node);

}  // namespace tangle::replay
