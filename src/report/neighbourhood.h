// The failing operator's neighbourhood, as a graph to draw: the spec
// operators around it, the implementation operators on each rank that
// inference compared it with, and the relations known for its inputs.
#pragma once

#include <string>
#include <vector>

#include "infer/infer.h"

namespace tangle {

struct DrawnNode {
  std::string id;        // DOT id: "s12" (spec LNode 12), "i40" (implementation LNode 40)
  bool spec = true;
  int node = -1;         // LNode in its LGraph
  int rank = -1;         // implementation rank
  std::string name;      // "S.mm", "D1.mm"
  std::string op;        // "aten.mm.default", "placeholder"
  std::string source;    // the model source comment, or ""
  std::string location;  // "spec.py:11"
  std::string role;      // "failing", "input", "user", "impl", "related"
};

struct Neighbourhood {
  std::vector<DrawnNode> nodes;
  std::string dot;       // Graphviz source
};

Neighbourhood failureNeighbourhood(const Failure& f, const LGraph& spec, const LGraph& impl);

}  // namespace tangle
