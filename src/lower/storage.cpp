#include "lower/storage.h"

#include <algorithm>
#include <string_view>

namespace tangle {

namespace {

std::string_view baseName(const std::string& op) {
  std::string_view o = op;
  for (std::string_view suffix : {".default", ".Tensor", ".int", ".Dimname", ".dim", ".using_ints", ".self"}) {
    if (o.size() > suffix.size() && o.substr(o.size() - suffix.size()) == suffix) {
      o.remove_suffix(suffix.size());
      break;
    }
  }
  return o;
}

}  // namespace

bool isViewLikeOp(const std::string& op) {
  // Conservative: an op that may return a view counts as one (more sharing
  // only makes the mutation checks stricter).
  static const std::string_view kViews[] = {
      "aten.detach", "aten.alias", "aten.view", "aten._unsafe_view", "aten.reshape", "aten._reshape_alias",
      "aten.t", "aten.transpose", "aten.permute", "aten.slice", "aten.select", "aten.expand", "aten.unsqueeze",
      "aten.squeeze", "aten.as_strided", "aten.split", "aten.split_with_sizes", "aten.unbind", "aten.chunk",
      "aten.narrow", "aten.diagonal", "aten.view_as_real", "aten.view_as_complex", "aten.unflatten",
      "aten.flatten", "aten.contiguous", "aten.to", "aten.numpy_T", "aten.mT", "aten.movedim", "getitem"};
  std::string_view b = baseName(op);
  return std::find(std::begin(kViews), std::end(kViews), b) != std::end(kViews);
}

bool isFunctionalizedInplace(const std::string& op) {
  // baseName(op) is one of these: op is one, or one and a suffix baseName strips
  // (the test of every op of every graph, so no suffix loop for the others).
  // copy_(dst, src): DDP's reducer writes each reduced gradient back with it.
  for (std::string_view o : {"aten.add_", "aten.sub_", "aten.mul_", "aten.div_", "aten.copy_"})
    if (op.size() >= o.size() && std::string_view(op).substr(0, o.size()) == o)
      return op.size() == o.size() || baseName(op) == o;
  return false;
}

std::vector<std::vector<NodeId>> graphUsers(const Graph& g) {
  std::vector<std::vector<NodeId>> users(g.size());
  for (NodeId id = 0; id < static_cast<NodeId>(g.size()); ++id)
    for (NodeId r : g.operands(id))
      if (users[static_cast<size_t>(r)].empty() || users[static_cast<size_t>(r)].back() != id)
        users[static_cast<size_t>(r)].push_back(id);
  return users;
}

std::string storageKey(const Graph& g, NodeId id) {
  for (size_t guard = 0; guard <= g.size(); ++guard) {
    const Node& n = g.node(id);
    if (n.op == "get_attr" && !n.args.empty())
      if (auto* s = std::get_if<std::string>(&n.args[0].v)) return "attr:" + *s;
    if (!(isViewLikeOp(n.op) || isFunctionalizedInplace(n.op)) || n.args.empty() || !n.args[0].isTensor()) break;
    id = std::get<TensorRef>(n.args[0].v).node;
  }
  return "node:" + std::to_string(id);
}

std::vector<NodeId> readPositions(const Graph& g, NodeId id, const std::vector<std::vector<NodeId>>& users,
                                  const std::vector<NodeId>& skip) {
  std::vector<NodeId> out;
  std::vector<NodeId> todo{id};
  std::vector<char> seen(g.size(), 0);
  const std::vector<NodeId> outputs = g.outputNodes();
  while (!todo.empty()) {
    NodeId cur = todo.back();
    todo.pop_back();
    if (seen[static_cast<size_t>(cur)]) continue;
    seen[static_cast<size_t>(cur)] = 1;
    if (std::find(outputs.begin(), outputs.end(), cur) != outputs.end()) out.push_back(static_cast<NodeId>(g.size()));
    for (NodeId u : users[static_cast<size_t>(cur)]) {
      if (std::find(skip.begin(), skip.end(), u) != skip.end()) continue;
      if (isViewLikeOp(g.node(u).op)) todo.push_back(u);
      else out.push_back(u);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace tangle
