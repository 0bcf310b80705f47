// Concluding one operator (Listing 1, after the search): its clean
// expressions become its relations in R; a graph output must moreover be
// rebuilt from the implementation's outputs (R_o); with no clean expression
// the operator is the violation (or, past a limit, the verdict is
// inconclusive), reported with its inputs' relations and the implementation
// nodes it was compared with.
#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <unordered_map>
#include <unordered_set>

#include "infer/leaf_names.h"
#include "infer/operator_search.h"
#include "infer/rank_classes.h"

namespace tangle {

// Clean expressions that use rank r's tensor wherever its class has one and
// another rank's only where it has none: a kv head replicated on ranks 0 and 1
// but stored with rank 2's as concat(D0.k, D2.k) = concat(D1.k, D3.k) keeps the
// form rank 1 reads (its D1.k) after D0.k = D1.k merged. Every tensor leaf
// costs 1, so this changes no class's cost, only the leaf the classes holding
// rank r's tensor beside another rank's pick: the clean extractor's costs serve.
static std::vector<eg::Term> preferringRank(const eg::EGraph& g, const eg::Extractor& clean, const RankClasses& byRank,
                                            eg::Id root, int32_t r, size_t limit) {
  auto allowedLeaf = [&](const eg::ENode& n) {
    return n.children.empty() && ops::isCleanNode(n) && (n.op != ops::syms().tensor || leaves::isRankLeaf(n, r));
  };
  std::unordered_map<eg::Id, int> picks;
  for (eg::Id c : byRank.shared(r)) {
    const auto& nodes = g.eclass(c).nodes;
    for (size_t i = 0; i < nodes.size(); ++i)
      if (allowedLeaf(nodes[i])) {
        picks.emplace(c, static_cast<int>(i));
        break;
      }
  }
  eg::Id rc = g.find(root);
  bool rootHasMine = std::any_of(g.eclass(rc).nodes.begin(), g.eclass(rc).nodes.end(), [&](const eg::ENode& n) {
    return n.op == ops::syms().tensor && leaves::isRankLeaf(n, r);
  });
  auto rootAllowed = [&](const eg::EGraph&, const eg::ENode& n) {
    if (!ops::isCleanNode(n)) return false;
    return n.op != ops::syms().tensor || leaves::isRankLeaf(n, r) || !rootHasMine;
  };
  return clean.alternatives(root, limit, rootAllowed, picks);
}

namespace {

// Classes of a relation's terms holding several ranks' copies of one value
// (a tensor replicated over a tensor-parallel group, under a concat over the
// data-parallel replicas and microbatches) give one term per rank in
// preferringRank: each differs from the default in its own rank's piece,
// 57 relations of 64 pieces per activation at 256 ranks. Taking in every
// such class the copy of the same POSITION (its j-th rank, ascending)
// gives one term per position that uses each of its ranks' own copies
// everywhere, as preferringRank does for each: concat(D1.x, D33.x, ...).
// A rank whose positions differ between classes keeps its own term.
class RankPositions {
 public:
  RankPositions(const eg::EGraph& g, const eg::Extractor& clean, eg::Id root, size_t ranks)
      : position_(ranks, kNone) {
    const eg::Symbol tensor = ops::syms().tensor;
    auto allowed = [](const eg::EGraph&, const eg::ENode& n) { return ops::isCleanNode(n); };
    for (eg::Id c : clean.cone(root, allowed)) {
      std::vector<std::pair<int32_t, int>> copies;  // (rank, node index), first clean leaf per rank
      const auto& nodes = g.eclass(c).nodes;
      for (size_t i = 0; i < nodes.size(); ++i) {
        const eg::ENode& n = nodes[i];
        if (n.op != tensor || !n.children.empty() || !ops::isCleanNode(n)) continue;
        auto owner = ops::tensorOwner(n);
        if (!owner || owner->isSpec() || owner->rank < 0 || owner->rank >= static_cast<int32_t>(ranks)) continue;
        if (std::none_of(copies.begin(), copies.end(), [&](const auto& p) { return p.first == owner->rank; }))
          copies.emplace_back(owner->rank, static_cast<int>(i));
      }
      if (copies.size() < 2) continue;
      std::sort(copies.begin(), copies.end());
      for (size_t j = 0; j < copies.size(); ++j) {
        size_t& p = position_[static_cast<size_t>(copies[j].first)];
        p = p == kNone || p == j ? j : kMixed;
      }
      classes_.emplace_back(c, std::move(copies));
    }
  }
  // Rank r's position in every class of the cone holding its copy; nullopt
  // when it differs between them or r has a copy in none.
  std::optional<size_t> of(int32_t r) const {
    size_t p = position_[static_cast<size_t>(r)];
    if (p == kNone || p == kMixed) return std::nullopt;
    return p;
  }
  // Rank r holds a copy in no class of the cone: the default terms are its.
  bool absent(int32_t r) const { return position_[static_cast<size_t>(r)] == kNone; }
  // The terms taking, in every class of the cone, the copy of its j-th rank.
  std::vector<eg::Term> terms(const eg::EGraph& g, const eg::Extractor& clean, eg::Id root, size_t j,
                              size_t limit) const {
    std::unordered_map<eg::Id, int> picks;
    std::optional<int32_t> rootRank;
    const eg::Id rc = g.find(root);
    for (const auto& [c, copies] : classes_) {
      if (j >= copies.size()) continue;
      picks.emplace(c, copies[j].second);
      if (c == rc) rootRank = copies[j].first;
    }
    auto rootAllowed = [&](const eg::EGraph&, const eg::ENode& n) {
      if (!ops::isCleanNode(n)) return false;
      return n.op != ops::syms().tensor || !rootRank || leaves::isRankLeaf(n, *rootRank);
    };
    return clean.alternatives(root, limit, rootAllowed, picks);
  }

