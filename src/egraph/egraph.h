// The e-graph: hash-consed e-nodes grouped into e-classes by a union-find,
// with deferred rebuilding (egg's design): `merge` only records the union;
// `rebuild` restores the congruence invariant (equal children => equal class)
// and the hashcons. Queries that need canonical ids (`lookup`, e-matching)
// require a clean e-graph, i.e. `rebuild()` after the last `merge`.
//
// Each e-class carries analysis data (ClassData): the tensor type(s) of the
// class's value. The data of a new e-node is computed by a user-provided
// `DataFn` (the operator layer knows shapes; this layer knows no operators).
//
// This file knows no tensor operator semantics. See src/lower for the
// translation between graph nodes and e-nodes.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "egraph/attrs.h"
#include "egraph/enode.h"
#include "support/owner.h"
#include "support/tensor_type.h"

namespace tangle::sym {
class Context;
}

namespace tangle::eg {

// What an e-class is known to compute. `types` has one entry for a tensor
// class, one per element for a tuple class, and is empty when unknown.
struct ClassData {
  std::vector<TensorType> types;
  bool tuple = false;
  std::optional<double> constant;  // the class is a scalar (or splat) of this value
  bool operator==(const ClassData&) const = default;
  const TensorType* tensor() const { return (!tuple && types.size() == 1) ? &types[0] : nullptr; }
};

struct EClass {
  Id id;
  std::vector<ENode> nodes;                      // canonical after rebuild, deduplicated, oldest first
  std::vector<std::pair<ENode, Id>> parents;     // e-nodes that use this class, with their class
                                                 // (canonical, each e-node once, after rebuild)
  // On merge: unknown (empty) types take the other class's; two known but
  // incompatible types (or two different constants) keep the data of merge's
  // first argument and record a message in EGraph::conflicts(). Shapes must
  // be equal; an Unknown dtype is compatible with any dtype.
  ClassData data;
};

// Computes the data of a new e-node from its children's data.
// Returns nullopt when the node is ill-typed (e.g. a lemma built a concat of
// mismatching shapes); `EGraph::add` then still adds the node with empty data
// but callers building lemma right-hand sides use `tryAdd`, which refuses.
using DataFn = std::function<std::optional<ClassData>(const class EGraph&, const ENode&)>;

// The child class a new e-node is the identity of (a reshape to its child's
// own shape, a one-piece concat...), or nullopt. `add` then returns that class
// instead of adding the node: such a node would only ever sit in its child's
// class as a self-loop, which every rule over its operator matches again and
// again (reshape-reshape builds one for each pair of a tensor's reshapes).
using IdentityFn = std::optional<Id> (*)(const class EGraph&, const ENode&);

// Not thread-safe. Copying an EGraph copies a handle: both copies share one e-graph.
class EGraph {
 public:
  // `symbols`: what is known of the symbolic sizes (must outlive the e-graph);
  // null gives the e-graph its own empty context (nothing assumed).
  explicit EGraph(DataFn dataFn = nullptr, const sym::Context* symbols = nullptr);

  // The symbolic-size context under which types are inferred and compared
  // (merges, type rules and lemma guards ask it their questions).
  const sym::Context& symbols() const;

  // Installs the identity test (see IdentityFn); before any node is added.
  void setIdentityFn(IdentityFn fn);

  // Adds (or finds) an e-node; its children must be ids of this e-graph.
  Id add(ENode node);
  // Like add, but refuses (returns nullopt, adds nothing) an ill-typed node.
  std::optional<Id> tryAdd(ENode node);
  // The class already holding this node (children canonicalized), if any. Never adds.
  std::optional<Id> lookup(ENode node) const;

  // Convenience for leaves: a tensor named `name` ("S.x", "D0.x") of graph
  // `owner`, op "tensor", attrs [Str name, Int owner.rank]. `data` is used as
  // is (the DataFn is not called); for an existing leaf it is joined into the
  // class's data like a merge.
  Id leaf(std::string_view name, Owner owner, const ClassData& data);
  // A leaf of no implementation rank (owned by the spec): scratch e-graphs, tests.
  Id leaf(std::string_view name, const ClassData& data) { return leaf(name, Owner::spec(), data); }
  // The same with the leaf's attributes already interned ([Str name, Int rank]).
  Id leaf(AttrsId tensorAttrs, const ClassData& data);

  Id find(Id id) const;  // canonical id (path compression is done lazily in merge/rebuild)
  // Records that a and b are equal. Returns true if they were in different classes.
  // `reason` names the lemma or fact (for stats / explanations).
  bool merge(Id a, Id b);
  // Restores congruence and the hashcons; merges ClassData. O(work since last rebuild).
  void rebuild();
  bool clean() const;

  const EClass& eclass(Id id) const;  // id need not be canonical
  const ClassData& data(Id id) const { return eclass(id).data; }
  std::vector<Id> classIds() const;    // canonical ids of all classes
  // Canonical ids of the classes containing at least one e-node with this op.
  // Used by e-matching to avoid scanning every class. Valid when clean.
  const std::vector<Id>& classesWithOp(Symbol op) const;

  // The change log: every class that gained an e-node, was merged into, had a node re-keyed
  // (congruence) or gained data is appended, so a matcher can look only where matches may be new
  // (rewrite.cpp). changeCount() is the log's length; changedSince appends the classes logged
  // from position `from` on (raw ids, possibly merged away since: find() them).
  size_t changeCount() const;
  void changedSince(size_t from, std::vector<Id>& out) const;

  size_t numNodes() const;    // e-nodes in the hashcons
  size_t numClasses() const;  // canonical classes
  size_t numIds() const;      // one past the largest e-class id ever created (canonical or not)

  // Shape/type conflicts seen when merging two classes whose data disagree:
  // a sign of a wrong lemma or an inconsistent relation. Never silently dropped.
  const std::vector<std::string>& conflicts() const;
  // The dims (Dim pairs) that those conflicts show equal: the merged classes'
  // types differ only in dims of which one side is symbolic, and one value has
  // one shape. Recorded, never assumed here (the context is const); the
  // driver may learn them and search again (driver/check.cpp).
  const std::vector<std::pair<int64_t, int64_t>>& mergedSizes() const;

  // Debug: checks every invariant (hashcons canonical, congruence, parents). Throws std::logic_error.
  void checkInvariants() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace tangle::eg
