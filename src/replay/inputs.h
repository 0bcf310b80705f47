// Input values for a replay: random values for the spec's inputs, and the
// implementation's inputs derived from them by inverting the input relation
// R_i (every relation is a rearrangement or a cross-rank sum of
// implementation tensors, so each can be run backwards):
//   D.x = S          the leaf takes the spec value
//   concat / slice / transpose / permute / reshape
//                    scattered back element by element (the inverse gather);
//                    elements no relation constrains stay 0
//   sum(x1..xn) = S  all free summands but the last random, the last S - rest
// Afterwards every relation is evaluated forwards on the derived values; a
// relation that does not hold (two relations asking different values of one
// element) means the inputs cannot be derived.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "egraph/extract.h"
#include "interp/tensor.h"
#include "lower/lower.h"
#include "relation/relation.h"

namespace tangle::replay {

struct InputValues {
  std::unordered_map<int, interp::Value> spec, impl;  // by alias-resolved LNode
  std::vector<std::string> notes;                     // e.g. unconstrained elements set to 0
  std::optional<std::string> error;                   // why the inputs cannot be derived
};

// Concrete shape of a tensor LNode; nullopt when unknown, symbolic or a tuple.
std::optional<interp::Shape> concreteShape(const LNode& n);

// Random spec values: floats uniform in [-1, 1], bools 0/1, integers in
// [0, k) where k is the smallest dim they index (index_rows/gather_rows
// users, directly or through a chain of integer tensors: labels cover the
// whole vocabulary) or 4. Then derives the implementation inputs (see above).
// `relation` must be expanded to explicit ranks.
InputValues drawInputs(const LGraph& spec, const LGraph& impl, const RelationFile& relation, uint64_t seed);

// Derives implementation tensor values so that `S = rhs` holds, adding to
// `leaves` (partial values of implementation tensors, keyed by resolved
// LNode); used by drawInputs, exposed for tests. Returns an error message
// when `rhs` has an op that cannot be inverted.
struct PartialTensor {
  interp::Tensor value;
  std::vector<char> set;  // per element: constrained by some relation
};
std::optional<std::string> invertRelation(const eg::Term& rhs, const interp::Tensor& s, const LGraph& impl,
                                          std::unordered_map<int, PartialTensor>& leaves, std::mt19937_64& rng);

}  // namespace tangle::replay
