#include "graph/graph.h"
#include "graph/value_walk.h"

#include <algorithm>

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

namespace {
uint32_t nameHash(std::string_view name) { return static_cast<uint32_t>(std::hash<std::string_view>{}(name)); }
}  // namespace

std::optional<NodeId> Graph::findHashed(std::string_view name, uint32_t hash) const {
  if (byName_.empty()) return std::nullopt;
  const size_t mask = byName_.size() - 1;
  for (size_t i = hash & mask; byName_[i].node >= 0; i = (i + 1) & mask)
    if (byName_[i].hash == hash && nodes[static_cast<size_t>(byName_[i].node)].name == name) return byName_[i].node;
  return std::nullopt;
}

void Graph::indexName(uint32_t hash, NodeId id) {
  if (2 * (static_cast<size_t>(id) + 1) > byName_.size()) {  // ids are dense: the load stays <= 1/2
    std::vector<NameSlot> old = std::move(byName_);
    byName_.assign(std::max<size_t>(64, 2 * old.size()), NameSlot{});
    const size_t mask = byName_.size() - 1;
    for (const NameSlot& s : old) {
      if (s.node < 0) continue;
      size_t i = s.hash & mask;
      while (byName_[i].node >= 0) i = (i + 1) & mask;
      byName_[i] = s;
    }
  }
  const size_t mask = byName_.size() - 1;
  size_t i = hash & mask;
  while (byName_[i].node >= 0) i = (i + 1) & mask;
  byName_[i] = NameSlot{hash, id};
}

NodeId Graph::add(Node n) {
  const auto id = static_cast<NodeId>(nodes.size());
  const uint32_t hash = nameHash(n.name);
  if (auto firstId = findHashed(n.name, hash)) {
    const Node& first = nodes[static_cast<size_t>(*firstId)];
    std::string where = first.loc.line > 0 ? " (first defined at line " + std::to_string(first.loc.line) + ")" : "";
    SourceLoc loc = n.loc.file.empty() ? SourceLoc{path, n.loc.line} : n.loc;
    throw InputError(loc, "duplicate node name '" + n.name + "'" + where);
  }
  if (n.op == "placeholder") inputs.push_back(id);
  nodes.push_back(std::move(n));
  indexName(hash, id);
  return id;
}

std::optional<NodeId> Graph::find(std::string_view name) const { return findHashed(name, nameHash(name)); }

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
    auto loc = [&] { return n.loc.file.empty() ? SourceLoc{path, n.loc.line} : n.loc; };  // built for an error only
    auto found = find(n.name);
    if (!found || *found != id)
      throw InputError(loc(), "node '" + n.name + "' is not registered under its name (duplicate or renamed node)");
    auto earlier = [&](NodeId r) {
      if (r >= 0 && r < id) return;
      throw InputError(loc(), "node '" + n.name + "' uses " + refName(r) +
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

bool anySymbolicSize(const Graph& g) {
  return std::any_of(g.nodes.begin(), g.nodes.end(), [](const Node& n) {
    return n.symValue || (n.type && std::any_of(n.type->shape.begin(), n.type->shape.end(),
                                                [](Dim d) { return isSymbolic(d); }));
  });
}

}  // namespace tangle
