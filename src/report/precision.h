// The precision note of a refining check: tangle proves equality over the reals, where a cast
// between float dtypes is the identity on values. When the spec and the implementation round at
// different places (a float cast one side has and the other does not have at the related tensor,
// e.g. the spec's gradient summed in bf16 then cast to f32, the implementation's cast to f32 before
// its reduction over the ranks), the report says so in one line.
#pragma once

#include <string>

#include "infer/infer.h"

namespace tangle {

// "refines over the reals; precision differs at ..." or "" (no unmatched float cast, or a verdict
// other than refines).
std::string precisionNote(const InferResult& r, const LGraph& spec, const LGraph& impl);

}  // namespace tangle
