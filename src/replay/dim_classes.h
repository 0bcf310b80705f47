// Dim occurrences as union-find classes (issue 14: toward reduced replay of
// GPT TP=4 and aws_llama TP=4, whose value-keyed size roles are pinned by
// coincidences such as 3072 = 384 x 8 = 4 x 768).
//
// Every dim of every tensor of the spec and the implementation is an
// occurrence. Two occurrences are one class when
//   * one operator's structure makes them equal (dim_ties.h: elementwise ops
//     right-aligned, transposes, reshapes, products, reductions and norms by
//     position; slice and concat their kept dims), or, for any other operator,
//     they have the same value and it reads or writes both (its operands and
//     its result; a definition's intermediate results count);
//   * a certificate relation S.x = term(D.y, ...) puts them at the same
//     position: dim k of the spec tensor is dim k of the term's result. This
//     ties a length the spec builds on its own (arange(L) of a loss mask) to
//     the ranks' copy of it, which the graphs alone never link.
// A value that splits into several classes is a coincidence that one size per
// value (size_roles.h) must keep; per class it would not. This is the
// quotient; the shape facts over classes and the rewrite of each occurrence
// are class_sizes.h's.
#pragma once

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "infer/infer.h"
#include "lower/lower.h"
#include "relation/relation.h"

namespace tangle::replay::detail {

// One operator as the builder saw it (a definition's node or a relation term's node): the
// occurrences of its operands' dims and its result's dims (per type), and of its size attributes.
struct OpOccs {
  eg::Symbol op{};
  eg::AttrList attrs;
  std::vector<std::vector<std::vector<int>>> children;  // [child][type][dim]
  std::vector<std::vector<int>> result;                 // [type][dim]
  std::vector<std::vector<int>> attrOccs;               // [attr][entry]; empty when not a size
};

class DimClasses {
 public:
  // Occurrence of dim `dim` of type `type` of LNode `node` (aliases resolved); -1 when absent.
  int of(bool spec, int node, size_t type, size_t dim) const;
  int find(int occ) const;
  int64_t value(int occ) const { return value_[static_cast<size_t>(occ)]; }
  size_t occurrences() const { return value_.size(); }
  // Classes of tensor dims (not of a relation term's intermediate results) whose value is above
  // `threshold`, by value: value -> number of classes.
  std::map<int64_t, int> classesByValue(int64_t threshold) const;

  // Building (dim_classes.cpp).
  int add(int64_t value);
  void unite(int a, int b);
  std::vector<std::vector<std::vector<int>>>& table(bool spec) { return spec ? spec_ : impl_; }
  const std::vector<std::vector<std::vector<int>>>& table(bool spec) const { return spec ? spec_ : impl_; }

  // Every operator seen, and where: definition node k of LNode n, or node k of a relation term.
  std::vector<OpOccs> ops;
  std::map<std::tuple<bool, int, size_t>, int> defOps;  // (spec, LNode, def node) -> ops index
  std::map<const eg::Term*, std::vector<int>> termOps;  // term -> per node: ops index, -1 for a leaf

 private:
  mutable std::vector<int> parent_;
  std::vector<int64_t> value_;
  // [node][type][dim] -> occurrence (empty for aliases: see `of`)
  std::vector<std::vector<std::vector<int>>> spec_, impl_;
};

// `rel`: the input relations; `certificate`: the relations inference found (InferResult::all), or empty.
// With `result`, every term of it (outputs, the failure's input relations, expectations' known
// forms) is recorded too, so a reduction can rewrite each of them (class_sizes.h).
DimClasses collectDimClasses(const LGraph& spec, const LGraph& impl, const RelationFile& rel,
                             const std::vector<TensorRelations>& certificate, const InferResult* result = nullptr);

}  // namespace tangle::replay::detail
