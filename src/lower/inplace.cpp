#include "lower/inplace.h"

#include <algorithm>
#include <unordered_map>

#include "graph/value_walk.h"
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
  // Each node's storage (storageKey) as a number: its base node's id, or
  // count + k for the k-th attribute read. Graphs are topologically ordered
  // (Graph::verify), so a view's storage is its first operand's, known already.
  std::vector<int64_t> base(g.size());
  std::vector<std::string> attrs;  // count + k -> the attribute's target
  std::unordered_map<std::string, int64_t> attrKey;
  auto storageOf = [&](NodeId id) -> int64_t {
    const NodeId start = id;
    for (size_t guard = 0; guard <= g.size(); ++guard) {
      const Node& n = g.node(id);
      if (n.op == "get_attr" && !n.args.empty())
        if (auto* s = std::get_if<std::string>(&n.args[0].v)) {
          auto [it, fresh] = attrKey.emplace(*s, count + static_cast<int64_t>(attrs.size()));
          if (fresh) attrs.push_back(*s);
          return it->second;
        }
      if (!(isViewLikeOp(n.op) || isFunctionalizedInplace(n.op)) || n.args.empty() || !n.args[0].isTensor()) break;
      id = std::get<TensorRef>(n.args[0].v).node;
      if (id < start) return base[static_cast<size_t>(id)];
    }
    return id;
  };
  // Writes so far into each storage, the last writer, and the count each node saw when defined.
  std::vector<int> current(g.size(), 0), version(g.size(), 0);
  std::vector<NodeId> writer(g.size(), -1);
  auto grow = [&](int64_t key) {
    if (static_cast<size_t>(key) >= current.size()) {
      current.resize(static_cast<size_t>(key) + 1, 0);
      writer.resize(static_cast<size_t>(key) + 1, -1);
    }
  };
  auto check = [&](NodeId reader, NodeId m, const Node& at) {
    int64_t b = base[static_cast<size_t>(m)];
    if (current[static_cast<size_t>(b)] == version[static_cast<size_t>(m)]) return;
    const Node& w = g.node(writer[static_cast<size_t>(b)]);
    std::string what = reader == count ? "the graph returns" : "node '" + g.node(reader).name + "' reads";
    throw InputError(at.loc, what + " '" + g.node(m).name + "' after '" + w.name + "' (" + w.op +
                                 ") overwrote its storage; tangle cannot give it a value");
  };
  auto isAttr = [&](int64_t b) { return b >= count; };
  std::vector<char> inplace(g.size());
  std::vector<NodeId> written;
  for (NodeId id = 0; id < count; ++id) {
    const Node& n = g.node(id);
    inplace[static_cast<size_t>(id)] = isFunctionalizedInplace(n.op);
    written.clear();
    if (isRecvOp(n.op)) written = firstArgTensors(n);
    auto read = [&](NodeId m) {
      if (std::find(written.begin(), written.end(), m) == written.end()) check(id, m, n);
    };
    for (const Value& a : n.args) forEachTensor(a, read);
    for (const auto& kv : n.kwargs) forEachTensor(kv.second, read);
    const int64_t b = base[static_cast<size_t>(id)] = storageOf(id);
    grow(b);
    if (inplace[static_cast<size_t>(id)]) {
      // Repeated reads of one attribute are merged into one input (p2p.h),
      // which a write between them would make wrong.
      if (isAttr(b))
        throw InputError(n.loc, "node '" + n.name + "' (" + n.op + ") writes into the attribute self." +
                                    attrs[static_cast<size_t>(b - count)] +
                                    "; tangle needs graphs that do not mutate their attributes");
      ++current[static_cast<size_t>(b)];
      writer[static_cast<size_t>(b)] = id;
    }
    for (NodeId buf : written) {
      const int64_t bb = base[static_cast<size_t>(buf)];
      if (!isAttr(bb)) continue;  // a fresh buffer: p2p.cpp checks it is not read before
      ++current[static_cast<size_t>(bb)];
      writer[static_cast<size_t>(bb)] = id;
    }
    version[static_cast<size_t>(id)] = current[static_cast<size_t>(b)];
  }
  for (NodeId out : g.outputNodes()) check(count, out, g.node(out));
  for (NodeId id = 0; id < count; ++id) {
    Node& n = g.node(id);
    if (!inplace[static_cast<size_t>(id)]) continue;
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
