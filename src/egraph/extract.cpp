// Extraction of smallest terms. Costs are computed with Knuth's generalization
// of Dijkstra's algorithm: a class is final when popped with its least cost;
// an e-node becomes a candidate once all its children are final. This is exact
// for tree size (a node costs more than each child), needs one pass, and
// terminates on cyclic e-graphs (a node on a cycle just never completes
// unless its children get a cost through another path).
#include "egraph/extract.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <memory>
#include <queue>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "support/stamp_marks.h"

namespace tangle::eg {

namespace {
constexpr size_t kNone = std::numeric_limits<size_t>::max();
constexpr size_t kCap = kNone / 4;  // tree sizes of DAG-shaped terms can be exponential: saturate

size_t addCost(size_t a, size_t b) { return std::min(kCap, a + b); }
}  // namespace

Extractor::Extractor(const EGraph& g, Filter allowed) : g_(g), allowed_(std::move(allowed)) {
  compute(g.classIds());
}

Extractor::Extractor(const EGraph& g, Filter allowed, const std::vector<Id>& classes)
    : g_(g), allowed_(std::move(allowed)) {
  compute(classes);
}

void Extractor::compute(const std::vector<Id>& classes) {
  const EGraph& g = g_;
  size_t n = g.numIds();
  cost_.assign(n, kNone);
  bestNode_.assign(n, -1);

  // Candidate nodes: class, index in class, pending child slots, cost so far.
  struct Cand {
    Id cls;
    int index;
    uint32_t pending;
    size_t sum;
  };
  std::vector<Cand> cands;
  std::vector<uint32_t> userCount(n + 1, 0);
  using Entry = std::tuple<size_t, Id, int>;  // cost, class, node index: ties break by id then index
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;

  for (Id c : classes) {
    const auto& nodes = g.eclass(c).nodes;
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (allowed_ && !allowed_(g, nodes[i])) continue;
      cands.push_back({c, static_cast<int>(i), static_cast<uint32_t>(nodes[i].children.size()), 1});
      if (nodes[i].children.empty()) queue.emplace(1, c, static_cast<int>(i));
      for (Id ch : nodes[i].children) ++userCount[g.find(ch)];
    }
  }
  // users of class c (one entry per child slot): CSR arrays.
  std::vector<uint32_t> start(n + 1, 0);
  for (size_t c = 0; c < n; ++c) start[c + 1] = start[c] + userCount[c];
  std::vector<uint32_t> users(start[n]);
  std::vector<uint32_t> fill(start.begin(), start.end() - 1);
  for (uint32_t k = 0; k < cands.size(); ++k)
    for (Id ch : g.eclass(cands[k].cls).nodes[cands[k].index].children) users[fill[g.find(ch)]++] = k;

  while (!queue.empty()) {
    auto [cost, c, index] = queue.top();
    queue.pop();
    if (cost_[c] != kNone) continue;
    cost_[c] = cost;
    bestNode_[c] = index;
    for (uint32_t u = start[c]; u < start[c + 1]; ++u) {
      Cand& cand = cands[users[u]];
      cand.sum = addCost(cand.sum, cost);
      if (--cand.pending == 0 && cost_[cand.cls] == kNone) queue.emplace(cand.sum, cand.cls, cand.index);
    }
  }
}

std::optional<size_t> Extractor::cost(Id eclass) const {
  size_t c = cost_.at(g_.find(eclass));
  if (c == kNone) return std::nullopt;
  return c;
}

std::optional<Term> Extractor::best(Id eclass) const {
  Id c = g_.find(eclass);
  if (cost_.at(c) == kNone) return std::nullopt;
  return build(c);
}

