// Lemma synthesis, part 3: candidate relations from values (Emerge's
// value-driven candidates, on the check's own graphs). Both graphs run on the
// same random inputs (derived through the input relation, as --replay does)
// under the reference interpreter; implementation expressions whose values
// equal the spec tensor's on every draw are candidates: one tensor, or one
// tensor name of every rank concatenated along a dim or summed. Candidates are
// hints only: a rule built from one is used only once validated.
#pragma once

#include <string>
#include <vector>

#include "lower/lower.h"
#include "relation/relation.h"

namespace tangle::synth {

struct ValueCandidates {
  std::vector<std::string> exprs;  // relation-language expressions over D<r> tensors, simplest first
  std::string note;                // why there are none (inputs underivable, spec tensor not computable)
};

ValueCandidates valueCandidates(const LGraph& spec, const LGraph& impl, const RelationFile& relation, int specNode,
                                uint64_t seed, size_t draws = 2, size_t limit = 6);

}  // namespace tangle::synth