 private:
  static constexpr size_t kNone = SIZE_MAX, kMixed = SIZE_MAX - 1;
  std::vector<size_t> position_;  // per rank
  std::vector<std::pair<eg::Id, std::vector<std::pair<int32_t, int>>>> classes_;
};

// A term built only of layout operators (slice, concat, transpose, permute,
// reshape) over implementation tensors: its value is some arrangement of
// those tensors' elements. Its leaves, sorted and without repeats.
std::optional<std::vector<std::pair<eg::Symbol, eg::AttrsId>>> layoutLeaves(const eg::Term& t) {
  const ops::Syms& y = ops::syms();
  std::vector<std::pair<eg::Symbol, eg::AttrsId>> leaves;
  for (const auto& n : t.nodes) {
    if (n.op == y.tensor) leaves.emplace_back(n.op, n.attrs);
    else if (n.op != y.slice && n.op != y.concat && n.op != y.transpose && n.op != y.permute && n.op != y.reshape)
      return std::nullopt;
  }
  std::sort(leaves.begin(), leaves.end());
  leaves.erase(std::unique(leaves.begin(), leaves.end()), leaves.end());
  return leaves;
}

// Drops a layout-only term over the same tensors as a layout-only term kept
// before it (smaller or of another rank's choice): both are arrangements of
// the same elements equal to one value, so the later one is that value
// rearranged once more (S = reshape(concat[0](D_i.x)) next to S =
// concat[1](D_i.x)). Seeding the next operator with every such arrangement
// makes its e-graph distribute each one over the ranks again: one copy of
// every permuted and reshaped per-rank piece per form, growing with the
// degree. The lemmas rebuild the arrangement a spec operator reads from the
// form kept. Dropping a relation is sound (fewer known equalities).
void dropRearrangedRepeats(std::vector<eg::Term>& terms) {
  std::vector<std::vector<std::pair<eg::Symbol, eg::AttrsId>>> kept;
  std::vector<eg::Term> out;
  for (eg::Term& t : terms) {
    auto leaves = layoutLeaves(t);
    if (leaves && std::find(kept.begin(), kept.end(), *leaves) != kept.end()) continue;
    if (leaves) kept.push_back(std::move(*leaves));
    out.push_back(std::move(t));
  }
  terms = std::move(out);
}

// Appends terms to a list, each once (Term::operator==, structural): by a
// structural hash, comparing only terms of equal hash. A linear find per term
// was quadratic in the number kept (one per rank at 256 ranks).
class DistinctTerms {
 public:
  explicit DistinctTerms(std::vector<eg::Term>& out) : out_(out) {
    for (size_t i = 0; i < out_.size(); ++i) byHash_.emplace(hashOf(out_[i]), i);
  }
  void add(eg::Term t) {
    const uint64_t h = hashOf(t);
    auto [from, to] = byHash_.equal_range(h);
    for (auto it = from; it != to; ++it)
      if (sameNodes(out_[it->second], t) || out_[it->second] == t) return;
    byHash_.emplace(h, out_.size());
    out_.push_back(std::move(t));
  }

