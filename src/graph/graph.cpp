#include "graph/graph.h"
#include "graph/value_walk.h"

namespace tangle {

namespace {

// Appends the tensor references inside `v` (recursing into lists) to `out`.
void collectTensors(const Value& v, std::vector<NodeId>& out) {
  if (const auto* t = std::get_if<TensorRef>(&v.v)) {
    out.push_back(t->node);
  } else if (const auto* list = std::get_if<ValueList>(&v.v)) {
    for (const Value& e : *list) collectTensors(e, out);
  }
}

}  // namespace

NodeId Graph::add(Node n) {
  const auto id = static_cast<NodeId>(nodes.size());
  auto [it, inserted] = byName_.try_emplace(n.name, id);
  if (!inserted) {
    const Node& first = nodes[static_cast<size_t>(it->second)];
    std::string where = first.loc.line > 0 ? " (first defined at line " + std::to_string(first.loc.line) + ")" : "";
    SourceLoc loc = n.loc.file.empty() ? SourceLoc{path, n.loc.line} : n.loc;
    throw InputError(loc, "duplicate node name '" + n.name + "'" + where);
  }
  if (n.op == "placeholder") inputs.push_back(id);
  nodes.push_back(std::move(n));
  return id;
}

std::optional<NodeId> Graph::find(const std::string& name) const {
  auto it = byName_.find(name);
  if (it == byName_.end()) return std::nullopt;
  return it->second;
}

std::vector<NodeId> Graph::operands(NodeId id) const {
  std::vector<NodeId> out;
  const Node& n = node(id);
  for (const Value& a : n.args) collectTensors(a, out);
  for (const auto& kv : n.kwargs) collectTensors(kv.second, out);
  return out;
}

std::vector<NodeId> Graph::outputNodes() const {
  std::vector<NodeId> out;
  for (const Value& v : outputs) collectTensors(v, out);
  return out;
}

void Graph::verify() const {
  const auto count = static_cast<NodeId>(nodes.size());
  auto refName = [&](NodeId r) {
    return r >= 0 && r < count ? "'" + node(r).name + "'" : "node #" + std::to_string(r) + " (no such node)";
  };
  for (NodeId id = 0; id < count; ++id) {
    const Node& n = node(id);
    const SourceLoc loc = n.loc.file.empty() ? SourceLoc{path, n.loc.line} : n.loc;
    auto found = byName_.find(n.name);
    if (found == byName_.end() || found->second != id)
      throw InputError(loc, "node '" + n.name + "' is not registered under its name (duplicate or renamed node)");
    auto earlier = [&](NodeId r) {
      if (r >= 0 && r < id) return;
      throw InputError(loc, "node '" + n.name + "' uses " + refName(r) +
                                  " before it is defined (cycle or forward reference)");
    };
    for (const Value& a : n.args) forEachTensor(a, earlier);
    for (const auto& kv : n.kwargs) forEachTensor(kv.second, earlier);
  }
  for (NodeId r : outputNodes()) {
    if (r >= 0 && r < count) continue;
    throw InputError(SourceLoc{path, 0}, "graph output refers to " + refName(r));
  }
}

void qualifySymbols(Graph& g, Owner owner) {
  const std::string prefix = owner.prefix();
  auto rename = [&](sym::ExprId e) {
    return sym::substitute(e, [&](sym::AtomId v) -> std::optional<sym::ExprId> {
      return sym::var(prefix + sym::atom(v).name, owner.rank);
    });
  };
  for (Node& n : g.nodes) {
    if (n.symValue) n.symValue = rename(*n.symValue);
    if (!n.type) continue;
    for (Dim& d : n.type->shape)
      if (isSymbolic(d)) d = sym::toDim(rename(sym::fromDim(d))).value_or(d);
  }
}

}  // namespace tangle
