// Extraction: the smallest term of an e-class, optionally restricted to
// e-nodes that pass a filter (e.g. "clean" operators and implementation
// tensors only). Cost of a term = number of e-nodes in it (tree size).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "egraph/egraph.h"

namespace tangle::eg {

// A term as a flat array; children refer to earlier entries; the root is last.
// Terms built by the Extractor store the subterm of an e-class once even if it
// occurs several times (a DAG), so size() can be less than the tree size that
// Extractor::cost reports. Equality is structural (as trees).
struct Term {
  struct Node {
    Symbol op;
    AttrsId attrs;
    std::vector<uint32_t> children;  // indices into `nodes`
  };
  std::vector<Node> nodes;
  size_t size() const { return nodes.size(); }
  uint32_t root() const { return static_cast<uint32_t>(nodes.size() - 1); }
  bool operator==(const Term& o) const;
  // s-expression, e.g. (concat[0] (tensor["D0.x"]) (tensor["D1.x"]))
  std::string toSExpr() const;
};

class Extractor {
 public:
  using Filter = std::function<bool(const EGraph&, const ENode&)>;
  // Computes best costs for all classes (fixpoint). `allowed` null = all nodes allowed.
  // The e-graph must be clean and must outlive the Extractor, unchanged.
  Extractor(const EGraph& g, Filter allowed = nullptr);
  // The same, over the given canonical classes only: a node of them completes
  // only if all its children are among them. Callers pass the classes where an
  // allowed term can exist at all (e.g. one rank's), so the work follows them
  // and not the whole e-graph.
  Extractor(const EGraph& g, Filter allowed, const std::vector<Id>& classes);

  // Smallest allowed term of the class, or nullopt when none exists.
  std::optional<Term> best(Id eclass) const;
  std::optional<size_t> cost(Id eclass) const;
  // One term per allowed e-node of the class (that e-node as root, best terms
  // below it), smallest first, at most `limit`. Gives the distinct top-level
  // alternatives of a class, e.g. both `D0.x` and `D1.x` for a replicated tensor.
  std::vector<Term> alternatives(Id eclass, size_t limit) const;
  // The same for a narrower filter that changes no class's cost, only which
  // of its equal-cost leaves some classes pick (a rank's own copy of a
  // replicated tensor): the root's nodes must pass `rootAllowed`, and class c
  // (canonical) builds from node `picks.at(c)` where listed.
  std::vector<Term> alternatives(Id eclass, size_t limit, const Filter& rootAllowed,
                                 const std::unordered_map<Id, int>& picks) const;
  // The canonical classes those terms can visit: the class and, below each
  // of its allowed nodes, the classes the best nodes reach (a pick swaps
  // only a class's leaf for another of equal cost, which reaches none).
  std::vector<Id> cone(Id eclass, const Filter& rootAllowed) const;

 private:
  const EGraph& g_;
  Filter allowed_;
  std::vector<size_t> cost_;   // by canonical id; SIZE_MAX = none
  std::vector<int> bestNode_;  // index into eclass(id).nodes; -1 = none
  void compute(const std::vector<Id>& classes);
  Term build(Id eclass) const;
  Term buildFrom(const ENode& root, const std::unordered_map<Id, int>* picks) const;
  std::vector<Term> alternativesOf(Id eclass, size_t limit, const Filter& rootAllowed,
                                   const std::unordered_map<Id, int>* picks) const;
};

// Adds a term to the e-graph (plain `add`), returning its root class.
Id addTerm(EGraph& g, const Term& t);

}  // namespace tangle::eg
