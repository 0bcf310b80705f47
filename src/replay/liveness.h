// What interpreting a lowered graph costs when each intermediate tensor is
// freed after its last reader (LGraphEvaluator does so): the peak of live
// elements bounds memory, the total computed bounds time. The sum over every
// tensor (what replay used to bound) overstates memory by the depth of the
// graph: GPT paral4_layer4's smallest instance by dim class holds 31.0M
// elements in all but far fewer at once.
#pragma once

#include <cstdint>
#include <vector>

#include "lower/lower.h"

namespace tangle::replay {

// Per alias-resolved node: how many distinct nodes read it as an operand.
std::vector<int> readerCounts(const LGraph& lg);

struct EvalCost {
  int64_t peakLive = 0;  // most elements alive at once
  int64_t computed = 0;  // every tensor (inputs included) of the graph
};
// Simulates evaluating every node in a dependency order, freeing a tensor once
// its readers are computed; inputs and unread tensors (outputs) stay alive to
// the end, as the evaluator keeps them. Symbolic or negative dims count as 0.
EvalCost evalCost(const LGraph& lg);

}  // namespace tangle::replay
