// Block search: an operator whose inputs hold many data-parallel replicas and
// microbatches side by side (a relation that is a concat of at least
// InferOptions::blockMin pieces along one dim) is searched on one block of
// them, the result renamed onto the other blocks, and assembled.
//
//   blocks    each blocked input's relation cut exactly at the block
//             boundaries (sliceTerm: a slice of a concat at its pieces'
//             offsets is those pieces; across another dim's concat, the
//             concat of the pieces' slices): xi_b, one term per input;
//   block 0   an e-graph like an operator's search, whose root is the
//             operator's definition over the xi_0 terms instead of its
//             inputs' leaves: each clean expression r of it has f(xi_0) = r;
//   block b   phi renames block 0's implementation tensors onto block b's
//             (the pieces pair up, explored nodes map to users of the same
//             definition, other tensors to the same name on the image rank);
//             it is used only if it maps every fact block 0's e-graph was
//             built from onto one that holds (the gate of reuse.cpp: types,
//             constants, zero regions, definitions, implEqual facts, and each
//             seeded relation of an unblocked input onto one of its
//             relations); then f(xi_b) = phi(r). A block refused is searched;
//   assembly  an e-graph where each blocked input is concat(xi_0, ..., xi_N-1)
//             (exact: the blocks partition it), the other inputs have their
//             relations, the root is the operator's definition, and each
//             block's f(xi_b) is merged with its r_b; the lemmas alone
//             saturate it. Its clean expressions conclude the operator.
// Nothing assumes that the operator distributes over the blocks: the lemmas
// prove it in the assembly, or the operator is searched whole. The footprint
// recorded for reuse holds every block's facts (block 0's renamed) and the
// assembly's, and a verdict other than `refines` after a block search is
// recomputed without (infer.cpp).
//
// On from 4 pieces (InferOptions::blockMin), on the walk's thread with any
// --jobs. A relation names each rank's own copies of its replica's pieces, so
// a block's forms are the distinct slices of the relations there (at most the
// copies of that block); an input with more than kMaxForms of them is not
// blocked: pairing them block by block cost more than the search (docs/benchmarks.md).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <unordered_map>

#include "infer/leaf_names.h"
#include "infer/operator_search.h"
#include "infer/reuse.h"

