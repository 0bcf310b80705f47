// Gradient accumulation: a cross-rank sum whose terms a rank has already
// added together.
//
// With K micro-batches per rank, the spec's gradient unfolds into one sum
// term per (rank, micro-batch), while each rank returns its micro-batch
// gradients added (an `add`) before the data-parallel reduction sums the
// ranks. The lemma regroups the spec's terms into the adds that the
// implementation computed; it never flattens an add into a sum. Flattening
// would make any two tensors a rank adds (a residual add of an unreduced
// partial, say) part of a "clean" sum the implementation never formed, and a
// missing reduction would be blamed past the add that consumed the partial.
#include "lemmas/lemma_util.h"

namespace tangle::lemmas::detail {

namespace {

// sum(.., a, .., b, ..) = sum(.., add(a, b), ..) for each pair of terms that
// an existing add e-node combines (either operand order; sum is commutative),
// all of the sum's shape (no broadcasting). Pairs are taken greedily, first
// term first; a sum left with one term is that term.
std::optional<Id> pairIntoAdds(EGraph& g, const Match& m) {
  const TensorType* out = typeOf(g, m.eclass);
  const auto& xs = m.subst.list("xs");
  if (!out || xs.size() < 2) return std::nullopt;
  for (Id x : xs) {
    const TensorType* t = typeOf(g, x);
    if (!t || t->shape != out->shape) return std::nullopt;
  }
  auto existingAdd = [&](Id a, Id b) -> std::optional<Id> {
    eg::ENode n;
    n.op = op().add;
    n.children = {a, b};
    if (auto c = g.lookup(n)) return c;
    n.children = {b, a};
    return g.lookup(n);
  };
  std::vector<bool> used(xs.size(), false);
  std::vector<Id> terms;
  bool paired = false;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (used[i]) continue;
    used[i] = true;
    std::optional<Id> add;
    for (size_t j = i + 1; j < xs.size() && !add; ++j) {
      if (used[j]) continue;
      if ((add = existingAdd(xs[i], xs[j]))) used[j] = true;
    }
    terms.push_back(add ? *add : xs[i]);
    paired = paired || add.has_value();
  }
  if (!paired) return std::nullopt;
  return makeSum(g, terms);
}

}  // namespace

void addAccumLemmas(std::vector<Lemma>& out) {
  out.push_back(applier("sum-pairs-into-adds",
                        "sum(.., a, .., b, ..) = sum(.., add(a, b), ..) where add(a, b) already exists, all of the "
                        "sum's shape",
                        "(sum ?xs...)", pairIntoAdds));
}

}  // namespace tangle::lemmas::detail
