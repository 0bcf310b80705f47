// Shape reduction for replay (issue 14): graphs too large to interpret are
// re-instantiated at smaller sizes, then replayed like small ones.
//
// First choice: one variable per size role, related by the graphs' own
// operations and solved with Z3 for a small assignment (size_roles.h); heads,
// head dim, sequence and vocabulary are scaled independently. When that
// instance fails the checks below, the older single-divisor reduction is tried:
// it divides every size-like integer by one divisor g: a tensor
// dim, a size attribute (slice bounds, reshape/expand shapes, split sizes,
// arange lengths) or an integer scalar equal to a tensor dim (a vocabulary
// offset), when it exceeds a threshold T and g divides it. Integers up to T
// (dim indices, head counts, batch) and values (1/sqrt(head_dim), eps) stay.
// Dividing by g keeps sums and differences (concat, slice windows, shards)
// and products with an unscaled factor; a product of two scaled sizes breaks,
// so the result is only used when it passes the same checks as an imported
// graph: every operator's type rule must give its (divided) annotation, and
// every relation must have the shape of its spec tensor. The pairs (g, T)
// are tried from the smallest instance up, those that keep distinct sizes
// distinct (and none at 1, so a transposition stays visible) first; none
// passing is a refusal with the reason of the smallest one tried. The interpreter checks the shapes again as
// it runs (a computed shape that differs from the annotation stops the replay).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "infer/infer.h"
#include "lower/lower.h"
#include "relation/relation.h"
#include "sym/context.h"

namespace tangle::replay::detail {

struct SizeMap {
  int64_t divisor = 1, threshold = 0;
  std::vector<int64_t> dims;  // every concrete tensor dim of both graphs (sorted, unique)
  // When not empty: one reduced size per size role (size_roles.h), used
  // instead of the divisor; only size attributes and the scalars an integer
  // tensor is compared with or offset by are mapped.
  std::map<int64_t, int64_t> roles;
  // By role: each slice window (start, end) of step 1 -> its reduced bounds (size_roles.h).
  std::map<std::pair<int64_t, int64_t>, std::pair<int64_t, int64_t>> windows;
  bool byRole() const { return !roles.empty(); }
  // The role's size; else v / divisor when |v| > threshold and divisible, else v.
  int64_t size(int64_t v) const;
  // A scalar: divided only when integral and (in absolute value) one of `dims`.
  double scalar(double v) const;
};

struct ReducedCheck {
  SizeMap map;
  LGraph spec, impl;
  RelationFile relation;  // its expectations are the ones `result` points to
  InferResult result;
  int64_t elements = 0;   // of every tensor of both graphs at the reduced sizes
  std::string sizes;      // "1536 -> 24, 768 -> 12 (divided by 64; sizes <= 16 kept)"
};

struct Reduction {
  std::unique_ptr<ReducedCheck> check;  // null: refused
  std::string refusal;                  // why no smaller instance was found
};

// Pieces of the rewrite shared with the class-wise one (class_sizes.cpp).
void mapAttrs(eg::Symbol op, eg::AttrList& attrs, const SizeMap& m);
bool scalarMayBeSize(const LGraph& lg, const CanonTerm::Node& tn, const SizeMap& m);
void mapRelExpr(RelExpr& e, const SizeMap& m);

// What a reduced instance may cost. One size per role and the divisors keep every tensor of both
// graphs under `elements` (the smaller of the replay's two limits). One size per dim class is judged
// like a replay at real sizes (inputs under `inputs`, elements alive at once under `live`, every tensor
// under `all`; src/replay/liveness.h): its instances are
// few-input, many-intermediate graphs (GPT TP=4: 138k inputs of 7.2M elements), and the
// interpreter's time follows the elements it computes, 1.3 s CPU for those 7.2M over three seeds.
struct ElementLimits {
  int64_t elements;  // roles and divisors: every tensor
  int64_t inputs;    // classes: the inputs of both graphs
  int64_t live;      // classes: elements alive at once, both graphs' peaks added
  int64_t all;       // classes: every tensor of both graphs
};

// The smallest valid instance within `limits`.
Reduction reduceShapes(const LGraph& spec, const LGraph& impl, const RelationFile& relation, const InferResult& result,
                       const ElementLimits& limits);

}  // namespace tangle::replay::detail
