// Internal to src/replay: one replay run on one random input set, and the
// element-wise comparison of two tensors.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "replay/inputs.h"
#include "replay/lgraph_eval.h"
#include "replay/term_eval.h"

namespace tangle::replay::detail {

class Trial {
 public:
  Trial(const LGraph& spec, const LGraph& impl, const RelationFile& rel, uint64_t seed);
  // A run on given inputs (e.g. another run's inputs with one rank's moved).
  Trial(const LGraph& spec, const LGraph& impl, InputValues inputs, uint64_t seed);
  uint64_t seed() const { return seed_; }
  // Why nothing can be computed (underivable inputs), if so.
  const std::optional<std::string>& inputError() const { return inputs_.error; }
  const std::vector<std::string>& inputNotes() const { return inputs_.notes; }
  const InputValues& inputs() const { return inputs_; }
  LGraphEvaluator& spec() { return spec_; }
  LGraphEvaluator& impl() { return impl_; }
  // Leaf values for terms over both graphs ("S.x" and "D<r>.x"), computed on demand.
  LeafValues leaves();
  // "replay not possible: ..." message of the first evaluation failure.
  std::optional<std::string> evalError() const;

 private:
  uint64_t seed_;
  InputValues inputs_;
  LGraphEvaluator spec_, impl_;
};

struct Comparison {
  bool sameShape = false;
  std::optional<size_t> firstDiff;  // flat index of the first element out of tolerance
  double maxAbsError = 0;
};
// Tolerance 1e-6 * (1 + max |expected|); NaN equals NaN.
Comparison compareTensors(const interp::Tensor& expected, const interp::Tensor& actual);
std::vector<int64_t> unflatten(const interp::Shape& shape, size_t flat);

}  // namespace tangle::replay::detail
