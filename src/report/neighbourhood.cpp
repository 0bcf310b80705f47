#include "report/neighbourhood.h"

#include <algorithm>
#include <map>
#include <regex>

#include "report/progress.h"

namespace tangle {

namespace {

constexpr size_t kMaxSpec = 16, kMaxImpl = 16, kMaxLeavesPerRelation = 8, kMaxExprsShown = 3;

std::string dotEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string shortOp(std::string op) {
  if (op.rfind("aten.", 0) == 0) op = op.substr(5);
  if (op.size() > 8 && op.compare(op.size() - 8, 8, ".default") == 0) op.resize(op.size() - 8);
  return op;
}

std::string clip(const std::string& s, size_t n) { return s.size() > n ? s.substr(0, n - 3) + "..." : s; }

class Builder {
 public:
  Builder(const LGraph& spec, const LGraph& impl) : spec_(spec), impl_(impl) {}

  // Adds an LNode (alias-resolved) unless drawn already or over the cap; its index in nodes, or -1.
  int add(bool isSpec, int id, const std::string& role) {
    const LGraph& lg = isSpec ? spec_ : impl_;
    id = lg.resolve(id);
    auto& index = isSpec ? specIndex_ : implIndex_;
    if (auto it = index.find(id); it != index.end()) return it->second;
    size_t& count = isSpec ? specCount_ : implCount_;
    if (count >= (isSpec ? kMaxSpec : kMaxImpl)) return -1;
    ++count;
    const LNode& n = lg.node(id);
    const Node& o = lg.origin(id);
    DrawnNode d;
    d.id = (isSpec ? "s" : "i") + std::to_string(id);
    d.spec = isSpec;
    d.node = id;
    d.rank = isSpec ? -1 : n.graph;
    d.name = n.name;
    d.op = o.op;
    d.source = o.source;
    while (!d.source.empty() && (d.source.back() == '\n' || d.source.back() == ' ')) d.source.pop_back();
    d.location = o.loc.file.substr(o.loc.file.find_last_of('/') + 1) + ":" + std::to_string(o.loc.line);
    d.role = role;
    nodes.push_back(d);
    index[id] = static_cast<int>(nodes.size()) - 1;
    return index[id];
  }

  int find(bool isSpec, int id) const {
    const auto& index = isSpec ? specIndex_ : implIndex_;
    auto it = index.find((isSpec ? spec_ : impl_).resolve(id));
    return it == index.end() ? -1 : it->second;
  }

  std::vector<DrawnNode> nodes;