namespace {

// Which classes a TermBuilder has put in its term (seen: stamped), and where (index). This
// thread's, reused by every builder (a hash map per term built was most of building the terms of
// a 256-rank plan's relations, hundreds per operator).
struct BuiltMarks {
  StampMarks seen;
  std::vector<uint32_t> index;
  bool inUse = false;
};

// Appends the best term of classes to a Term, sharing the subterm of a class
// that occurs more than once.
struct TermBuilder {
  TermBuilder(const EGraph& graph, const std::vector<int>& best, const std::unordered_map<Id, int>* p)
      : g(graph), bestNode(best), picks(p) {
    thread_local BuiltMarks shared;
    // A builder inside another (none today) gets marks of its own.
    if (shared.inUse) own = std::make_unique<BuiltMarks>();
    marks = own ? own.get() : &shared;
    marks->inUse = true;
    stamp = marks->seen.next(g.numIds());
    if (marks->index.size() < g.numIds()) marks->index.resize(g.numIds(), 0);
  }
  ~TermBuilder() { marks->inUse = false; }
  TermBuilder(const TermBuilder&) = delete;
  TermBuilder& operator=(const TermBuilder&) = delete;

  const EGraph& g;
  const std::vector<int>& bestNode;
  const std::unordered_map<Id, int>* picks;  // overrides of bestNode, or null
  Term term;
  std::unique_ptr<BuiltMarks> own;
  BuiltMarks* marks = nullptr;
  uint32_t stamp = 0;
  std::vector<std::pair<Id, bool>> stack;

  int best(Id cls) const {
    if (picks)
      if (auto it = picks->find(cls); it != picks->end()) return it->second;
    return bestNode[cls];
  }
  bool done(Id cls) const { return marks->seen.at[cls] == stamp; }

  uint32_t add(Id c) {
    c = g.find(c);
    if (done(c)) return marks->index[c];
    // Iterative post-order: best-node choices form a DAG (each best node's
    // children were final before its class), so this terminates.
    stack.assign(1, {c, false});
    while (!stack.empty()) {
      auto [cls, expanded] = stack.back();
      stack.pop_back();
      if (done(cls)) continue;
      const ENode& n = g.eclass(cls).nodes[best(cls)];
      if (!expanded) {
        stack.push_back({cls, true});
        for (auto it = n.children.rbegin(); it != n.children.rend(); ++it)
          if (!done(g.find(*it))) stack.push_back({g.find(*it), false});
        continue;
      }
      uint32_t at = push(n);
      marks->seen.at[cls] = stamp;
      marks->index[cls] = at;
    }
    return marks->index[c];
  }

  uint32_t push(const ENode& n) {
    Term::Node t{n.op, n.attrs, {}};
    t.children.reserve(n.children.size());
    for (Id ch : n.children) {
      Id k = g.find(ch);
      if (!done(k)) throw std::logic_error("extract: a child built after its parent");
      t.children.push_back(marks->index[k]);
    }
    term.nodes.push_back(std::move(t));
    return static_cast<uint32_t>(term.nodes.size() - 1);
  }
};

}  // namespace

Term Extractor::build(Id eclass) const {
  TermBuilder b(g_, bestNode_, nullptr);
  b.add(eclass);
  return std::move(b.term);
}

Term Extractor::buildFrom(const ENode& root, const std::unordered_map<Id, int>* picks) const {
  TermBuilder b(g_, bestNode_, picks);
  for (Id ch : root.children) b.add(ch);
  b.push(root);
  return std::move(b.term);
}

std::vector<Term> Extractor::alternatives(Id eclass, size_t limit) const {
  return alternativesOf(eclass, limit, allowed_, nullptr);
}

std::vector<Term> Extractor::alternatives(Id eclass, size_t limit, const Filter& rootAllowed,
                                          const std::unordered_map<Id, int>& picks) const {
  return alternativesOf(eclass, limit, rootAllowed, &picks);
}

