// Closed constant tensors, proved equal by exact evaluation.
//
// A tensor whose whole definition reads no graph input, parameter or buffer
// (only sources such as arange and literals, and graph constants the relation
// file gives a value with `const`) is a *closed* term: with concrete sizes it
// has one value, the same on every run. When its cone uses only operators the
// reference interpreter (src/interp, float64) computes exactly for the
// dtypes involved -- integer and bool arithmetic, comparisons, logical ops,
// selection (where, index, gather), views, slices, concat, arange, casts that
// keep the value, float values moved by selection -- that value is computed
// here, and two closed tensors with the same dtype and the same values (in
// row-major order) are equal: a fact "by evaluation", no lemma needed (HF's
// causal mask from position arithmetic against vLLM's from two aranges).
//
// Anything that may round (float arithmetic, division, transcendental ops)
// is refused, as is a symbolic size or a value of more than maxElements
// elements; refusal() says why.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "interp/tensor.h"
#include "lower/lower.h"

namespace tangle::closed {

inline constexpr int64_t kMaxElements = int64_t(1) << 20;

class ClosedTensors {
 public:
  // consts: inputs given a value by the relation file (node -> value).
  ClosedTensors(const LGraph& g, const std::unordered_map<int, double>& consts, int64_t maxElements = kMaxElements);

  // Reads no graph input (declared constants aside); alias-resolved. A
  // tuple-valued node is never closed.
  bool closed(int node) const { return closed_[static_cast<size_t>(g_.resolve(node))] != 0; }
  // The exact value of a closed tensor, computed on first use; nullptr when
  // it is refused (refusal() says why) or the node is not closed.
  const interp::Tensor* value(int node);
  std::string refusal(int node) const;
  DType dtype(int node) const;  // the annotated dtype (Unknown when unannotated)

 private:
  struct Slot {
    bool done = false;
    std::optional<interp::Tensor> value;
    std::string refusal;
  };
  const LGraph& g_;
  const std::unordered_map<int, double>& consts_;
  int64_t maxElements_;
  std::vector<char> closed_;
  // Only the nodes whose value was asked for (a few of the 415k of a 256-rank
  // plan): a slot per node was 40 MB of zeroed memory. Node-based, so a
  // slot's reference stays valid while others are added.
  std::unordered_map<int, Slot> slots_;
  void compute(int node);  // every operand done
};

// Whether `v` is exactly a value of dtype `t` (integral and in range for
// integer types, 0/1 for bool, a value of the format for floats).
bool representable(double v, DType t);

}  // namespace tangle::closed
