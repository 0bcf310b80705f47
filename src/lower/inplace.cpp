#include "lower/inplace.h"

#include <algorithm>
#include <unordered_map>

#include "lower/storage.h"
#include "support/error.h"

namespace tangle {

bool isRecvOp(const std::string& op) { return op == "c10d.recv_" || op == "c10d.recv_.default"; }

namespace {

// `a.add_(b)` of two tensors of one type, no alpha: a running sum.
bool isAccumulation(const Graph& g, const Node& n) {
  if (n.op != "aten.add_.Tensor" || n.args.size() != 2 || !n.kwargs.empty()) return false;
  if (!n.args[0].isTensor() || !n.args[1].isTensor() || !n.type) return false;
  const auto& a = g.node(std::get<TensorRef>(n.args[0].v).node).type;
  const auto& b = g.node(std::get<TensorRef>(n.args[1].v).node).type;
  return a && b && *a == *b && *a == *n.type;
}

}  // namespace

std::vector<NodeId> firstArgTensors(const Node& n) {
  std::vector<NodeId> out;
  if (n.args.empty()) return out;
  if (auto* list = std::get_if<ValueList>(&n.args[0].v)) {
    for (const Value& v : *list)
      if (v.isTensor()) out.push_back(std::get<TensorRef>(v.v).node);
  } else if (n.args[0].isTensor()) {
    out.push_back(std::get<TensorRef>(n.args[0].v).node);
  }
  return out;
}

void functionalizeInplace(Graph& g) {
  const auto count = static_cast<NodeId>(g.size());
  std::vector<std::string> base(g.size());
  std::vector<int> version(g.size(), 0);
  std::unordered_map<std::string, int> current;
  std::unordered_map<std::string, NodeId> writer;
  auto check = [&](NodeId reader, NodeId m, const Node& at) {
    const std::string& b = base[static_cast<size_t>(m)];
    if (current[b] == version[static_cast<size_t>(m)]) return;
    const Node& w = g.node(writer[b]);
    std::string what = reader == count ? "the graph returns" : "node '" + g.node(reader).name + "' reads";
    throw InputError(at.loc, what + " '" + g.node(m).name + "' after '" + w.name + "' (" + w.op +
                                 ") overwrote its storage; tangle cannot give it a value");
  };
  for (NodeId id = 0; id < count; ++id) {
    const Node& n = g.node(id);
    std::vector<NodeId> written = isRecvOp(n.op) ? firstArgTensors(n) : std::vector<NodeId>{};
    for (NodeId m : g.operands(id))
      if (std::find(written.begin(), written.end(), m) == written.end()) check(id, m, n);
    base[static_cast<size_t>(id)] = storageKey(g, id);
    const std::string& b = base[static_cast<size_t>(id)];
    if (isFunctionalizedInplace(n.op)) {
      // Repeated reads of one attribute are merged into one input (p2p.h),
      // which a write between them would make wrong.
      if (b.rfind("attr:", 0) == 0)
        throw InputError(n.loc, "node '" + n.name + "' (" + n.op + ") writes into the attribute self." + b.substr(5) +
                                    "; tangle needs graphs that do not mutate their attributes");
      ++current[b];
      writer[b] = id;
    }
    for (NodeId buf : written) {
      const std::string& bb = base[static_cast<size_t>(buf)];
      if (bb.rfind("attr:", 0) != 0) continue;  // a fresh buffer: p2p.cpp checks it is not read before
      ++current[bb];
      writer[bb] = id;
    }
    version[static_cast<size_t>(id)] = current[b];
  }
  for (NodeId out : g.outputNodes()) check(count, out, g.node(out));
  for (Node& n : g.nodes) {
    if (!isFunctionalizedInplace(n.op)) continue;
    if (isAccumulation(g, n)) {
      n.op = "tangle.accumulate.default";
      continue;
    }
    auto dot = n.op.find("_.");
    if (dot != std::string::npos) n.op.erase(dot, 1);
    else if (!n.op.empty() && n.op.back() == '_') n.op.pop_back();
  }
}

}  // namespace tangle
