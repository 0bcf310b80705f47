// Instance builder for sum-pairs-into-adds (src/lemmas/accum.cpp): a sum of
// 2-6 terms next to adds of some pairs of them (either operand order, a term
// sometimes repeated), plus decoys the rule must not use: an add of a term
// with a tensor outside the sum, and a broadcasting add.
#include "validate/generate.h"

namespace tangle::validate {

std::optional<eg::Id> sumNextToAdds(Gen& gen) {
  Shape s = gen.randomShape();
  std::vector<eg::Id> xs;
  for (int64_t i = 0, n = gen.uniform(2, 6); i < n; ++i)
    xs.push_back(!xs.empty() && gen.chance(0.15) ? xs[gen.uniform(0, static_cast<int64_t>(xs.size()) - 1)]
                                                 : gen.leaf(s));
  int64_t last = static_cast<int64_t>(xs.size()) - 1;
  for (int64_t k = 0, pairs = gen.uniform(1, 3); k < pairs; ++k) {
    eg::Id a = xs[gen.uniform(0, last)], b = xs[gen.uniform(0, last)];
    if (!gen.node("add", {}, {a, b})) return std::nullopt;
  }
  if (gen.chance(0.3) && !gen.node("add", {}, {xs[0], gen.leaf(s)})) return std::nullopt;
  if (gen.chance(0.3) && !s.empty()) {
    Shape one(s.size(), 1);
    if (!gen.node("add", {}, {xs[last], gen.leaf(one)})) return std::nullopt;
  }
  return gen.node("sum", {}, xs);
}

}  // namespace tangle::validate
