// Parsing of tensor type annotations as torch.fx prints them ("f32[8, 16]",
// "i64[]", "f32[s0, 8]", "Sym(s0)"); shared by the FX and JSON importers.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/tensor_type.h"

namespace tangle {

struct AnnotationResult {
  bool ok = false;
  std::optional<TensorType> type;  // unset for "Sym(...)" (a symbolic int, not a tensor)
  std::string error;               // what was expected, when !ok
};

// Parses `text`. Symbolic dims (and the names inside "Sym(...)") are recorded
// in `symbols` (a dim that is an expression such as "2*s0" becomes one opaque
// symbol named by its text); a symbolic dim is encoded as -1 - index.
AnnotationResult parseTypeAnnotation(std::string_view text, std::vector<std::string>& symbols);

}  // namespace tangle
