// Size roles over dim classes (issue 14): one variable per class of dim
// occurrences (dim_classes.h) instead of one per value, so that a value
// coincidence (3072 = 384 x 8 = 4 x 768 in GPT TP=4) no longer ties unrelated
// sizes. The shape facts of size_roles.h are stated per operator over the
// classes of its own operands, result and size attributes; each occurrence is
// then rewritten with its class's reduced size.
//
// A class only ever joins occurrences of one real size (the builder unites
// equal values only); collectClassSizes checks it and refuses otherwise. An
// integer that names no occurrence (a relation file's literal, a scalar offset
// outside its operator) is mapped by value only when every class of that value
// got the same reduced size; otherwise the instance is refused, never guessed.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "replay/dim_classes.h"
#include "replay/reduce.h"
#include "replay/size_roles.h"

namespace tangle::replay::detail {

struct ClassSizes {
  DimClasses dc;
  SizeRoles roles;  // keys: classKey(root), quotients (both in keyValue), slice bounds (negative)
  std::string problem;  // non-empty: the classes are unusable (why)
  size_t classes = 0;   // variables that are classes
};

// Why the classes cannot be sizes: a class joining occurrences of two real sizes ("" when none).
std::string mixedClass(const DimClasses& dc);

ClassSizes collectClassSizes(const LGraph& spec, const LGraph& impl, const RelationFile& rel,
                             const InferResult& result, int64_t threshold);

// The check rewritten occurrence by occurrence at the solved sizes; nullptr with `why` when a
// literal's size is ambiguous.
std::unique_ptr<ReducedCheck> mapCheckByClass(const LGraph& spec, const LGraph& impl, const RelationFile& rel,
                                              const InferResult& result, const ClassSizes& cs,
                                              const std::map<int64_t, int64_t>& solved, std::string& why);

}  // namespace tangle::replay::detail