namespace tangle {

namespace {

using Shape = std::vector<int64_t>;

// At most this many relation forms per blocked read (each rank's copies, ...): with more, the
// forms' pairing per block cost more than the whole search on TrainVerify's 256-rank plan.
constexpr size_t kMaxForms = 8;

bool tracing() {
  static const bool trace = std::getenv("TANGLE_TRACE_BLOCKS") != nullptr;
  return trace;
}

struct BlockedRead {
  int spec = -1;
  int dim = -1;  // the read's dim cut at the bounds
  // blocks[b]: the distinct terms that the read's relations cutting at every bound give for block
  // b (xi_b, in as many forms as differ there: each rank's copies of that block, say; the
  // relations differ mostly in other blocks, each rank's form naming its own copies)
  std::vector<std::vector<eg::Term>> blocks;
  size_t forms() const {
    size_t n = 0;
    for (const auto& b : blocks) n = std::max(n, b.size());
    return n;
  }
};

struct Blocks {
  // The output's dim the blocks cut, or -1: they cut a dim the operator contracts or reduces
  // (a weight gradient summed over the batch), each read along its own dim.
  int dim = -1;
  std::vector<int64_t> bounds;  // block b is [bounds[b], bounds[b+1]) along each read's dim
  std::vector<BlockedRead> reads;
  std::vector<int> others;  // reads not blocked (resolved spec tensors)
  size_t count() const { return bounds.size() - 1; }
};

// The concrete shape of every node of t (children first), or nullopt. Leaves take their tensor's
// type and concats add up their pieces as ops' concat inference does (most relation terms are
// concats of leaves: typing each through an e-graph was a 25th of a 256-rank check); any other
// operator is typed by g, an e-graph that only gains nodes (type inference reads the operands' data
// alone), shared by the terms of one operator, its operands added on demand.
std::optional<std::vector<Shape>> shapesOf(const InferState& st, eg::EGraph& g, const eg::Term& t) {
  constexpr eg::Id kNoId = UINT32_MAX;
  std::vector<eg::Id> ids(t.size(), kNoId);
  std::vector<Shape> out(t.size());
  std::vector<DType> dtypes(t.size(), DType::Unknown);
  std::vector<std::pair<bool, int>> leafNode(t.size(), {false, -1});  // (is spec, node) of a leaf
  // Node i of t in g (its subterm added when a concat or leaf was typed without it).
  auto idOf = [&](auto& self, uint32_t i) -> std::optional<eg::Id> {
    if (ids[i] != kNoId) return ids[i];
    const auto& n = t.nodes[i];
    if (n.op == ops::syms().tensor) {
      ids[i] = addLeaf(g, leafNode[i].first ? st.spec : st.impl, leafNode[i].second);
      return ids[i];
    }
    eg::ENode en{n.op, n.attrs, {}};
    for (uint32_t c : n.children) {
      auto id = self(self, c);
      if (!id) return std::nullopt;
      en.children.push_back(*id);
    }
    auto id = g.tryAdd(std::move(en));
    if (id) ids[i] = *id;
    return id;
  };
  for (size_t i = 0; i < t.size(); ++i) {
    const auto& n = t.nodes[i];
    const TensorType* tt = nullptr;
    if (n.op == ops::syms().tensor) {
      auto leaf = leaves::leafOf(st.spec, st.impl, n.op, n.attrs);
      if (!leaf) return std::nullopt;
      leafNode[i] = *leaf;
      const LGraph& lg = leaf->first ? st.spec : st.impl;
      const LNode& ln = lg.node(lg.resolve(leaf->second));
      tt = ln.data.tuple ? nullptr : ln.data.tensor();
    } else if (n.op == ops::syms().concat) {
      // ops' inferConcat: equal ranks, equal sizes off the dim, dtypes equal where known.
      const auto& a = eg::attrs(n.attrs);
      if (n.children.empty() || a.size() != 1 || a[0].kind != eg::Attr::Kind::Int) return std::nullopt;
      const int64_t dim = a[0].i;
      const Shape& first = out[n.children[0]];
      if (dim < 0 || dim >= static_cast<int64_t>(first.size())) return std::nullopt;
      Shape shape = first;
      DType dt = dtypes[n.children[0]];
      for (size_t k = 1; k < n.children.size(); ++k) {
        const Shape& x = out[n.children[k]];
        const DType xt = dtypes[n.children[k]];
        if (x.size() != first.size()) return std::nullopt;
        if (xt != dt && xt != DType::Unknown && dt != DType::Unknown) return std::nullopt;
        if (dt == DType::Unknown) dt = xt;
        for (size_t d = 0; d < x.size(); ++d)
          if (static_cast<int64_t>(d) != dim && x[d] != shape[d]) return std::nullopt;
        shape[dim] += x[dim];
      }
      out[i] = std::move(shape);
      dtypes[i] = dt;
      continue;
    } else {
      auto id = idOf(idOf, static_cast<uint32_t>(i));
      if (!id) return std::nullopt;
      tt = g.data(g.find(*id)).tensor();
    }
    if (!tt) return std::nullopt;
    for (Dim d : tt->shape) {
      if (isSymbolic(d)) return std::nullopt;
      out[i].push_back(d);
    }
    dtypes[i] = tt->dtype;
  }
  return out;
}

int64_t concatDim(const eg::Term::Node& n) { return eg::attrs(n.attrs)[0].i; }

// Offsets along `dim` where the concats of t along it cut, from `base`.
void cutsOf(const eg::Term& t, const std::vector<Shape>& sh, uint32_t n, int dim, int64_t base, std::set<int64_t>& out) {
  const auto& node = t.nodes[n];
  if (node.op != ops::syms().concat) return;
  if (concatDim(node) != dim) {
    for (uint32_t c : node.children) cutsOf(t, sh, c, dim, base, out);
    return;
  }
  int64_t at = base;
  for (uint32_t c : node.children) {
    out.insert(at);
    cutsOf(t, sh, c, dim, at, out);
    at += sh[c][dim];
  }
  out.insert(at);
}

uint32_t copySub(const eg::Term& t, uint32_t n, eg::Term& out) {
  eg::Term::Node copy{t.nodes[n].op, t.nodes[n].attrs, {}};
  for (uint32_t c : t.nodes[n].children) copy.children.push_back(copySub(t, c, out));
  out.nodes.push_back(std::move(copy));
  return static_cast<uint32_t>(out.nodes.size() - 1);
}

// Appends to `out` a term equal to slice(node n of t, dim, [lo, hi)) built of t's own subterms
// and concats, or nullopt when the range cuts through a subterm that is not a concat.
std::optional<uint32_t> sliceInto(const eg::Term& t, const std::vector<Shape>& sh, uint32_t n, int dim, int64_t lo,
                                  int64_t hi, eg::Term& out) {
  if (dim >= static_cast<int>(sh[n].size())) return std::nullopt;
  if (lo == 0 && hi == sh[n][dim]) return copySub(t, n, out);
  const auto& node = t.nodes[n];
  if (node.op != ops::syms().concat) return std::nullopt;
  std::vector<uint32_t> parts;
  if (concatDim(node) == dim) {
    int64_t at = 0;
    for (uint32_t c : node.children) {
      int64_t len = sh[c][dim], a = std::max(lo, at), b = std::min(hi, at + len);
      if (a < b) {
        auto p = sliceInto(t, sh, c, dim, a - at, b - at, out);
        if (!p) return std::nullopt;
        parts.push_back(*p);
      }
      at += len;
    }
    if (parts.size() == 1) return parts[0];
  } else {
    for (uint32_t c : node.children) {
      auto p = sliceInto(t, sh, c, dim, lo, hi, out);
      if (!p) return std::nullopt;
      parts.push_back(*p);
    }
  }
  if (parts.empty()) return std::nullopt;
  out.nodes.push_back(eg::Term::Node{node.op, node.attrs, std::move(parts)});
  return static_cast<uint32_t>(out.nodes.size() - 1);
}

// xi_b for every block, or nullopt when t does not cut at every bound.
std::optional<std::vector<eg::Term>> cutAt(const eg::Term& t, const std::vector<Shape>& sh, int dim,
                                           const std::vector<int64_t>& bounds) {
  std::vector<eg::Term> out(bounds.size() - 1);
  for (size_t b = 0; b + 1 < bounds.size(); ++b)
    if (!sliceInto(t, sh, t.root(), dim, bounds[b], bounds[b + 1], out[b])) return std::nullopt;
  return out;
}

const Shape* concreteShape(const LNode& n, Shape& buf) {
  const TensorType* t = n.data.tuple ? nullptr : n.data.tensor();
  if (!t) return nullptr;
  buf.clear();
  for (Dim d : t->shape) {
    if (isSymbolic(d)) return nullptr;
    buf.push_back(d);
  }
  return &buf;
}

bool isAttention(const InferState& st, const SpecOp& op) {
  for (const auto& e : st.spec.nodes[op.node].def.nodes)
    if (e.op == ops::syms().sdpa || e.op == ops::syms().sdpaBackward) return true;
  return false;
}

// The blocks of op, or nullopt when it has none worth it.
std::optional<Blocks> findBlocks(const InferState& st, const SpecOp& op) {
  if (op.reported != op.node || st.isTarget[op.node] || st.deferredDepth[op.node] || isAttention(st, op)) return {};
  const LNode& out = st.spec.nodes[op.node];
  Shape outShape, buf;
  if (out.def.nodes.empty() || !concreteShape(out, outShape) || outShape.empty()) return {};
  std::vector<int> reads;
  for (int r : op.reads) {
    int s = st.spec.resolve(r);
    if (st.deferredDepth[s] || !st.outRels[s].empty()) return {};
    if (std::find(reads.begin(), reads.end(), s) == reads.end()) reads.push_back(s);
  }
  // Each term's shapes once (an e-graph of its own: the relations of a 256-rank plan's
  // activations are hundreds of 64-piece concats).
  std::unordered_map<const eg::Term*, std::optional<std::vector<Shape>>> shapes;
  std::optional<eg::EGraph> typing;  // one for all the terms (an e-graph per term was a 30th of a check)
  auto shapesOfTerm = [&](const eg::Term& t) -> const std::optional<std::vector<Shape>>& {
    auto it = shapes.find(&t);
    if (it == shapes.end()) {
      if (!typing) typing.emplace(ops::inferData, st.symbols);
      it = shapes.emplace(&t, shapesOf(st, *typing, t)).first;
    }
    return it->second;
  };
  // The dims of read s that may carry the blocks: the output's dim (same rank, same size), or
  // with anyDim every dim of the blocks' extent.
  auto candidateDims = [&](const Shape& shape, bool anyDim, int outDim, int64_t extent) {
    std::vector<int> dims;
    for (int d = 0; d < static_cast<int>(shape.size()); ++d)
      if (anyDim ? shape[d] == extent
                 : d == outDim && shape.size() == outShape.size() && shape[d] == outShape[d])
        dims.push_back(d);
    return dims;
  };
  auto attempt = [&](bool anyDim) -> std::optional<Blocks> {
    // The bounds: the relation term of a read that cuts a candidate dim most often (first the
    // output's dims; else any dim, the output keeping none of them).
    Blocks bl;
    int from = -1;  // the read's dim the bounds came from
    for (int s : reads) {
      const Shape* shape = concreteShape(st.spec.nodes[s], buf);
      if (!shape || (!anyDim && shape->size() != outShape.size())) continue;
      // The first few terms: a read's relations are mostly one rank's choice each, cut alike.
      for (size_t i = 0; i < std::min(st.rels[s].size(), kMaxForms); ++i) {
        const eg::Term& t = st.rels[s][i];
        const auto& sh = shapesOfTerm(t);
        if (!sh) continue;
        for (int d = 0; d < static_cast<int>(shape->size()); ++d) {
          if (!anyDim && (*shape)[d] != outShape[d]) continue;
          std::set<int64_t> cuts;
          cutsOf(t, *sh, t.root(), d, 0, cuts);
          if (cuts.size() > bl.bounds.size() && cuts.size() > st.opts.blockMin && *cuts.begin() == 0 &&
              *cuts.rbegin() == (*shape)[d]) {
            from = d;
            bl.bounds.assign(cuts.begin(), cuts.end());
          }
        }
      }
    }
    if (from < 0) return std::nullopt;
    bl.dim = anyDim ? -1 : from;
    const int64_t extent = bl.bounds.back();
    for (int s : reads) {
      const Shape* shape = concreteShape(st.spec.nodes[s], buf);
      std::vector<int> dims = shape ? candidateDims(*shape, anyDim, bl.dim, extent) : std::vector<int>{};
      BlockedRead read{s, -1, {}};
      for (int d : dims) {
        for (size_t i = 0; i < st.rels[s].size(); ++i) {
          const auto& sh = shapesOfTerm(st.rels[s][i]);
          if (!sh) continue;
          auto pieces = cutAt(st.rels[s][i], *sh, d, bl.bounds);
          if (!pieces) continue;
          read.dim = d;
          read.blocks.resize(pieces->size());
          for (size_t b = 0; b < pieces->size(); ++b) {
            auto& forms = read.blocks[b];
            if (std::find(forms.begin(), forms.end(), (*pieces)[b]) == forms.end()) forms.push_back(std::move((*pieces)[b]));
            if (forms.size() > kMaxForms) return std::nullopt;  // pairing the forms would cost more than the search
          }
        }
        if (read.dim >= 0) break;
      }
      if (read.dim >= 0) bl.reads.push_back(std::move(read));
      else if (!dims.empty() && extent > 1) return std::nullopt;  // a batch-carrying input with no cut relation
      else bl.others.push_back(s);
    }
    if (bl.reads.empty()) return std::nullopt;
    return bl;
  };
  if (auto bl = attempt(false)) return bl;
  return attempt(true);
}

// The ranks (impl graphs) of the tensors of terms.
std::vector<char> ranksOf(const InferState& st, const std::vector<const eg::Term*>& terms) {
  std::vector<char> ranks(st.impl.graphs.size(), 0);
  std::vector<int> ts;
  for (const eg::Term* t : terms) collectImplTensors(st, *t, ts);
  for (int d : ts) ranks[st.impl.nodes[d].graph] = 1;
  return ranks;
}

bool onRanks(const InferState& st, const std::vector<int>& tensors, const std::vector<char>& ranks) {
  return std::all_of(tensors.begin(), tensors.end(), [&](int d) { return ranks[st.impl.nodes[d].graph] != 0; });
}

// What a block's search was built from and found (or block 0's, renamed onto another block).
struct BlockSearch {
  std::vector<eg::Term> clean;
  std::vector<int> explored, impl;  // impl: every implementation leaf of the e-graph
  std::vector<char> implDef;        // parallel to impl: explored (its definition added)
  std::vector<int> related;         // T_rel at the end (reuse's completeness guard)
  std::vector<std::pair<int, int>> mergedEqual, foundEqual;
  // The relations each unblocked read was seeded with (a fact w = t each).
  std::vector<std::pair<int, std::vector<eg::Term>>> seededTerms;
  std::vector<std::pair<int, std::vector<const RelExpr*>>> seededExprs;
  size_t enodes = 0;
};

// An unblocked read's leaf, merged with its relations over the block's ranks (all of them when
// none is only over those): the others name tensors the block's ranks never read.
eg::Id addUnblocked(const InferState& st, OperatorSearch& s, int o, const std::vector<char>& ranks,
                    std::vector<int>& relTensors, BlockSearch& out) {
  eg::Id leaf = addLeaf(s.g, st.spec, o);
  std::vector<eg::Term> terms;
  std::vector<const RelExpr*> exprs;
  for (bool all : {false, true}) {
    for (const eg::Term& t : st.rels[o]) {
      std::vector<int> ts;
      collectImplTensors(st, t, ts);
      if (all || onRanks(st, ts, ranks)) terms.push_back(t);
    }
    for (const RelExpr* e : st.inputRels[o]) {
      std::vector<int> ts;
      collectImplTensors(st, *e, ts);
      if (all || onRanks(st, ts, ranks)) exprs.push_back(e);
    }
    if (!terms.empty() || !exprs.empty()) break;
  }
  for (const eg::Term& t : terms) {
    s.g.merge(leaf, addTerm(st, s.g, t));
    collectImplTensors(st, t, relTensors);
  }
  for (const RelExpr* e : exprs) {
    s.g.merge(leaf, addRelExpr(s.g, *e, st.spec, st.impl));
    collectImplTensors(st, *e, relTensors);
  }
  if (auto c = st.specConsts.find(o); c != st.specConsts.end())
    s.g.merge(leaf, declaredConstNode(s.g, st.spec.nodes[o], c->second));
  out.seededTerms.emplace_back(o, std::move(terms));
  out.seededExprs.emplace_back(o, std::move(exprs));
  return leaf;
}

// Block b of a blocked read: one class, its forms merged (each is the read's slice there).
eg::Id blockClass(const InferState& st, eg::EGraph& g, const BlockedRead& r, size_t b) {
  eg::Id c = addTerm(st, g, r.blocks[b][0]);
  for (size_t k = 1; k < r.blocks[b].size(); ++k) g.merge(c, addTerm(st, g, r.blocks[b][k]));
  return c;
}

// The operator's definition over block b's input terms (blocked reads) and the others' classes.
std::optional<eg::Id> blockRoot(const InferState& st, eg::EGraph& g, const SpecOp& op, const Blocks& bl, size_t b,
                                const std::unordered_map<int, eg::Id>& others) {
  std::unordered_map<int, eg::Id> cls = others;
  for (const BlockedRead& r : bl.reads) cls[r.spec] = blockClass(st, g, r, b);
  return addDefinitionOver(g, st.spec, op.node, [&](int operand) {
    int s = st.spec.resolve(operand);
    auto it = cls.find(s);
    return it != cls.end() ? it->second : addLeaf(g, st.spec, s);
  });
}

std::optional<BlockSearch> searchBlock(InferState& st, const SpecOp& op, const Blocks& bl, size_t b,
                                       InferStats& stats) {
  st.marks.nextOperator();
  OperatorSearch s(op, st.symbols);
  BlockSearch out;
  std::vector<const eg::Term*> pieces;
  for (const BlockedRead& r : bl.reads)
    for (const eg::Term& t : r.blocks[b]) pieces.push_back(&t);
  std::vector<char> ranks = ranksOf(st, pieces);
  std::vector<int> relTensors;
  for (const eg::Term* t : pieces) collectImplTensors(st, *t, relTensors);
  std::unordered_map<int, eg::Id> others;
  for (int o : bl.others) others[o] = addUnblocked(st, s, o, ranks, relTensors, out);
  // The definition over the block first: over a piece it may not type (a view to the whole
  // batch's shape), and then nothing else is worth building.
  auto root = blockRoot(st, s.g, op, bl, b, others);
  if (!root) return std::nullopt;
  seedImplFacts(st, s, relTensors);
  s.root = *root;
  for (int d : relTensors) addToRel(st, s, d);
  s.g.rebuild();
  saturate(st, s, stats);
  exploreRelated(st, s, stats);
  out.enodes = s.g.numNodes();
  if (s.clean.empty() || !s.g.conflicts().empty() || !s.inlined.empty()) return std::nullopt;
  out.clean = s.clean;
  out.explored = s.explored;
  auto tensors = tensorLeaves(st, s.g);
  if (!tensors) return std::nullopt;
  for (auto [spec, node] : *tensors) {
    if (spec) {  // only the unblocked reads have spec leaves here
      if (std::find(bl.others.begin(), bl.others.end(), node) == bl.others.end()) return std::nullopt;
      continue;
    }
    out.impl.push_back(node);
    out.implDef.push_back(st.marks.isExplored(node) ? 1 : 0);
  }
  out.related = s.related;
  out.mergedEqual = s.mergedEqual;
  out.foundEqual = newImplEqualPairs(st, s.g);
  return out;
}

// The tensor named as d on rank `rank` (the same program's tensor on another replica), or -1.
int sameNameOn(const InferState& st, int d, int rank) {
  const std::string& name = st.impl.nodes[d].name;
  size_t dot = name.find('.');
  if (dot == std::string::npos) return -1;
  auto id = st.impl.find("D" + std::to_string(rank) + name.substr(dot));
  return id ? st.impl.resolve(*id) : -1;
}

// Leaf y of a relation, leaf x of a renamed term: the same tensor, or x an implEqual partner of
// y (a fact proved by an earlier operator's e-graph: a weight's copy on another data-parallel
// replica); the partners used are appended to `used`.
bool leafEqualModulo(const InferState& st, const eg::Term::Node& x, const eg::Term::Node& y,
                     std::vector<std::pair<int, int>>& used) {
  if (x.attrs == y.attrs) return true;
  auto lx = leaves::leafOf(st.spec, st.impl, x.op, x.attrs), ly = leaves::leafOf(st.spec, st.impl, y.op, y.attrs);
  if (!lx || !ly || lx->first || ly->first) return false;
  const std::vector<int>* partners = st.implEqual.find(ly->second);
  if (!partners || std::find(partners->begin(), partners->end(), lx->second) == partners->end()) return false;
  used.emplace_back(ly->second, lx->second);
  return true;
}

// Whether S_o = t holds by a relation of o, leaf for leaf modulo implEqual (see above).
bool holdsModuloImplEqual(const InferState& st, int o, const eg::Term& t, std::vector<std::pair<int, int>>& used) {
  for (const eg::Term& r : st.rels[o]) {
    if (r.size() != t.size()) continue;
    std::vector<std::pair<int, int>> mine;
    bool same = true;
    for (size_t i = 0; same && i < t.size(); ++i) {
      const auto &x = t.nodes[i], &y = r.nodes[i];
      same = x.op == y.op && x.children == y.children &&
             (x.op == ops::syms().tensor ? leafEqualModulo(st, x, y, mine) : x.attrs == y.attrs);
    }
    if (same) {
      used.insert(used.end(), mine.begin(), mine.end());
      return true;
    }
  }
  return false;
}

// Block 0's search renamed onto block b, when the gate accepts the renaming (see the top).
std::optional<BlockSearch> renameOnto(const InferState& st, const Blocks& bl, const BlockSearch& r0, size_t b,
                                      const char*& why) {
  Renaming phi(st.impl);
  phi.reserve(0, r0.impl.size());
  why = "the pieces differ";
  // Each form of block 0 onto some form of block b: the facts that block 0's forms are one class
  // must hold renamed (a relation may pick each block's piece from another rank's copy).
  for (const BlockedRead& r : bl.reads)
    for (size_t k = 0; k < r.blocks[0].size(); ++k) {
      bool paired = false;
      const auto& there = r.blocks[b];
      for (size_t j = 0; !paired && j < there.size(); ++j) {
        size_t other = (k + j) % there.size();  // the same form first
        Renaming trial = phi;
        if (sameTermUnder(st, trial, r.blocks[0][k], there[other], true)) {
          phi = std::move(trial);
          paired = true;
        }
      }
      if (!paired) return std::nullopt;
    }
  // A piece whose definition the search added (explored) has its operands' images among its
  // image's: the operands of the definitions, in order (a microbatch's view of its own logits,
  // not the same-named tensor of block 0's microbatch on that rank).
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t i = 0; i < r0.impl.size(); ++i) {
      const int* m = r0.implDef[i] ? phi.implOf(r0.impl[i]) : nullptr;
      if (!m) continue;
      const LNode &x = st.impl.nodes[r0.impl[i]], &y = st.impl.nodes[*m];
      if (x.operands.size() != y.operands.size()) continue;
      for (size_t k = 0; k < x.operands.size(); ++k) {
        int from = st.impl.resolve(x.operands[k]), to = st.impl.resolve(y.operands[k]);
        if (!phi.implOf(from) && phi.bindImpl(from, to)) progress = true;
      }
    }
  }
  // The other leaves that are not explored (the unblocked inputs' relations, implEqual partners):
  // the same tensor on the image of its rank (another replica's copy), or itself.
  why = "a tensor has no image";
  // The ranks the pieces moved, closed into a permutation: a rank that became another's image
  // gives its own tensors to the start of that chain (replicas swapped, or cycled).
  std::unordered_map<int, int> sigma;
  for (int a : r0.impl)
    if (const int* m = phi.implOf(a)) sigma.emplace(st.impl.nodes[a].graph, st.impl.nodes[*m].graph);
  std::unordered_map<int, int> closing;
  for (auto [from, to] : sigma) {
    bool start = true;
    for (auto [x, y] : sigma) start &= y != from;
    if (!start || from == to) continue;
    int end = to;
    while (sigma.count(end) && sigma[end] != end) end = sigma[end];
    closing.emplace(end, from);
  }
  auto bindByName = [&](int a) {
    int graph = st.impl.nodes[a].graph;
    const int* rank = phi.rank.find(graph);
    auto closed = closing.find(graph);
    int to = rank ? sameNameOn(st, a, *rank) : closed != closing.end() ? sameNameOn(st, a, closed->second) : a;
    return to >= 0 && phi.bindImpl(a, to);
  };
  for (size_t i = 0; i < r0.impl.size(); ++i)
    if (!r0.implDef[i] && !phi.implOf(r0.impl[i]) && !bindByName(r0.impl[i])) return std::nullopt;
  // Explored nodes map to users of their operands' images with the same definition (operands
  // first: a related tensor may be explored after its users).
  why = "an explored node has no image";
  std::vector<int> pending;
  for (int u : r0.explored)
    if (!phi.implOf(u)) pending.push_back(u);
  // Nodes whose operands are all bound first; else one bound by a single operand, and again.
  while (!pending.empty()) {
    std::vector<int> left;
    for (int u : pending)
      if (!phi.implOf(u) && !matchExplored(st, phi, u, false, true)) left.push_back(u);
    if (left.size() == pending.size()) {
      left.clear();
      bool one = false;
      for (int u : pending)
        if (one || phi.implOf(u) || !matchExplored(st, phi, u, false)) left.push_back(u);
        else one = true;
    }
    if (left.size() == pending.size()) {
      for (int u : pending)
        if (!matchExplored(st, phi, u, true)) return std::nullopt;
      left.clear();
    }
    pending = std::move(left);
  }
  why = "a tensor has no image";
  for (int a : r0.impl)
    if (!phi.implOf(a) && !bindByName(a)) return std::nullopt;
  why = "a tensor's facts differ";
  for (size_t i = 0; i < r0.impl.size(); ++i)
    if (!sameImplFacts(st, phi, r0.impl[i], *phi.implOf(r0.impl[i]), r0.implDef[i])) {
      if (tracing()) {
        thread_local std::string detail;  // why points into it
        detail = "the facts of " + st.impl.nodes[r0.impl[i]].name + " and of its image " +
                 st.impl.nodes[*phi.implOf(r0.impl[i])].name + " differ";
        why = detail.c_str();
      }
      return std::nullopt;
    }
  why = "an implEqual fact does not hold";
  if (!holdRenamed(st, r0.mergedEqual, [&](int d) { return phi.implOf(d); })) return std::nullopt;
  why = "a seeded relation of an unblocked input is not one";
  eg::Term renamed;
  // Relations keep each rank's copies in mixtures (rank 32's form of a weight names its own shard
  // beside rank 1's), so a renamed one may hold only through the copies' equalities.
  std::vector<std::pair<int, int>> usedEqual;
  // Each is looked for from where the last one was found: the seeded relations are one per rank of
  // block 0, in the order of the read's list, and their images are mostly the next entries there
  // (a scan from the front for each was quadratic in the ranks: a 64-rank weight's 64 relations).
  auto findFrom = [](const auto& list, size_t& hint, auto&& same) {
    for (size_t k = 0; k < list.size(); ++k) {
      size_t i = (hint + k) % list.size();
      if (same(list[i])) {
        hint = i + 1;
        return true;
      }
    }
    return false;
  };
  for (const auto& [o, terms] : r0.seededTerms) {
    size_t hint = 0;
    for (const eg::Term& t : terms)
      if (!renameTerm(st, phi, t, renamed) ||
          (!findFrom(st.rels[o], hint, [&](const eg::Term& x) { return x == renamed; }) &&
           !holdsModuloImplEqual(st, o, renamed, usedEqual)))
        return std::nullopt;
  }
  for (const auto& [o, exprs] : r0.seededExprs) {
    size_t hint = 0;
    for (const RelExpr* e : exprs)
      if (!findFrom(st.inputRels[o], hint, [&](const RelExpr* x) { return sameRelExprUnder(st, phi, *e, *x, false); }))
        return std::nullopt;
  }
  BlockSearch out;
  for (const eg::Term& t : r0.clean) {
    if (!renameTerm(st, phi, t, renamed)) return std::nullopt;
    out.clean.push_back(renamed);
  }
  auto image = [&](int d) { return *phi.implOf(d); };
  for (int d : r0.impl) out.impl.push_back(image(d));
  out.implDef = r0.implDef;
  for (int d : r0.related)
    if (phi.implOf(d)) out.related.push_back(image(d));
  for (auto [a, c] : r0.mergedEqual) out.mergedEqual.emplace_back(image(a), image(c));
  out.mergedEqual.insert(out.mergedEqual.end(), usedEqual.begin(), usedEqual.end());
  for (auto [a, c] : r0.foundEqual) out.foundEqual.emplace_back(image(a), image(c));
  return out;
}

