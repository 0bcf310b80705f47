// Which dims of one operator are the same size by the operator's structure
// (issue 14, dim_classes.h). Tying every equal VALUE inside an operator made
// two dims of one tensor one class when they merely coincide: aws_llama TP=4's
// rotary step multiplies [64, 4, 32, 32] tensors (32 heads x a rotary half of
// 32), so the head count and the half were one class, and with the kv heads
// per rank (real 2) every size was pinned at its real value. Elementwise ops
// (right-aligned broadcasting), transposes, reshapes, products, reductions and
// normalizations tie by POSITION instead.
#pragma once

#include "replay/dim_classes.h"

namespace tangle::replay::detail {

// Ties the occurrences `o`'s type rule makes equal, position by position (equal values only, so a
// class never joins two real sizes). False when the operator has no positional rule here: the
// caller then ties its equal values (every other known or opaque operator).
bool tieByPosition(DimClasses& dc, const OpOccs& o);

}  // namespace tangle::replay::detail