 private:
  // The same node array: the same tree (a cheap sufficient test; copies of
  // one extraction usually are laid out alike).
  static bool sameNodes(const eg::Term& a, const eg::Term& b) {
    if (a.nodes.size() != b.nodes.size()) return false;
    for (size_t i = 0; i < a.nodes.size(); ++i) {
      const eg::Term::Node &x = a.nodes[i], &y = b.nodes[i];
      if (x.op != y.op || x.attrs != y.attrs || x.children != y.children) return false;
    }
    return true;
  }
  // Of the tree the root unfolds to (shared subterms hash as their copies would).
  static uint64_t hashOf(const eg::Term& t) {
    if (t.nodes.empty()) return 0;
    std::vector<uint64_t> memo(t.nodes.size());
    std::vector<char> done(t.nodes.size(), 0);
    auto node = [&](auto& self, uint32_t i) -> uint64_t {
      if (done[i]) return memo[i];
      const eg::Term::Node& n = t.nodes[i];
      uint64_t h = (uint64_t{n.op} << 32) ^ n.attrs;
      h ^= n.children.size() * 0x9e3779b97f4a7c15ULL;
      for (uint32_t c : n.children) h = (h ^ self(self, c)) * 0x100000001b3ULL + 0x7f4a7c15;
      done[i] = 1;
      return memo[i] = h;
    };
    return node(node, t.root());
  }
  std::vector<eg::Term>& out_;
  std::unordered_multimap<uint64_t, size_t> byHash_;
};

}  // namespace

// The clean expressions kept for a class: the smallest per top-level e-node,
// plus, for each rank, the smallest one over that rank's tensors alone, or,
// where there is none, one using its own copies wherever they appear (per
// position in the groups of copies: RankPositions), so a replicated value
// keeps a relation on every rank (each rank's own chain of operators is
// explored from it).
namespace {

// The classes a clean node of root's class reaches through clean nodes: every
// use of the clean extractor below reads only these (a class's cost depends
// only on the classes under it), and an operator's e-graph holds many more.
std::vector<eg::Id> cleanCone(const eg::EGraph& g, eg::Id root) {
  std::vector<char> seen(g.numIds(), 0);
  std::vector<eg::Id> out, stack{g.find(root)};
  seen[stack.back()] = 1;
  while (!stack.empty()) {
    eg::Id c = stack.back();
    stack.pop_back();
    out.push_back(c);
    for (const eg::ENode& n : g.eclass(c).nodes) {
      if (!ops::isCleanNode(n)) continue;
      for (eg::Id ch : n.children) {
        eg::Id k = g.find(ch);
        if (!seen[k]) {
          seen[k] = 1;
          stack.push_back(k);
        }
      }
    }
  }
  std::sort(out.begin(), out.end());  // the order classIds gives
  return out;
}

}  // namespace

std::vector<eg::Term> cleanRelations(const InferState& st, const eg::EGraph& g, eg::Id root) {
  eg::Extractor ex(
      g, [](const eg::EGraph&, const eg::ENode& n) { return ops::isCleanNode(n); }, cleanCone(g, root));
  std::vector<eg::Term> out = ex.alternatives(root, st.opts.maxRelationsPerTensor);
  if (out.empty() || st.impl.graphs.size() < 2) return out;
  const RankClasses byRank(g, st.impl.graphs.size());
  DistinctTerms keep(out);
  std::optional<std::vector<eg::Term>> anyRank;  // the clean extractor's, shared by unshared ranks
  std::optional<std::vector<eg::Term>> noTensor;  // a rank without tensors here: its terms have none, alike for all
  std::optional<RankPositions> positions;
  std::vector<char> byPosition;  // positions whose terms are kept
  for (size_t k = 0; k < st.impl.graphs.size(); ++k) {
    const auto r = static_cast<int32_t>(k);
    if (!byRank.present(r) && noTensor) continue;  // the same terms again
    std::vector<eg::Term> terms;
    if (byRank.hasPure(root, r)) {
      eg::Extractor mine(
          g,
          [&](const eg::EGraph&, const eg::ENode& n) {
            if (!ops::isCleanNode(n)) return false;
            return n.op != ops::syms().tensor || leaves::isRankLeaf(n, r);
          },
          byRank.pure(r));
      terms = mine.alternatives(root, st.opts.maxRelationsPerRank);
    }
    if (!byRank.present(r)) noTensor = terms;
    else if (terms.empty() && !byRank.shared(r).empty()) {
      if (!positions) positions.emplace(g, ex, root, st.impl.graphs.size());
      if (positions->absent(r)) {
        if (!anyRank) anyRank = ex.alternatives(root, st.opts.maxRelationsPerRank);
        terms = *anyRank;
      } else if (auto j = positions->of(r)) {
        if (*j < byPosition.size() && byPosition[*j]) continue;  // kept for an earlier rank of position j
        if (*j >= byPosition.size()) byPosition.resize(*j + 1);
        byPosition[*j] = true;
        terms = positions->terms(g, ex, root, *j, st.opts.maxRelationsPerRank);
      } else {
        terms = preferringRank(g, ex, byRank, root, r, st.opts.maxRelationsPerRank);
      }
    } else if (terms.empty()) {
      // No class holds rank r's tensor beside another rank's: the clean terms are rank r's choice.
      if (!anyRank) anyRank = ex.alternatives(root, st.opts.maxRelationsPerRank);
      terms = *anyRank;
    }
    for (eg::Term& t : terms) keep.add(std::move(t));
  }
  dropRearrangedRepeats(out);
  return out;
}

TensorRelations relationsOf(const InferState& st, int s) {
  TensorRelations tr;
  tr.node = s;
  tr.tensor = st.spec.nodes[s].name;
  st.noteSpecRead(s);
  tr.exprs = st.rels[s];
  tr.deferred = st.deferredDepth[s] > 0;
  if (tr.exprs.empty() && !st.inputRels[s].empty()) {
    // Input relations are shown through a scratch e-graph so they print like the others.
    eg::EGraph scratch(ops::inferData, st.symbols);
    for (const RelExpr* e : st.inputRels[s]) {
      eg::Id id = addRelExpr(scratch, *e, st.spec, st.impl);
      scratch.rebuild();
      eg::Extractor ex(scratch);
      if (auto t = ex.best(id)) tr.exprs.push_back(*t);
    }
  }
  return tr;
}

Failure failureFor(const InferState& st, const SpecOp& op, const eg::EGraph& g) {
  Failure f;
  f.node = op.reported;
  f.tensor = op.node;
  f.enodes = g.numNodes();
  for (int s : op.reads) f.inputRelations.push_back(relationsOf(st, st.spec.resolve(s)));
  return f;
}

namespace {

bool isImplOutputLeaf(const InferState& st, const eg::ENode& n) {
  auto owner = ops::tensorOwner(n);
  if (!owner || owner->isSpec()) return false;
  auto id = leaves::leafNode(st.spec, st.impl, n.op, n.attrs);
  return id && st.impl.nodes[*id].isOutput;
}

// Developer aid: TANGLE_DUMP_EGRAPH=<spec tensor> prints that operator's e-graph.
void dumpIfAsked(const InferState& st, const OperatorSearch& s) {
  const char* dump = std::getenv("TANGLE_DUMP_EGRAPH");
  if (!dump || st.spec.nodes[s.op.node].name != leaves::specName(dump)) return;
  std::fprintf(stderr, "e-graph of %s (root e%u):\n", dump, s.g.find(s.root));
  for (eg::Id c : s.g.classIds()) {
    const auto* t = s.g.data(c).tensor();
    std::fprintf(stderr, "  e%u %s:", c, t ? toString(*t).c_str() : "");
    for (const auto& n : s.g.eclass(c).nodes) std::fprintf(stderr, " %s", eg::toString(n).c_str());
    std::fprintf(stderr, "\n");
  }
}

void recordStats(const InferState& st, const OperatorSearch& s, InferStats& stats) {
  stats.enodesMax = std::max(stats.enodesMax, s.g.numNodes());
  stats.enodesTotal += s.g.numNodes();
  stats.exploredImplNodes += s.explored.size();
  for (auto& c : s.g.conflicts()) stats.conflicts.push_back(st.spec.nodes[s.op.node].name + ": " + c);
  for (auto [a, b] : s.g.mergedSizes()) stats.mergedSizes.push_back({a, b, s.op.node});
}

// No clean expression (nor a carried one): the violation, or inconclusive past a limit.
Failure noCleanExpression(const InferState& st, const OperatorSearch& s, const DeferredChain& chain) {
  Failure f = failureFor(st, s.op, s.g);
  blameChainOrigin(st, s.op, chain, f);
  f.limitReached = s.limitHit;
  f.nearbyImpl = s.explored;
  f.reason = s.limitHit ? "a search limit was reached before a clean expression was found"
                        : "no clean expression over the implementation's tensors computes this operator's output";
  return f;
}

eg::Extractor implOutputExtractor(const InferState& st, const OperatorSearch& s) {
  return eg::Extractor(s.g, [&st](const eg::EGraph&, const eg::ENode& n) {
    return ops::isCleanNode(n) && (!n.isLeaf() || n.op != ops::syms().tensor || isImplOutputLeaf(st, n));
  });
}

// A graph output must be rebuilt from the implementation's outputs (R_o maps
// O(G_s) to O(G_d)), not from values it computed and dropped.
std::optional<Failure> relateToImplOutputs(InferState& st, const OperatorSearch& s) {
  st.outRels[s.op.node] = implOutputExtractor(st, s).alternatives(s.root, st.opts.maxRelationsPerTensor);
  if (!st.outRels[s.op.node].empty()) return std::nullopt;
  Failure f = failureFor(st, s.op, s.g);
  f.nearbyImpl = s.explored;
  f.reason = "clean expressions exist only over implementation tensors that its graphs do not return: " +
             formatTerm(s.clean.front());
  return f;
}

}  // namespace

bool hasImplOutputExpression(const InferState& st, const OperatorSearch& s) {
  return !implOutputExtractor(st, s).alternatives(s.root, 1).empty();
}

std::optional<Failure> conclude(InferState& st, OperatorSearch& s, InferStats& stats) {
  dumpIfAsked(st, s);
  recordStats(st, s, stats);
  DeferredChain chain = deferredChain(st, s.op);
  if (s.clean.empty() && carryDeferred(st, s, chain)) return std::nullopt;
  if (s.clean.empty()) return noCleanExpression(st, s, chain);
  if (st.strictOutputs && st.isTarget[s.op.node])
    if (auto f = relateToImplOutputs(st, s)) return f;
  recordImplEqualities(st, s.g);
  st.rels[s.op.node] = std::move(s.clean);
  return std::nullopt;
}

}  // namespace tangle
