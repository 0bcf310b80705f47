// Entry point of the importers: picks the reader from the file extension.
#pragma once

#include <string>

#include "graph/graph.h"

namespace tangle {

// ".py" => torch.fx print_readable() dump, ".json" => tangle-graph JSON,
// ".hlo" => XLA HLO text module (hlo_importer.h).
// Anything else throws InputError "unsupported graph format".
Graph importGraph(const std::string& path);

}  // namespace tangle
