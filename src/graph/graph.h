// The graph IR shared by importers, lowering and inference.
//
// A Graph is one rank's (or the spec's) computation as imported: nodes in a
// topological order, each computing either one tensor or a tuple of tensors
// (a tuple is unpacked by `getitem` nodes, as in torch.fx). Operator names are
// kept exactly as the source spells them ("aten.mm.default"); giving them
// meaning is the job of src/lower.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "support/error.h"
#include "support/owner.h"
#include "support/tensor_type.h"

namespace tangle {

using NodeId = int32_t;

// A reference to the tensor computed by another node of the same graph.
struct TensorRef {
  NodeId node = -1;
  bool operator==(const TensorRef&) const = default;
};

struct NoneValue {
  bool operator==(const NoneValue&) const = default;
};

// A python-literal or tensor argument of a call. Lists hold Values (tensor
// lists, int lists, nested tuples). `Symbol` is a bare name that is neither a
// tensor nor a literal (e.g. torch.contiguous_format, device(...) text).
struct Value;
using ValueList = std::vector<Value>;
struct Symbol {
  std::string text;
  bool operator==(const Symbol&) const = default;
};
struct Value {
  std::variant<NoneValue, bool, int64_t, double, std::string, DType, Symbol, TensorRef, ValueList> v;

  Value() = default;
  template <class T>
  Value(T x) : v(std::move(x)) {}

  bool isTensor() const { return std::holds_alternative<TensorRef>(v); }
  bool isList() const { return std::holds_alternative<ValueList>(v); }
  bool operator==(const Value&) const = default;
};

struct Node {
  std::string name;          // unique in the graph (FX node name / HLO instruction)
  std::string op;            // "placeholder", "output", "getitem", "get_attr", or a call target
  std::vector<Value> args;   // positional arguments
  std::vector<std::pair<std::string, Value>> kwargs;
  // Type of the computed tensor; unset for tuple-valued nodes and when unannotated.
  std::optional<TensorType> type;
  std::optional<sym::ExprId> symValue;  // a "Sym(...)" node: its symbolic integer value
  bool isTuple = false;      // the node computes a tuple; read it with getitem
  bool complexView = false;  // a complex tensor, typed as its real view [..., 2] (import/type_annotation.cpp)
  SourceLoc loc;             // where in the dump file the node is defined
  std::string source;        // the "# File: ... code: ..." comment above it, if any

  const Value* kwarg(const std::string& key) const {
    for (auto& [k, v] : kwargs)
      if (k == key) return &v;
    return nullptr;
  }
};

class Graph {
 public:
  std::string path;                  // file it came from
  std::vector<Node> nodes;           // topologically ordered
  std::vector<NodeId> inputs;        // placeholder nodes, in order
  std::vector<Value> outputs;        // what the output node returns (flattened)

  // Appends (a "placeholder" node is also appended to `inputs`); throws
  // InputError on a duplicate name.
  NodeId add(Node n);
  std::optional<NodeId> find(std::string_view name) const;
  const Node& node(NodeId id) const { return nodes[static_cast<size_t>(id)]; }
  Node& node(NodeId id) { return nodes[static_cast<size_t>(id)]; }
  size_t size() const { return nodes.size(); }

  // Tensors (node ids) a node reads, in argument order, including inside lists.
  std::vector<NodeId> operands(NodeId id) const;
  // Ids of tensor-valued output nodes (flattened output tuple).
  std::vector<NodeId> outputNodes() const;

  // Checks the graph is well formed: every reference points to an earlier
  // node (no cycles, no forward references), names are unique. Throws InputError.
  void verify() const;

 private:
  // Name -> node: open addressing over (32 bits of the name's hash, node id);
  // a probe compares hashes before it reads a node's name.
  struct NameSlot {
    uint32_t hash = 0;
    NodeId node = -1;  // -1: empty
  };
  std::optional<NodeId> findHashed(std::string_view name, uint32_t hash) const;
  void indexName(uint32_t hash, NodeId id);
  std::vector<NameSlot> byName_;
};

// Renames every symbol of the graph's types and Sym values `s` to
// `owner.prefix() + s` ("s77" -> "D0.s77") and records that it belongs to
// `owner`'s graph. Symbols of different graphs are unrelated unless a fact
// relates them, so each graph of a check gets its own names.
void qualifySymbols(Graph& g, Owner owner);

// Some node has a symbolic size in its annotation or is a Sym(...) value:
// work on such graphs stays on one thread (the size context is shared).
bool anySymbolicSize(const Graph& g);

}  // namespace tangle