// The footprint of a block search for reuse (reuse.h): every fact of every block's e-graph (block
// 0's renamed onto the others) and of the assembly's, so that reuse's gate covers all of them.
// assemblyEqual: the implEqual pairs the assembly found (taken before conclude recorded them).
std::optional<Footprint> footprintOf(const InferState& st, const OperatorSearch& assembly,
                                     const std::vector<int>& reads, const std::vector<BlockSearch>& blocks,
                                     std::vector<std::pair<int, int>> assemblyEqual) {
  Footprint f;
  f.op = assembly.op;
  f.spec = reads;
  std::unordered_map<int, size_t> at;  // impl tensor -> index in f.impl
  auto addImpl = [&](int d, char def) {
    auto [it, fresh] = at.emplace(d, f.impl.size());
    if (fresh) {
      f.impl.push_back(d);
      f.implDef.push_back(def);
    } else {
      f.implDef[it->second] |= def;
    }
  };
  auto tensors = tensorLeaves(st, assembly.g);
  if (!tensors) return std::nullopt;
  for (auto [spec, node] : *tensors)
    if (!spec) addImpl(node, 0);  // the assembly explores nothing
  f.related = assembly.related;
  f.mergedEqual = assembly.mergedEqual;
  f.foundEqual = std::move(assemblyEqual);
  for (const BlockSearch& b : blocks) {
    for (size_t i = 0; i < b.impl.size(); ++i) addImpl(b.impl[i], b.implDef[i]);
    f.related.insert(f.related.end(), b.related.begin(), b.related.end());
    f.mergedEqual.insert(f.mergedEqual.end(), b.mergedEqual.begin(), b.mergedEqual.end());
    f.foundEqual.insert(f.foundEqual.end(), b.foundEqual.begin(), b.foundEqual.end());
  }
  // Blocks on one rank share their weights' facts: each once (the gate checks every entry).
  auto distinct = [](auto& v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  };
  distinct(f.related);
  distinct(f.mergedEqual);
  f.result = st.rels[assembly.op.node];
  return f;
}

}  // namespace

