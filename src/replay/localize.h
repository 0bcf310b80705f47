// Value-guided localization of a violation (issue 14): with concrete values
// for both sides, name the first implementation operator that computes a
// wrong value, next to the spec operator inference could not rebuild.
//
// An implementation tensor AGREES with the spec when its value is, within
// the replay tolerance,
//   - a leaf of a relation inference proved (the relations known so far),
//   - equal to a spec tensor,
//   - its rank's block of a spec tensor cut into one block per rank along a dim,
//   - or, summed over the ranks that hold the same-named tensor, a spec tensor
//     (a partial sum, e.g. before an all-reduce).
// Tensors the spec has no counterpart of (masks, other layouts) are
// ABSORBED when some tensor computed from them agrees. The wrong operator is
// the earliest (program order, then rank) whose output neither agrees nor is
// absorbed while every operand agrees, is absorbed or is an input. Other
// such operators (typically the same line on another rank, when a partial sum
// cannot say which rank is wrong) are listed as further suspects.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "infer/infer.h"
#include "replay/trial.h"

namespace tangle::replay {

struct LocatedOperator {
  std::string tensor;       // "D1.add"
  int rank = -1;
  std::string op;           // "aten.add.Tensor"
  std::string location;     // "impl.r1.py:18"
  std::string source;       // the dump's "# File: ..." comment above it
  std::vector<std::string> reads;     // graph inputs it reads (directly or through views)
  std::vector<std::string> operands;  // "D1.mm: summed over ranks equals S.mm"
};

struct Localization {
  bool found = false;
  std::string summary;                  // one line
  std::optional<LocatedOperator> first; // the first wrong implementation operator
  std::vector<LocatedOperator> others;  // further operators that qualify (other ranks, other branches)
  std::string specOperator;             // inference's failing spec operator ("S.add (aten.add.Tensor) at spec.py:18")
  int agreeing = 0, absorbed = 0, wrong = 0, unevaluated = 0;  // implementation tensors
  // Ranks on which the first operator (same name) is equally suspect, e.g.
  // shares of a sum over ranks that values cannot tell apart; empty when one rank.
  std::vector<int> tiedRanks;
  std::vector<LocatedOperator> tied;  // that operator on each of tiedRanks, in the same order
  std::string tieBroken;              // why first is on the rank it is, when a tie was broken

  // Names the tied operator on `rank` first (the previous first becomes a
  // further suspect), with the evidence; false if `rank` is not tied.
  bool nameRank(int rank, std::string evidence);

  std::string text() const;
  nlohmann::json json() const;
};

// Evaluates every tensor of both graphs in `t` (the counterexample's inputs).
Localization localize(const LGraph& spec, const LGraph& impl, const InferResult& result, detail::Trial& t);

}  // namespace tangle::replay
