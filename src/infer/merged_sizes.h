// Unbacked symbols (u0, u1: sizes that come from data, e.g. the row count of
// a nonzero) are each graph's own: S.u0, D0.u0 and D1.u0 are different
// unknowns, related only by a relation, an assumption or a proof. A proof is
// an e-graph merge: when a search merges two values whose types differ only in
// such sizes (nonzero of inputs it proved equal), those sizes are equal. The
// searches record the merges (EGraph::mergedSizes); this step turns them into
// facts of the context, and the driver searches again with them.
#pragma once

#include <string>
#include <vector>

#include "infer/infer.h"
#include "sym/context.h"

namespace tangle {

// Does e name an unbacked symbol (a variable `<graph>.u<digits>`)?
bool mentionsUnbacked(sym::ExprId e);

// Adds each merged pair of the result that names an unbacked symbol and is
// not already provable; returns the facts added ("S.u0 = D0.u0 (...)").
std::vector<std::string> learnMergedSizes(const InferResult& r, const LGraph& spec, sym::Context& ctx);

}  // namespace tangle