std::vector<Term> Extractor::alternativesOf(Id eclass, size_t limit, const Filter& rootAllowed,
                                            const std::unordered_map<Id, int>* picks) const {
  Id c = g_.find(eclass);
  const auto& nodes = g_.eclass(c).nodes;
  std::vector<std::pair<size_t, size_t>> ranked;  // cost, node index
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (rootAllowed && !rootAllowed(g_, nodes[i])) continue;
    // A node that reads its own class (reshape(x) = x, slice(x) of a class
    // equal to x) only rewrites the class in terms of itself: no alternative.
    if (std::any_of(nodes[i].children.begin(), nodes[i].children.end(), [&](Id ch) { return g_.find(ch) == c; }))
      continue;
    size_t sum = 1;
    for (Id ch : nodes[i].children) {
      size_t cc = cost_[g_.find(ch)];
      if (cc == kNone) {
        sum = kNone;
        break;
      }
      sum = addCost(sum, cc);
    }
    if (sum != kNone) ranked.emplace_back(sum, i);
  }
  std::sort(ranked.begin(), ranked.end());
  std::vector<Term> out;
  for (const auto& [cost, i] : ranked) {
    if (out.size() >= limit) break;
    Term t = buildFrom(nodes[i], picks);
    if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(std::move(t));
  }
  return out;
}

std::vector<Id> Extractor::cone(Id eclass, const Filter& rootAllowed) const {
  const Id c = g_.find(eclass);
  std::vector<Id> out{c};
  std::unordered_set<Id> seen{c};
  std::vector<Id> stack;
  for (const ENode& n : g_.eclass(c).nodes) {
    if (rootAllowed && !rootAllowed(g_, n)) continue;
    for (Id ch : n.children) stack.push_back(g_.find(ch));
  }
  while (!stack.empty()) {
    const Id x = stack.back();
    stack.pop_back();
    if (cost_[x] == kNone || !seen.insert(x).second) continue;
    out.push_back(x);
    for (Id ch : g_.eclass(x).nodes[static_cast<size_t>(bestNode_[x])].children) stack.push_back(g_.find(ch));
  }
  return out;
}

// ---- Term -----------------------------------------------------------------

bool Term::operator==(const Term& o) const {
  if (nodes.empty() || o.nodes.empty()) return nodes.empty() && o.nodes.empty();
  const Node &r = nodes.back(), &q = o.nodes.back();
  if (r.op != q.op || r.attrs != q.attrs || r.children.size() != q.children.size()) return false;
  // The same node list is the same tree (the usual case when a search meets a term again).
  if (nodes.size() == o.nodes.size()) {
    bool same = true;
    for (size_t i = 0; i < nodes.size() && same; ++i)
      same = nodes[i].op == o.nodes[i].op && nodes[i].attrs == o.nodes[i].attrs &&
             nodes[i].children == o.nodes[i].children;
    if (same) return true;
  }
  // Structural (tree) equality; shared subterms are compared once.
  std::vector<std::pair<uint32_t, uint32_t>> stack{{root(), o.root()}};
  std::unordered_map<uint64_t, bool> seen;
  while (!stack.empty()) {
    auto [a, b] = stack.back();
    stack.pop_back();
    if (!seen.emplace((uint64_t{a} << 32) | b, true).second) continue;
    const Node& x = nodes[a];
    const Node& y = o.nodes[b];
    if (x.op != y.op || x.attrs != y.attrs || x.children.size() != y.children.size()) return false;
    for (size_t k = 0; k < x.children.size(); ++k) stack.push_back({x.children[k], y.children[k]});
  }
  return true;
}

std::string Term::toSExpr() const {
  if (nodes.empty()) return "()";
  std::string out;
  std::function<void(uint32_t)> print = [&](uint32_t i) {
    const Node& n = nodes[i];
    out += "(" + symbolName(n.op);
    if (n.attrs != kNoAttrs) out += "[" + toString(attrs(n.attrs)) + "]";
    for (uint32_t c : n.children) {
      out += " ";
      print(c);
    }
    out += ")";
  };
  print(root());
  return out;
}

Id addTerm(EGraph& g, const Term& t) {
  if (t.nodes.empty()) throw std::invalid_argument("addTerm: empty term");
  std::vector<Id> ids;
  ids.reserve(t.nodes.size());
  for (const Term::Node& n : t.nodes) {
    ENode e{n.op, n.attrs, {}};
    e.children.reserve(n.children.size());
    for (uint32_t c : n.children) {
      if (c >= ids.size()) throw std::invalid_argument("addTerm: child refers to a later entry");
      e.children.push_back(ids[c]);
    }
    ids.push_back(g.add(std::move(e)));
  }
  return ids.back();
}

}  // namespace tangle::eg
