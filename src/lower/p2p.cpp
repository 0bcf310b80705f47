#include "lower/p2p.h"

#include <algorithm>
#include <limits>
#include <string>
#include <tuple>
#include <unordered_map>

#include "lower/storage.h"
#include "support/error.h"

namespace tangle {

bool isSendOp(const std::string& op) { return op == "c10d.send" || op == "c10d.send.default"; }

namespace {

struct Message {
  int graph;
  NodeId node;    // the send / recv_ node
  NodeId tensor;  // what is sent / the buffer written
};

InputError p2pError(const Node& n, const std::string& what) {
  return InputError(n.loc, "node '" + n.name + "': " + what);
}

int64_t intArgAt(const Node& n, size_t i, const char* what) {
  if (i < n.args.size())
    if (auto* v = std::get_if<int64_t>(&n.args[i].v)) return *v;
  throw p2pError(n, std::string("expected an integer ") + what + " as argument " + std::to_string(i));
}

std::string describe(const std::optional<TensorType>& t) { return t ? toString(*t) : std::string("untyped"); }

}  // namespace

P2PLinks linkPointToPoint(const std::vector<const Graph*>& graphs) {
  const int ranks = static_cast<int>(graphs.size());
  P2PLinks links;
  links.alias.resize(graphs.size());
  links.effects.resize(graphs.size());
  // channel (src, dst, tag) -> messages in program order
  std::map<std::tuple<int, int, int64_t>, std::vector<Message>> sends, recvs;
  for (int gi = 0; gi < ranks; ++gi) {
    const Graph& g = *graphs[static_cast<size_t>(gi)];
    for (NodeId id = 0; id < static_cast<NodeId>(g.size()); ++id) {
      const Node& n = g.node(id);
      bool send = isSendOp(n.op), recv = isRecvOp(n.op);
      if (!send && !recv) continue;
      links.effects[static_cast<size_t>(gi)].insert(id);
      int64_t peer = intArgAt(n, 2, send ? "destination rank" : "source rank");
      int64_t tag = n.args.size() > 3 ? intArgAt(n, 3, "tag") : 0;
      if (peer < 0 || peer >= ranks || peer == gi)
        throw p2pError(n, std::string(send ? "sends to" : "receives from") + " rank " + std::to_string(peer) +
                              " but the implementation has ranks 0.." + std::to_string(ranks - 1) +
                              (peer == gi ? " (itself)" : ""));
      std::vector<NodeId> tensors = firstArgTensors(n);
      if (tensors.empty()) throw p2pError(n, "expected a list of tensors as argument 0");
      for (NodeId t : tensors) {
        if (send) sends[{gi, static_cast<int>(peer), tag}].push_back({gi, id, t});
        else recvs[{static_cast<int>(peer), gi, tag}].push_back({gi, id, t});
      }
    }
  }
  auto unmatched = [&](const Message& m, bool isSend, const std::tuple<int, int, int64_t>& ch, size_t have,
                       size_t other) {
    auto [src, dst, tag] = ch;
    const Node& n = graphs[static_cast<size_t>(m.graph)]->node(m.node);
    return p2pError(n, "rank " + std::to_string(src) + " sends " + std::to_string(isSend ? have : other) +
                           " tensor(s) to rank " + std::to_string(dst) + " (tag " + std::to_string(tag) +
                           ") but rank " + std::to_string(dst) + " receives " +
                           std::to_string(isSend ? other : have) + "; this " + (isSend ? "send" : "receive") +
                           " has no partner");
  };
  // received value per (graph, recv_ node, buffer)
  std::map<std::tuple<int, NodeId, NodeId>, std::pair<int, NodeId>> received;
  for (auto& [ch, list] : sends) {
    auto it = recvs.find(ch);
    size_t nr = it == recvs.end() ? 0 : it->second.size();
    if (nr < list.size()) throw unmatched(list[nr], true, ch, list.size(), nr);
  }
  for (auto& [ch, list] : recvs) {
    auto it = sends.find(ch);
    size_t ns = it == sends.end() ? 0 : it->second.size();
    if (ns < list.size()) throw unmatched(list[ns], false, ch, list.size(), ns);
    for (size_t k = 0; k < list.size(); ++k) {
      const Message& s = it->second[k];
      const Message& r = list[k];
      const Node& sn = graphs[static_cast<size_t>(s.graph)]->node(s.tensor);
      const Node& rn = graphs[static_cast<size_t>(r.graph)]->node(r.tensor);
      if (!sn.type || !rn.type || sn.type->shape != rn.type->shape || sn.type->dtype != rn.type->dtype)
        throw p2pError(graphs[static_cast<size_t>(r.graph)]->node(r.node),
                       "receives " + describe(rn.type) + " into '" + rn.name + "' but rank " +
                           std::to_string(s.graph) + " sends " + describe(sn.type) + " ('" + sn.name + "')");
      received[{r.graph, r.node, r.tensor}] = {s.graph, s.tensor};
    }
  }
  // Reads of receive buffers; repeated reads of one attribute.
  for (int gi = 0; gi < ranks; ++gi) {
    const Graph& g = *graphs[static_cast<size_t>(gi)];
    std::vector<std::vector<NodeId>> users;  // graphUsers(g), once a fresh buffer needs it
    // attribute -> receives into it, in order: (position, sender value)
    std::unordered_map<std::string, std::vector<std::pair<NodeId, std::pair<int, NodeId>>>> writes;
    // This graph's receives: a range of the map (ordered by graph first).
    auto from = received.lower_bound({gi, std::numeric_limits<NodeId>::min(), std::numeric_limits<NodeId>::min()});
    for (auto it = from; it != received.end() && std::get<0>(it->first) == gi; ++it) {
      auto& [key, value] = *it;
      auto [rg, rnode, buf] = key;
      const Node& b = g.node(buf);
      std::string sk = storageKey(g, buf);
      if (b.op == "get_attr" && sk.rfind("attr:", 0) == 0) {
        writes[sk].push_back({rnode, value});
        continue;
      }
      // A fresh buffer (torch.empty): defined for the receive, read only after it.
      if (sk != "node:" + std::to_string(buf))
        throw p2pError(g.node(rnode), "receives into a view ('" + b.name + "'); tangle needs a whole buffer");
      if (users.empty()) users = graphUsers(g);
      for (NodeId pos : readPositions(g, buf, users, {rnode}))
        if (pos < rnode)
          throw p2pError(g.node(pos), "reads '" + b.name + "' before '" + g.node(rnode).name + "' receives into it");
      links.alias[static_cast<size_t>(gi)][buf] = value;
    }
    for (auto& [sk, list] : writes) std::sort(list.begin(), list.end());
    std::unordered_map<std::string, NodeId> firstRead;
    for (NodeId id = 0; id < static_cast<NodeId>(g.size()); ++id) {
      const Node& n = g.node(id);
      if (n.op != "get_attr") continue;
      std::string sk = storageKey(g, id);
      auto w = writes.find(sk);
      if (w == writes.end()) {  // never written: every read is the same input
        auto [it, fresh] = firstRead.emplace(sk, id);
        if (!fresh) links.alias[static_cast<size_t>(gi)][id] = {gi, it->second};
        continue;
      }
      // functionalizeInplace checked that this node is read before the next
      // write: it holds what the last receive before it wrote.
      const std::pair<int, NodeId>* last = nullptr;
      for (auto& [pos, value] : w->second)
        if (pos < id) last = &value;
      if (last) links.alias[static_cast<size_t>(gi)][id] = *last;
    }
  }
  return links;
}

}  // namespace tangle
