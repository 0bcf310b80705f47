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
  std::optional<TensorType> type;         // unset for "Sym(...)" (a symbolic int, not a tensor)
  std::optional<sym::ExprId> symValue;    // the value of a "Sym(...)" annotation
  std::string error;                      // what was expected, when !ok
  bool complex = false;                   // a complex dtype, read as its real view (see the .cpp)
};

// Parses `text`. A symbolic dim ("s0", "2*s0", "(s77//2)") is a sym
// expression over the graph's own (unqualified) symbol names; see
// qualifySymbols in graph/graph.h for giving them a graph prefix.
AnnotationResult parseTypeAnnotation(std::string_view text);

}  // namespace tangle