bool searchByBlocks(InferState& st, const SpecOp& op, InferStats& stats, std::unordered_set<int>& inlined,
                    OperatorReuse* reuse, std::vector<std::pair<int, int>>& applied) {
  auto apply = [&](const std::vector<std::pair<int, int>>& pairs) {
    applyImplEqualPairs(st, pairs);
    applied.insert(applied.end(), pairs.begin(), pairs.end());
  };
  auto bl = findBlocks(st, op);
  if (!bl) return false;
  const char* name = st.spec.nodes[op.node].name.c_str();
  auto first = searchBlock(st, op, *bl, 0, stats);
  if (!first) {
    if (tracing()) std::fprintf(stderr, "blocks %s: block 0 of %zu has no clean expression\n", name, bl->count());
    return false;
  }
  std::vector<BlockSearch> results{*first};
  size_t searched = 1;
  for (size_t b = 1; b < bl->count(); ++b) {
    const char* why = "";
    auto r = renameOnto(st, *bl, *first, b, why);
    if (!r) {
      if (tracing()) std::fprintf(stderr, "blocks %s: block %zu searched: %s\n", name, b, why);
      r = searchBlock(st, op, *bl, b, stats);
      ++searched;
    }
    if (!r) {
      if (tracing()) std::fprintf(stderr, "blocks %s: block %zu of %zu has no clean expression\n", name, b, bl->count());
      return false;
    }
    apply(r->foundEqual);
    results.push_back(std::move(*r));
  }
  apply(first->foundEqual);
  // The assembly.
  st.marks.nextOperator();
  OperatorSearch s(op, st.symbols);
  std::vector<int> relTensors;
  std::unordered_map<int, eg::Id> others;
  // Each blocked read as the concat of its blocks (each block's class holds the read's relations'
  // forms of it).
  for (const BlockedRead& r : bl->reads) {
    eg::ENode whole{ops::syms().concat, eg::internAttrs({eg::Attr::integer(r.dim)}), {}};
    for (size_t b = 0; b < bl->count(); ++b) whole.children.push_back(blockClass(st, s.g, r, b));
    auto c = s.g.tryAdd(std::move(whole));
    if (!c) return false;
    s.g.merge(addLeaf(s.g, st.spec, r.spec), *c);
    for (const auto& forms : r.blocks)
      for (const eg::Term& t : forms) collectImplTensors(st, t, relTensors);
  }
  for (int o : bl->others) others[o] = addSpecTensor(st, s.g, s.inlined, o, relTensors);
  seedImplFacts(st, s, relTensors);
  auto root = addDefinition(s.g, st.spec, op.node);
  if (!root || !s.g.data(*root).tensor()) return false;
  for (size_t b = 0; b < bl->count(); ++b) {
    auto fb = blockRoot(st, s.g, op, *bl, b, others);
    if (!fb) return false;
    for (const eg::Term& t : results[b].clean) s.g.merge(*fb, addTerm(st, s.g, t));
  }
  s.root = *root;
  for (int d : relTensors) addToRel(st, s, d);
  s.g.rebuild();
  saturate(st, s, stats);
  if (tracing())
    std::fprintf(stderr, "blocks %s: %zu blocks along output dim %d (-1: contracted), %zu forms (%zu searched, block 0 %zu e-nodes), assembly %zu e-nodes, %s\n",
                 name, bl->count(), bl->dim, bl->reads[0].forms(), searched, first->enodes, s.g.numNodes(),
                 s.clean.empty() ? "no clean expression: searched whole" : "related");
  if (s.clean.empty() || !s.g.conflicts().empty()) return false;
  std::vector<std::pair<int, int>> assemblyEqual;
  if (reuse) assemblyEqual = newImplEqualPairs(st, s.g);
  const std::vector<std::pair<int, int>> concluded = implEqualPairs(st, s.g);  // what conclude records
  if (conclude(st, s, stats)) return false;  // not reached: the root has a clean expression
  applied.insert(applied.end(), concluded.begin(), concluded.end());
  if (reuse) {
    std::vector<int> reads;
    for (const BlockedRead& r : bl->reads) reads.push_back(r.spec);
    reads.insert(reads.end(), bl->others.begin(), bl->others.end());
    if (auto f = footprintOf(st, s, reads, results, std::move(assemblyEqual))) reuse->add(st, std::move(*f));
  }
  inlined.clear();
  return true;
}

}  // namespace tangle
