#include "synth/frontier.h"

#include <algorithm>
#include <deque>
#include <fmt/format.h>

namespace tangle::synth {

int classOf(const Classes& c, int node) {
  auto it = c.find(node);
  return it == c.end() ? node : it->second;
}

namespace {

std::set<int> classSet(const Expr& e, const Classes& classes) {
  std::set<int> leaves, out;
  leavesOf(e, leaves);
  for (int l : leaves) out.insert(classOf(classes, l));
  return out;
}

struct State {
  Expr side[2];
  std::vector<int> key;  // sorted side * 2^30 + node of every unfolding
  size_t unfoldings = 0;
};

}  // namespace

std::optional<Frontier> coarsestFrontier(const LGraph& impl, const Expr& lhs, const Expr& rhs, const Classes& classes,
                                         const FrontierLimits& limits) {
  std::deque<State> queue;
  std::set<std::vector<int>> seen;
  queue.push_back(State{{lhs, rhs}, {}, 0});
  seen.insert({});
  size_t states = 0;
  while (!queue.empty() && states++ < limits.maxStates) {
    State s = std::move(queue.front());
    queue.pop_front();
    std::set<int> sets[2] = {classSet(s.side[0], classes), classSet(s.side[1], classes)};
    if (sets[0] == sets[1]) return Frontier{s.side[0], s.side[1], s.unfoldings};
    if (s.unfoldings >= limits.maxUnfoldings) continue;
    for (int side = 0; side < 2; ++side) {
      std::set<int> leaves;
      leavesOf(s.side[side], leaves);
      for (int leaf : leaves) {
        if (sets[1 - side].count(classOf(classes, leaf))) continue;  // shared: frontier already
        auto def = definitionOf(impl, leaf);
        if (!def) continue;
        State next = s;
        next.side[side] = substitute(s.side[side], leaf, *def);
        next.key.push_back(side * (1 << 30) + leaf);
        std::sort(next.key.begin(), next.key.end());
        ++next.unfoldings;
        if (!seen.insert(next.key).second) continue;
        queue.push_back(std::move(next));
      }
    }
  }
  return std::nullopt;
}

namespace {

bool symbolic(const eg::Attr& a) {
  if (a.kind == eg::Attr::Kind::SymDim) return true;
  if (a.kind == eg::Attr::Kind::IntList)
    for (int64_t d : a.list)
      if (d < 0) return true;
  return false;
}

bool abstractable(const eg::Attr& a) { return a.kind == eg::Attr::Kind::Int || a.kind == eg::Attr::Kind::SymDim; }

struct Printer {
  const Classes& classes;
  bool generalize;
  std::map<int, std::string> vars;       // class -> ?vK
  std::map<std::string, int> leafOf;     // vK -> a leaf of the class
  std::map<int64_t, std::string> params;  // (generalized) attribute value -> ?pK, set while printing the lhs
  bool lhsDone = false;
  std::string why;

  std::string attr(const eg::Attr& a) {
    if (generalize && abstractable(a)) {
      auto it = params.find(a.i);
      if (it != params.end()) return it->second;
      if (!lhsDone) return params.emplace(a.i, fmt::format("?p{}", params.size())).first->second;
    }
    if (symbolic(a) && why.empty()) why = "the attribute " + a.toString() + " is a symbolic size";
    return a.toString();
  }

  std::string print(const Expr& e) {
    if (e.isLeaf()) {
      int c = classOf(classes, e.leaf);
      auto it = vars.find(c);
      if (it == vars.end()) {
        it = vars.emplace(c, fmt::format("?v{}", vars.size())).first;
        leafOf[it->second.substr(1)] = e.leaf;
      }
      return it->second;
    }
    std::string out = "(" + eg::symbolName(e.op);
    if (!e.attrs.empty()) {
      out += "[";
      for (size_t i = 0; i < e.attrs.size(); ++i) out += (i ? ", " : "") + attr(e.attrs[i]);
      out += "]";
    }
    for (const Expr& k : e.kids) out += " " + print(k);
    return out + ")";
  }
};

}  // namespace

std::optional<RuleText> ruleText(const Frontier& f, const Classes& classes, bool generalize, std::string* why) {
  Printer p{classes, generalize, {}, {}, {}, false, {}};
  RuleText r;
  r.lhs = p.print(f.lhs);
  p.lhsDone = true;
  r.rhs = p.print(f.rhs);
  if (!p.why.empty()) {
    if (why) *why = p.why;
    return std::nullopt;
  }
  if (f.lhs.isLeaf()) {
    if (why) *why = "the left side is a bare tensor (a lemma's left side must be an operator)";
    return std::nullopt;
  }
  r.leafOf = p.leafOf;
  return r;
}

std::vector<std::string> shapeConditions(const LGraph& impl, const RuleText& r) {
  std::map<int64_t, std::vector<std::string>> bySize;  // size -> "?vK:d" in variable order
  std::vector<std::pair<int, std::string>> ordered;
  for (auto& [v, leaf] : r.leafOf) ordered.push_back({std::stoi(v.substr(1)), v});
  std::sort(ordered.begin(), ordered.end());
  for (auto& [k, v] : ordered) {
    const TensorType* t = impl.node(r.leafOf.at(v)).data.tensor();
    if (!t) continue;
    for (size_t d = 0; d < t->shape.size(); ++d)
      if (t->shape[d] >= 0) bySize[t->shape[d]].push_back(fmt::format("?{}:{}", v, d));
  }
  std::vector<std::string> out;
  for (auto& [k, v] : ordered)  // ranks first: a lower-rank operand must not broadcast against a higher one
    if (const TensorType* t = impl.node(r.leafOf.at(v)).data.tensor())
      out.push_back(fmt::format("?{}:rank == {}", v, t->shape.size()));
  for (auto& [size, items] : bySize)
    for (size_t i = 1; i < items.size(); ++i) out.push_back(items[i - 1] + " == " + items[i]);
  return out;
}

}  // namespace tangle::synth
