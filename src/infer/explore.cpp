// The exploration of T_rel (Listing 3). T_rel is the set of implementation
// tensors related to the spec operator's inputs. An unexplored implementation
// node all of whose inputs are in T_rel is added to the e-graph (its leaf
// merged with its definition) and the e-graph is saturated again; the tensors
// its clean expressions use then join T_rel, until no node is left to add.
#include <algorithm>

#include "infer/operator_search.h"

namespace tangle {

bool inRel(const InferState& st, int d) {
  if (st.marks.isRelated(d)) return true;
  if (d < static_cast<int>(st.implZero.size()) && st.implZero[d]) return true;  // a known value: zeros
  const LNode& n = st.impl.nodes[d];
  if (n.isInput) return st.implConsts.count(d) > 0;
  // computed from nothing (arange, zeros, a constant backward seed): related to everything
  return n.operands.empty() || st.implInputFree[d];
}

void addToRel(InferState& st, OperatorSearch& s, int d) {
  d = st.impl.resolve(d);
  if (st.marks.isRelated(d)) return;
  st.marks.markRelated(d);
  s.frontier.push_back(d);
  s.related.push_back(d);
}

namespace {

bool readsAttention(const InferState& st, const SpecOp& op);

// An explored concat of the implementation (an output assembled from pieces,
// as torch's load-balanced ring returns its two chunks' rows): each piece is
// also the slice of the concat's leaf, so that expressions over the pieces
// can be written over the returned tensor (concrete sizes only). So too for
// a concat the lemmas put in an explored tensor's class (slicePiecesOfExplored):
// a ring's dk/dv accumulator of two key chunks apart in the sequence (chunks j
// and 2N-1-j) is the concat of the spec's two key blocks, and only its
// slices name each block. Only for an attention's search: elsewhere it let a
// graph output that returns blocks in the wrong order relate to the spec's by
// a permutation, which the project's tests hold to be violations
// (all_to_all_test's swapped combine, slice_backward_test's gradient in the
// wrong column). Returns whether the e-graph changed.
bool sliceConcatPieces(eg::EGraph& g, eg::Id leaf, eg::Id def) {
  const ops::Syms& y = ops::syms();
  std::vector<std::pair<int64_t, std::vector<eg::Id>>> concats;
  for (const eg::ENode& n : g.eclass(g.find(def)).nodes)
    if (n.op == y.concat && n.children.size() > 1) concats.emplace_back(eg::attrs(n.attrs)[0].i, n.children);
  bool changed = false;
  for (const auto& [d, pieces] : concats) {
    int64_t at = 0;
    for (eg::Id p : pieces) {
      const TensorType* t = g.data(g.find(p)).tensor();
      if (!t || d < 0 || d >= static_cast<int64_t>(t->rank()) || isSymbolic(t->shape[d])) break;
      int64_t len = t->shape[d];  // read before adding: adding may move the class data
      eg::ENode sl{y.slice, eg::internAttrs({eg::Attr::integer(d), eg::Attr::dim(at), eg::Attr::dim(at + len),
                                            eg::Attr::integer(1)}),
                   {leaf}};
      size_t before = g.numNodes();
      if (auto c = g.tryAdd(sl)) changed |= g.merge(*c, p) || g.numNodes() != before;
      at += len;
    }
  }
  return changed;
}

// Merges an explored impl node's leaf with its definition (and constants,
// and the definitions of index-table operands, down to their sources).
void exploreNode(InferState& st, eg::EGraph& g, int d, bool slicePieces = false) {
  st.marks.markExplored(d);
  eg::Id leaf = addLeaf(g, st.impl, d);
  if (auto def = addDefinition(g, st.impl, d)) {
    g.merge(leaf, *def);
    if (slicePieces && !st.impl.nodes[d].def.nodes.empty() &&
        st.impl.nodes[d].def.nodes.back().op == ops::syms().concat)
      sliceConcatPieces(g, leaf, *def);
  }
  for (int o : st.impl.nodes[d].operands) {
    if (auto c = st.implConsts.find(o); c != st.implConsts.end())
      g.merge(addLeaf(g, st.impl, o), declaredConstNode(g, st.impl.nodes[o], c->second));
    else if (st.implZeros.count(o))
      mergeZeroFacts(st, g, o);
    else if (st.implTable[o] && !st.marks.isExplored(o))
      exploreNode(st, g, o);  // an arange (or constant) cast and rearranged: its definition too
  }
}

bool isCleanDef(const LNode& n) {
  if (n.def.nodes.empty()) return false;
  eg::ENode root{n.def.nodes.back().op, 0, {}};
  const ops::OpDef* info = ops::find(root.op);
  return info && info->clean;
}

// Rearranging an implementation value, or taking it apart (split, getitem,
// broadcast): an operator whose output may be a rearrangement of related
// tensors.
bool rearranges(const LNode& n) {
  if (isCleanDef(n) || n.tuple()) return true;
  if (n.def.nodes.empty()) return false;
  eg::Symbol op = n.def.nodes.back().op;
  const ops::Syms& y = ops::syms();
  return op == y.getitem || op == y.split || op == y.expand;
}

bool allInputsRelated(const InferState& st, int u) {
  const auto& operands = st.impl.nodes[u].operands;
  return std::all_of(operands.begin(), operands.end(), [&](int o) { return inRel(st, o); });
}

// A concat with a related piece: a flat buffer that packs a related tensor
// with others (FSDP's gradient buffer before its reduce-scatter); slicing
// the related piece back out after the collective relates the result. Only
// followed from an input carried without a clean relation (deferred.cpp), or
// for a graph output not yet expressed over the implementation's outputs.
bool packsRelated(const InferState& st, int u) {
  const LNode& n = st.impl.nodes[u];
  if (n.def.nodes.empty() || n.def.nodes.back().op != ops::syms().concat) return false;
  return std::any_of(n.operands.begin(), n.operands.end(), [&](int o) { return inRel(st, o); });
}

// Adds a batch of implementation nodes to the e-graph.
void addBatch(InferState& st, OperatorSearch& s, const std::vector<int>& batch) {
  for (int u : batch) {
    exploreNode(st, s.g, u, readsAttention(st, s.op));
    s.explored.push_back(u);
    // A rearrangement of related tensors is itself related (observation (i));
    // a tuple is related so that its getitem users are explored with it.
    if (isCleanDef(st.impl.nodes[u]) || st.impl.nodes[u].tuple() || st.implZero[u]) addToRel(st, s, u);
  }
}

// Classes reachable from `root` through e-node children (by canonical id).
std::vector<char> descendants(const eg::EGraph& g, eg::Id root) {
  std::vector<char> seen(g.numIds(), 0);
  std::vector<eg::Id> stack{g.find(root)};
  seen[stack.back()] = 1;
  while (!stack.empty()) {
    eg::Id c = stack.back();
    stack.pop_back();
    for (const eg::ENode& n : g.eclass(c).nodes)
      for (eg::Id k : n.children) {
        eg::Id kc = g.find(k);
        if (!seen[kc]) {
          seen[kc] = 1;
          stack.push_back(kc);
        }
      }
  }
  return seen;
}

// After a round: tensors in the output's clean expressions become related
// (Listing 3). Beyond it, so does an explored tensor that any expression of
// the output uses (e.g. the range masks a vocab-parallel lookup is built
// from), or that the e-graph computes from such expressions (a micro-batch
// mean = the spec's partial sum / n). This affects completeness only.
void growRelated(InferState& st, OperatorSearch& s) {
  std::vector<int> used;
  for (auto& t : s.clean) collectImplTensors(st, t, used);
  for (int d : used) addToRel(st, s, d);
  std::vector<char> below = descendants(s.g, s.root);
  auto usesBelow = [&](eg::Id c) {
    for (const eg::ENode& n : s.g.eclass(c).nodes)
      for (eg::Id k : n.children)
        if (below[s.g.find(k)]) return true;
    return false;
  };
  for (int u : s.explored)
    if (!st.marks.isRelated(u)) {
      eg::Id c = s.g.find(addLeaf(s.g, st.impl, u));
      if (c < below.size() && (below[c] || usesBelow(c))) addToRel(st, s, u);
    }
  // With an input carried without a clean relation (deferred.cpp), each rank
  // may hold its value only up to further computation (a data-parallel
  // gradient scaled by 1/ranks, micro-batch gradients added up before the
  // reduction): an explored tensor computed from related ones only is
  // related too, so that those computations are followed to the reduction.
  // So with an attention: a ring merges partial attentions (online softmax)
  // whose pieces (sigmoid of log-sum-exp differences, a merge of two key
  // blocks that no spec chain names) are spec values only once merged whole.
  DeferredChain chain = deferredChain(st, s.op);
  if (chain.scaled || (chain.depth == 0 && !readsAttention(st, s.op))) return;
  std::vector<char> rel(s.g.numIds(), 0);
  for (int u : s.related) {
    eg::Id c = s.g.find(addLeaf(s.g, st.impl, u));
    if (c < rel.size()) rel[c] = 1;
  }
  for (bool grew = true; grew;) {
    grew = false;
    for (int u : s.explored) {
      if (st.marks.isRelated(u)) continue;
      eg::Id c = s.g.find(addLeaf(s.g, st.impl, u));
      for (const eg::ENode& n : s.g.eclass(c).nodes) {
        if (n.children.empty()) continue;
        bool fromRelated = std::all_of(n.children.begin(), n.children.end(), [&](eg::Id k) {
          eg::Id kc = s.g.find(k);
          return (kc < rel.size() && rel[kc]) || (kc < below.size() && below[kc]) || s.g.data(kc).tensor() == nullptr ||
                 s.g.data(kc).tensor()->shape.empty();
        });
        if (fromRelated && c < rel.size()) {
          addToRel(st, s, u);
          rel[c] = 1;
          grew = true;
          break;
        }
      }
    }
  }
}

// The spec operator is an attention: its forward value may be merged from
// partial attentions over key blocks (sdpa_merge.cpp); its backward's dk/dv
// travel round a ring packed into one flat buffer, each half updated in
// place (a slice_scatter over the received buffer), so the dv a rank sends on
// is read through the buffer that holds its dk partial sum, a value no spec
// expression of dv names (sdpa_backward_ring.cpp).
bool readsAttention(const InferState& st, const SpecOp& op) {
  for (int n : {op.node, op.reported})
    for (const auto& e : st.spec.nodes[n].def.nodes)
      if (e.op == ops::syms().sdpa || e.op == ops::syms().sdpaBackward) return true;
  return false;
}

// After a saturation of an attention's search: the pieces of every concat in
// an explored tensor's class become slices of that tensor (sliceConcatPieces).
// Returns whether the e-graph changed.
bool slicePiecesOfExplored(InferState& st, OperatorSearch& s) {
  bool changed = false;
  for (int u : s.explored) {
    eg::Id leaf = addLeaf(s.g, st.impl, u);
    changed |= sliceConcatPieces(s.g, leaf, leaf);
  }
  return changed;
}

bool overBudget(const InferState& st, const OperatorSearch& s) {
  return s.g.numNodes() >= st.opts.maxNodes || s.cpuSpent() > st.opts.operatorSeconds;
}

}  // namespace

// Only within a scaled chain (where it starts, the search goes on to the ranks' own scaled values),
// and once the first batch is in: the ranks' own computation of the operator (the division of a
// scaled value, say) is found from the inputs' relatives, as for a clean input.
bool scaledOnly(const InferState& st, const OperatorSearch& s) {
  return s.clean.empty() && !s.explored.empty() && !st.isTarget[s.op.node] && deferredChain(st, s.op).scaled &&
         hasScaledClean(s.g, s.root);
}

// Listing 3: the unexplored implementation nodes all of whose inputs are
// related, reached from the newly related tensors (and, for a spec operator
// that reads nothing, the implementation's own source operators). In the
// detour phase, same-operator nodes with unrelated inputs too (detours.cpp).
std::vector<int> nextBatch(InferState& st, OperatorSearch& s, bool withSources) {
  std::vector<int> batch;
  eg::Symbol detourOp = s.detours ? detourOperator(st, s.op) : 0;
  // Once the output has a clean expression (and from the start for a
  // rearrangement of the spec's inputs, which has one over their relations),
  // the implementation nodes that can give it another one are rearrangements.
  // Computing nodes read the output's relatives to compute the next
  // operators' values: they are explored for those operators, and here would
  // only grow the e-graph (an HF causal-mask chain relating a vector to its
  // own shift enumerated every split of it).
  const auto& specDef = st.spec.nodes[s.op.node].def.nodes;
  const ops::OpDef* specOp = specDef.empty() ? nullptr : ops::find(specDef.back().op);
  // (An input carried without a clean relation (deferred.cpp) gives the
  // rearrangement none: its relatives' computing users are needed too.)
  DeferredChain chain = deferredChain(st, s.op);
  bool carried = chain.depth > 0;
  // (A scaled clean input, div(clean, k), is the clean one's relatives up to k: a rearrangement
  // gets its relation from the scale lemmas, as for a clean input; but a graph output must meet
  // the implementation's own division, a computing node.)
  bool carriedUnscaled = carried && (!chain.scaled || st.isTarget[s.op.node]);
  // A graph output under strict outputs counts as expressed only over the
  // implementation's outputs: when an identity lemma (div-one) relates it to
  // the input of the impl's own `/ 1`, that division is still to explore.
  bool notYetOutput = !s.clean.empty() && st.strictOutputs && st.isTarget[s.op.node] && !hasImplOutputExpression(st, s);
  bool expressed = (!s.clean.empty() && !notYetOutput) || scaledOnly(st, s);
  // A graph output read from scaled inputs: every rank divides its reduced value by itself (a
  // computing node), each such division is another expression of the output (each rank's expectation).
  bool eachRankDivides = chain.scaled && st.isTarget[s.op.node];
  bool rearrangementsOnly = (expressed && !eachRankDivides) ||
                            (specOp && specOp->clean && s.op.reported == s.op.node && !carriedUnscaled);
  // A graph output known only over tensors the implementation packs into a
  // buffer and returns pieces of after a collective (FSDP's gradients in its
  // reduce-scatter buffer, summed and never divided): the pack is followed as
  // for a carried input, so that the returned slices are reached.
  bool followPacks = carried || notYetOutput;
  for (int t : s.frontier)
    for (int u : st.impl.users[t]) {
      if (st.marks.isExplored(u) || st.impl.nodes[u].aliasOf >= 0) continue;
      if (rearrangementsOnly && !rearranges(st.impl.nodes[u])) continue;
      if (allInputsRelated(st, u) || (followPacks && packsRelated(st, u))) {
        st.marks.markExplored(u);
        batch.push_back(u);
      } else if (detourOp && isDetour(st, u, detourOp)) {
        addDetour(st, u, batch);
      }
    }
  s.frontier.clear();
  // Zero padding: what a rank computes from inputs declared zero as a whole
  // (its all-reduce term, its attention over pad heads) is zero whatever the
  // spec operator; it joins every operator's first batch so that sums and
  // products over it can drop it (zeros.cpp's markImplZeros).
  if (s.explored.empty())
    for (int d : st.implZeroNodes)
      if (!st.marks.isExplored(d)) {
        st.marks.markExplored(d);
        batch.push_back(d);
      }
  if (withSources)
    for (int d : st.implSources)
      if (!st.marks.isExplored(d)) {
        st.marks.markExplored(d);
        batch.push_back(d);
      }
  return batch;
}

void exploreRelated(InferState& st, OperatorSearch& s, InferStats& stats) {
  const bool attention = readsAttention(st, s.op);
  while (true) {
    std::vector<int> batch = nextBatch(st, s, s.op.reads.empty() && s.explored.empty());
    // The concats the last saturation put in explored tensors' classes, sliced with the next batch (or
    // alone, once no batch is left) in one saturation.
    bool sliced = attention && slicePiecesOfExplored(st, s);
    if (batch.empty() && !sliced && !s.detours && s.clean.empty() && !scaledOnly(st, s)) batch = startDetours(st, s);
    if (batch.empty() && !sliced) return;
    addBatch(st, s, batch);
    // In an attention's search, the users of the tensors this batch related at once (rearrangements: a
    // ring step's K/V or dk/dv buffer packed, sent, unpacked, sliced) join the same batch, and theirs in
    // turn, before one saturation: the ring's chains are tens of operators long, and a saturation per
    // operator (each ending with a search of the whole e-graph) was most of a backward's CPU (4-rank
    // load-balanced dk: 73 saturations -> 17). Elsewhere this explores computing users that an output
    // expressed after the saturation would have skipped (artifact aws_llama tp4: 5,053 -> 5,665 e-nodes).
    if (attention)
      while (!s.frontier.empty()) {
        std::vector<int> more = nextBatch(st, s, false);
        if (more.empty()) break;
        addBatch(st, s, more);
      }
    s.g.rebuild();
    saturate(st, s, stats);
    if (overBudget(st, s)) {
      s.limitHit = true;
      return;
    }
    growRelated(st, s);
  }
}

}  // namespace tangle
