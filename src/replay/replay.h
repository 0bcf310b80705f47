// Certificate replay (`tangle check --replay`): runs the spec and the
// implementation on random inputs with the reference interpreter.
//   refines:   every output relation R_o found by inference is evaluated on
//              the implementation's values and compared with the spec's
//              output. A mismatch is a soundness bug of tangle (exit 4).
//   violation: a concrete counterexample: the failing operator's spec value
//              against the implementation tensors it should correspond to
//              (the explored implementation nodes and same-named tensors,
//              alone, summed over ranks or concatenated along a dim); for a
//              refused expectation, its two sides.
// Inputs come from drawInputs (src/replay/inputs.h). Graphs too large to
// interpret are replayed at reduced sizes (src/replay/reduce.h).
// Graphs with symbolic sizes are replayed at a few small sizes that satisfy
// the check's facts (src/replay/concretize.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "infer/infer.h"
#include "lower/lower.h"
#include "relation/relation.h"
#include "replay/localize.h"

namespace tangle::replay {

struct ReplayOptions {
  uint64_t seed = 1;
  int seeds = 3;                       // random input sets tried (seed, seed+1, ...)
  int64_t maxInputElements = 5000000;  // inputs of both graphs together
  // The interpreter frees each intermediate tensor after its last reader
  // (src/replay/liveness.h): memory follows the elements alive at once, time
  // the elements computed. Both are judged on both graphs together.
  int64_t maxLiveElements = 30000000;       // peak of elements alive at once
  int64_t maxComputedElements = 200000000;  // every tensor computed in one run
};

enum class ReplayStatus {
  Matched,           // refines: every output relation held on every seed
  Mismatch,          // a relation inference reported does not hold: soundness bug
  Counterexample,    // violation: a concrete differing element was found
  NoCounterexample,  // violation: no candidate differed (or none had the right shape)
  NotPossible,       // an op without reference semantics, or underivable inputs
  Skipped,           // graphs too large, symbolic shapes, or inconclusive verdict
};
const char* toString(ReplayStatus s);

// One differing element: subject[index] = expected but candidate[index] = actual.
struct Difference {
  std::string subject;    // "S.mm"
  std::string candidate;  // "concat(D0.wait_tensor, D1.wait_tensor, dim=1)"
  std::vector<int64_t> index;
  double expected = 0, actual = 0;
  uint64_t seed = 0;
  std::string line() const;  // "S.mm[0, 3] = 0.5 but <candidate>[0, 3] = 0.25"
};

struct ReplayReport {
  ReplayStatus status = ReplayStatus::Skipped;
  std::string summary;                 // the first line of the section, e.g. "replay: 1 outputs match ..."
  int outputsChecked = 0;              // refines: spec outputs compared
  int relationsChecked = 0;            // refines: relations (several per output) compared
  double maxAbsError = 0;
  std::optional<Difference> mismatch;  // Mismatch
  std::vector<Difference> counterexamples;  // Counterexample: the closest first
  std::vector<std::string> notes;      // more lines of the section
  int agreeingCandidates = 0;          // violation: candidates equal to the failing operator on every seed
  int64_t inputElements = 0;
  std::vector<uint64_t> seeds;
  std::optional<Localization> localization;
  double seconds = 0;                  // wall time of the replay alone (reduction, runs, localization)
  double cpuSeconds = 0;               // its CPU time (this thread): what load does not inflate
  std::string reducedSizes;            // when replayed at reduced sizes: which ("768 -> 12, ...")  // violation: the first wrong implementation operator (first seed)

  std::string text() const;            // the section printed after the report
  nlohmann::json json() const;
  // Process exit code override: 4 on a Mismatch, else nullopt.
  std::optional<int> exitCode() const;
};

// `symbols`: the check's facts; graphs with symbolic sizes are replayed at
// sizes sampled from them (the graphs are concrete from then on).
ReplayReport replayCheck(const LGraph& spec, const LGraph& impl, const RelationFile& relation,
                         const InferResult& result, const ReplayOptions& opts, const sym::Context& symbols);

}  // namespace tangle::replay
