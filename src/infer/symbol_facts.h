// Facts about the symbolic sizes of a check (see sym/context.h), gathered
// before inference so that every type is in normal form when it starts.
#pragma once

#include <vector>

#include "graph/graph.h"
#include "infer/infer.h"
#include "sym/context.h"

namespace tangle {

// Every symbolic dim of the graphs' types is a size: >= 0.
void noteSymbolicSizes(const Graph& g, sym::Context& ctx);

// Adds the relation file's `assume` statements (expanded). A statement that
// names a symbol none of the graphs has, does not parse, or contradicts what
// is known is an InputError at its line.
void addAssumptions(const RelationFile& rel, const Graph& spec, const std::vector<Graph>& impl, sym::Context& ctx);

// An input relation S.x = e says x has e's shape: each symbolic dim of S.x
// equals that of e. Contradictions are InputErrors at the relation's line.
void addRelationShapeFacts(const Problem& p, sym::Context& ctx);

}  // namespace tangle
