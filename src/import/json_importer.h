// Importer for the "tangle-graph" JSON format (docs/json-graph.md), the
// output of the Python capture tool.
#pragma once

#include <string>
#include <string_view>

#include "graph/graph.h"

namespace tangle {

Graph importJsonFile(const std::string& path);
// `path` is used in error messages and SourceLocs only.
Graph importJsonText(std::string_view text, const std::string& path);

}  // namespace tangle
