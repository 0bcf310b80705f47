// Translation of one ATen call node of a Graph into canonical e-node terms
// (src/ops vocabulary). The only place, with lower.h, that knows both the
// graph IR and the e-graph.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "egraph/attrs.h"
#include "graph/graph.h"

namespace tangle {

// A small term over the node's operands: nodes[i] may refer to graph
// operands, to earlier local nodes, or to scalar constants (const[v] leaves).
struct CanonTerm {
  struct Ref {
    enum class Kind { Operand, Local, Scalar } kind = Kind::Operand;
    NodeId operand = -1;  // Operand: a tensor-valued node of the graph
    int local = -1;       // Local: index into `nodes`
    double scalar = 0;    // Scalar
  };
  struct Node {
    eg::Symbol op = 0;
    eg::AttrList attrs;
    std::vector<Ref> children;
    // The lowered tensor whose definition this node was (an LGraph index), when rearrangement
    // folding inlined it into another's (src/lower/fold_rearrange.h); -1 otherwise. For reports only.
    int inlinedFrom = -1;
  };
  std::vector<Node> nodes;        // root last; empty when aliasOf is set
  std::optional<NodeId> aliasOf;  // identity ops: clone, detach, wait_tensor, _to_copy (same dtype), ...
};

// Building CanonTerms (shared by the ATen and HLO canonicalizers).
namespace canon {
CanonTerm::Ref operand(NodeId id);
CanonTerm::Ref scalar(double v);
// Appends op[attrs](kids) to `out`; returns a reference to it.
CanonTerm::Ref emit(CanonTerm& out, std::string_view op, eg::AttrList attrs, std::vector<CanonTerm::Ref> kids);
// The number v spread over `sizes` in dtype dt: expand[sizes](cast[dt](const v)), the form of
// ops::addSplat (a bare const has no dtype: zeros of one shape in f16 and in f32 would be one
// e-class). dt Unknown: expand[sizes](const v).
CanonTerm::Ref splat(CanonTerm& out, std::vector<int64_t> sizes, double v, DType dt);
}  // namespace canon

// Canonical form of call node `id` (not placeholder/output/getitem/collectives).
// Known ops get their canonical vocabulary; anything else becomes an opaque
// op named after the call target. Throws InputError (file:line, node name) when
// a known op has malformed arguments (e.g. a non-integer dim).
CanonTerm canonicalize(const Graph& g, NodeId id);

}  // namespace tangle
