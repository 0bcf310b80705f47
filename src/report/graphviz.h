// Layout by Graphviz: `dot -Tsvg` run as a child process (no library linked).
#pragma once

#include <optional>
#include <string>

namespace tangle {

// The SVG drawing of a DOT graph (from "<svg" on: no XML prolog, ready to
// inline in HTML), or nullopt with `why` set when `dot` is not installed,
// fails, or takes longer than `timeoutSeconds` (it is killed then).
// $TANGLE_DOT overrides the program (tests use it to simulate a missing dot).
std::optional<std::string> renderSvg(const std::string& dot, std::string& why, double timeoutSeconds = 30);

}  // namespace tangle