 private:
  const LGraph& spec_;
  const LGraph& impl_;
  std::map<int, int> specIndex_, implIndex_;
  size_t specCount_ = 0, implCount_ = 0;
};

std::string nodeStatement(const DrawnNode& d) {
  std::string where = shortSource(d.source);
  where = where.substr(0, where.find(" in "));  // file:line; the function is in the hover text
  std::string label = d.name + "\n" + clip(shortOp(d.op), 40) + "\n" + (where.empty() ? d.location : where);
  std::string style = "filled";
  std::string fill = d.role == "failing" ? "#f6c9c9" : d.spec ? "#dde7f7" : d.role == "related" ? "#fbefc8" : "#dcefdc";
  std::string extra = d.role == "failing" ? ", penwidth=2, color=\"#b00000\"" : "";
  return "    " + d.id + " [label=\"" + dotEscape(label) + "\", style=\"" + style + "\", fillcolor=\"" + fill + "\"" +
         extra + "];\n";
}

}  // namespace

Neighbourhood failureNeighbourhood(const Failure& f, const LGraph& spec, const LGraph& impl) {
  Builder b(spec, impl);
  // Spec: the failing operator, what it reads (two levels up) and its readers.
  int failing = spec.resolve(f.node);
  b.add(true, failing, "failing");
  std::vector<int> level = {failing};
  for (int depth = 0; depth < 2; ++depth) {
    std::vector<int> next;
    for (int n : level)
      for (int o : spec.node(n).operands)
        if (b.add(true, o, "input") >= 0) next.push_back(spec.resolve(o));
    level = next;
  }
  size_t users = 0;
  if (static_cast<size_t>(failing) < spec.users.size())
    for (int u : spec.users[failing])
      if (users++ < 4) b.add(true, u, "user");
  for (auto& in : f.inputRelations)
    if (auto id = spec.find(in.tensor)) b.add(true, *id, "input");
  // Implementation: the operators explored for it, closest first.
  for (int d : f.nearbyImpl) b.add(false, d, "impl");
  // The relations of its inputs, and the implementation tensors they name.
  static const std::regex implName(R"(\bD\d+\.[A-Za-z_][A-Za-z0-9_]*)");
  struct Rel {
    std::string id;
    int specNode;
    std::string label;
    std::vector<int> leaves;
    bool none;
  };
  std::vector<Rel> rels;
  for (auto& in : f.inputRelations) {
    auto id = spec.find(in.tensor);
    if (!id) continue;
    Rel r{"r" + std::to_string(rels.size()), b.find(true, *id), in.tensor + " =", {}, in.exprs.empty()};
    if (r.none) r.label = in.tensor + ": no relation known";
    for (size_t k = 0; k < in.exprs.size(); ++k) {
      std::string e = formatTerm(in.exprs[k]);
      if (k < kMaxExprsShown) r.label += "\n" + clip(e, 90);
      for (auto it = std::sregex_iterator(e.begin(), e.end(), implName); it != std::sregex_iterator(); ++it) {
        if (r.leaves.size() >= kMaxLeavesPerRelation) break;
        auto leaf = impl.find(it->str());
        if (!leaf) continue;
        int idx = b.add(false, *leaf, "related");
        if (idx >= 0 && std::find(r.leaves.begin(), r.leaves.end(), idx) == r.leaves.end()) r.leaves.push_back(idx);
      }
    }
    if (in.exprs.size() > kMaxExprsShown) r.label += "\n(" + std::to_string(in.exprs.size() - kMaxExprsShown) + " more)";
    rels.push_back(r);
  }

  Neighbourhood out;
  out.nodes = b.nodes;
  std::string dot = "digraph neighbourhood {\n  rankdir=TB;\n  node [shape=box, fontname=\"Helvetica\", fontsize=10];\n"
                    "  edge [fontname=\"Helvetica\", fontsize=9];\n";
  dot += "  subgraph cluster_spec {\n    label=\"spec\";\n    color=\"#5577aa\";\n";
  for (auto& d : out.nodes)
    if (d.spec) dot += nodeStatement(d);
  dot += "  }\n";
  std::map<int, std::vector<const DrawnNode*>> byRank;
  for (auto& d : out.nodes)
    if (!d.spec) byRank[d.rank].push_back(&d);
  for (auto& [rank, list] : byRank) {
    dot += "  subgraph cluster_rank" + std::to_string(rank) + " {\n    label=\"implementation rank " +
           std::to_string(rank) + "\";\n    color=\"#55aa77\";\n";
    for (auto* d : list) dot += nodeStatement(*d);
    dot += "  }\n";
  }
  // Dataflow among the drawn nodes.
  for (auto& d : out.nodes) {
    const LGraph& lg = d.spec ? spec : impl;
    for (int o : lg.node(d.node).operands)
      if (int src = b.find(d.spec, o); src >= 0) dot += "  " + out.nodes[src].id + " -> " + d.id + ";\n";
  }
  for (auto& r : rels) {
    dot += "  " + r.id + " [shape=note, style=filled, fillcolor=\"" + std::string(r.none ? "#f6c9c9" : "#f3f3f3") +
           "\", label=\"" + dotEscape(r.label) + "\"];\n";
    if (r.specNode >= 0)
      dot += "  " + out.nodes[r.specNode].id + " -> " + r.id + " [style=dashed, color=\"#3366cc\", arrowhead=none];\n";
    for (int leaf : r.leaves)
      dot += "  " + r.id + " -> " + out.nodes[leaf].id + " [style=dashed, color=\"#3366cc\"];\n";
  }
  dot += "}\n";
  out.dot = std::move(dot);
  return out;
}

}  // namespace tangle
