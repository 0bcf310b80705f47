// Size roles for shape-reduced replay (issue 14): every distinct large size
// of the check (a tensor dim, a size attribute, a relation's size) is one
// variable, and the graphs' own operations say how those variables relate:
//   reshape/view   the product of each aligned group of dims is kept
//                  ([1536, 8, 2304] -> [1536, 8, 24, 96]: 2304 = 24 * 96)
//   concat         the output dim is the sum of the inputs' dims (so a
//                  gathered shard keeps global = N x local)
//   slice          end - start is the output dim, end within the input dim
//   split          the sizes sum to the dim
// Relations add the same facts through their own terms (shard, concat,
// slice). Equal values share one variable, so a coincidence (hidden = 2 x seq
// by chance) only costs freedom, never validity. Operators without such a
// rule add nothing: the reduced instance is accepted only after the type rule
// of every node and the relation's shapes accept it (reduce.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lower/lower.h"
#include "relation/relation.h"

namespace tangle::replay::detail {

// coeff x product of sizes; a size that is a role is a variable, any other a constant.
struct SizeMono {
  int64_t coeff = 1;
  std::vector<int64_t> sizes;
};
using SizeSum = std::vector<SizeMono>;

struct SizeFact {
  SizeSum lhs, rhs;
  bool le = false;  // lhs <= rhs, else lhs == rhs
};

struct SizeRoles {
  int64_t threshold = 0;            // sizes above it are roles
  std::vector<int64_t> roles;       // sorted
  std::vector<SizeFact> facts;
  // Two different roles in one tensor shape: kept different when possible,
  // so that a transposition or a wrong dim stays visible at reduced sizes.
  std::vector<std::pair<int64_t, int64_t>> apart;
  // Slice bounds (step 1) are variables of their own, one per (sliced dim, bound value), keyed by
  // negative numbers in `roles` and the facts: a bound equal to a dim or a multiple of the length by
  // chance (window 5 of 512 = q + k in a fused qkv) ties nothing. Shared by all slices of one dim
  // size, so the windows of a tiling stay a tiling; a bound equal to the dim is the dim itself.
  std::map<int64_t, int64_t> boundValue;                   // key -> its real value
  std::map<std::pair<int64_t, int64_t>, int64_t> boundKey;  // (dim size, bound) -> key
  std::map<std::pair<int64_t, int64_t>, int64_t> windowDim;  // (start, end) -> the dim size it slices
  // Keys that are not their own size (a dim class, a quotient; class_sizes.h) -> their real size.
  std::map<int64_t, int64_t> keyValue;
  bool isRole(int64_t v) const;
  int64_t realValue(int64_t key) const {
    auto it = keyValue.find(key);
    return it == keyValue.end() ? key : it->second;
  }
};

SizeRoles collectSizeRoles(const LGraph& spec, const LGraph& impl, const RelationFile& rel, int64_t threshold);

// True when attribute `pos` of a known op is a size (slice bounds, reshape
// and expand shapes, split sizes, ...), not a dim index or a flag. Opaque ops: false.
bool isSizeAttr(eg::Symbol op, size_t pos);

// A slice window whose start is a whole number k of its own length m
// ([k*m, (k+1)*m), step 1): at reduced sizes it stays window k of the reduced
// length, so its bounds are no sizes of their own (the end 768 of a sequence
// shard [384, 768) is not the hidden size 768). Returns {k, m}.
std::optional<std::pair<int64_t, int64_t>> sliceWindow(int64_t start, int64_t end, int64_t step);

// The least value each role (and slice bound) can take in any solution, propagated through the
// facts whose coefficients are all positive: a side that is one role is at least the least value
// of the other side. Deductions only, so no solution goes below it.
// `divide`: also through the other direction, a role of a side that is at least some value is at
// least that value over the largest values (the real sizes) of everything else on its side.
std::map<int64_t, int64_t> leastValues(const SizeRoles& r, bool divide = false);

// The smallest assignment Z3 finds (role -> reduced size, each in [2, role]),
// with the `apart` pairs different when `keepApart`; nullopt when none. `preferSmall`: Z3's search
// tries low values first (class_sizes.h, where most of 100+ variables are otherwise left anywhere
// under the bound; and each role is first capped at k x its least value, smallest k first, so that
// every class stays small, not only the largest); the value-keyed roles keep the plain search.
std::optional<std::map<int64_t, int64_t>> solveSizeRoles(const SizeRoles& r, bool keepApart,
                                                         bool preferSmall = false);

}  // namespace tangle::replay::detail
