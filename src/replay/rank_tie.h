// Internal to src/replay: breaking a rank tie of the localization. When the
// same operator on several ranks is equally suspect by value (each rank's
// share of a sum over ranks is wrong only in the sum), move one rank's inputs
// at a time and watch how the implementation's candidate tensors for the
// failing spec operator differ from it. A rank that computes right responds
// to its own inputs as the spec does, so moving them leaves the difference
// where it was; the rank whose inputs move the difference is named.
//
// Naming only: verdicts never depend on it, and when the evidence is missing
// or mixed the tie stays (the lower rank first).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lower/lower.h"
#include "relation/relation.h"
#include "replay/candidates.h"
#include "replay/trial.h"

namespace tangle::replay::detail {

// `base`'s inputs with every floating input of `rank` that the input
// relation lets move alone moved by random amounts, and the spec inputs
// recomputed from them through the relation (a replicated input, whose
// copies must stay equal, and a zero-padded one stay as they were).
// nullopt when nothing on that rank can move alone.
std::optional<InputValues> moveRankInputs(const LGraph& spec, const LGraph& impl, const RelationFile& rel,
                                          const InputValues& base, int rank, uint64_t seed);

struct TieBreak {
  int rank = -1;
  std::string evidence;  // one line: which difference moved with which rank's inputs
};

// The one rank among `tied` whose moved inputs change how some candidate of
// `specTensor` differs from it while another tied rank's do not (and no
// candidate says otherwise); nullopt when the evidence does not single one out.
std::optional<TieBreak> breakRankTie(const LGraph& spec, const LGraph& impl, const RelationFile& rel, int specTensor,
                                     const std::vector<Candidate>& candidates, Trial& base,
                                     const std::vector<int>& tied);

}  // namespace tangle::replay::detail
