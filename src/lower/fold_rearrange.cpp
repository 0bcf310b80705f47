#include "lower/fold_rearrange.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <optional>

#include <fmt/format.h>

#include "interp/interp.h"
#include "lower/run_map.h"
#include "ops/ops.h"

namespace tangle {

namespace {

using runs::Run;
using runs::Runs;

// Past these a tensor is left as it is: the element map of a transpose is one
// run per element, and a concat of more pieces than this is no simpler.
constexpr size_t kMaxRuns = 1 << 12;
constexpr size_t kMaxPieces = 64;

std::optional<interp::Shape> concreteShape(const LNode& n) {
  const TensorType* t = n.data.tuple ? nullptr : n.data.tensor();
  if (!t) return std::nullopt;
  interp::Shape s;
  for (Dim d : t->shape) {
    if (isSymbolic(d)) return std::nullopt;
    s.push_back(d);
  }
  return s;
}

bool pureRearrangement(const LNode& n) {
  if (n.isInput || n.aliasOf >= 0 || n.def.nodes.empty() || n.data.tuple) return false;
  for (const CanonTerm::Node& t : n.def.nodes) {
    if (!ops::isGatherOp(t.op)) return false;
    for (const CanonTerm::Ref& r : t.children)
      if (r.kind == CanonTerm::Ref::Kind::Scalar) return false;
  }
  return true;
}

struct Folded {
  Runs runs;             // over base tensors (src = LNode index)
  bool viaConcat = false;  // the chain passed a concat of two or more pieces
};

class Folder {
 public:
  // `chainEnd`: tensors whose map only decides their own fold (no
  // rearrangement reads them); a map of more runs than a fold's pieces is then
  // as good as none, and composing stops there.
  Folder(LGraph& lg, std::vector<bool> chainEnd)
      : lg_(lg), memo_(lg.nodes.size()), busy_(lg.nodes.size(), false), chainEnd_(std::move(chainEnd)) {}

  // The element map of node `i` over base tensors: its own identity map when
  // it is not a rearrangement (or its map is too large to keep).
  const std::optional<Folded>& of(int i) {
    i = lg_.resolve(i);
    auto& slot = memo_[static_cast<size_t>(i)];
    if (slot.computed) return slot.value;
    slot.computed = true;
    busy_[static_cast<size_t>(i)] = true;
    slot.value = compose(i);
    if (!slot.value) slot.value = identity(i);
    busy_[static_cast<size_t>(i)] = false;
    return slot.value;
  }

  // The element map of `i`'s definition through its operands' maps; nullopt
  // when it is not a pure rearrangement or some map is too large to keep.
  std::optional<Folded> compose(int i) {
    const LNode& n = lg_.node(i);
    if (!pureRearrangement(n)) return std::nullopt;
    std::vector<Folded> local;
    std::vector<interp::Shape> localShapes;
    bool via = false;
    for (const CanonTerm::Node& t : n.def.nodes) {
      std::vector<const Runs*> kids;
      std::vector<interp::Shape> shapes;
      for (const CanonTerm::Ref& r : t.children) {
        if (r.kind == CanonTerm::Ref::Kind::Local) {
          kids.push_back(&local[static_cast<size_t>(r.local)].runs);
          shapes.push_back(localShapes[static_cast<size_t>(r.local)]);
          continue;
        }
        int o = lg_.resolve(r.operand);
        if (busy_[static_cast<size_t>(o)]) return std::nullopt;  // no cycles in a graph; be safe
        const std::optional<Folded>& f = of(o);
        auto s = concreteShape(lg_.node(o));
        if (!f || !s) return std::nullopt;
        via = via || f->viaConcat;
        kids.push_back(&f->runs);
        shapes.push_back(*s);
      }
      if (t.op == ops::syms().concat && t.children.size() >= 2) via = true;
      auto m = runs::opMap(t.op, t.attrs, shapes, kMaxRuns);
      if (!m) return std::nullopt;
      bool last = &t == &n.def.nodes.back();
      auto composed = runs::compose(m->runs, kids, last && chainEnd_[static_cast<size_t>(i)] ? kMaxPieces : kMaxRuns);
      if (!composed) return std::nullopt;
      local.push_back(Folded{std::move(*composed), false});
      localShapes.push_back(std::move(m->shape));
    }
    auto own = concreteShape(n);
    if (!own || localShapes.back() != *own) return std::nullopt;
    Folded out{std::move(local.back().runs), via};
    return out;
  }

  std::optional<Folded> identity(int i) {
    auto s = concreteShape(lg_.node(i));
    if (!s) return std::nullopt;
    int64_t n = runs::numel(*s);
    Folded f;
    if (n > 0) f.runs.push_back(Run{i, 0, n});
    return f;
  }

 private:
  struct Slot {
    bool computed = false;
    std::optional<Folded> value;
  };
  LGraph& lg_;
  std::vector<Slot> memo_;
  std::vector<bool> busy_;
  std::vector<bool> chainEnd_;
};

// Which tensors a fold may redefine, decided on the definitions alone: a pure
// rearrangement whose definition concatenates two or more pieces, or that
// reads such a tensor. Folder's `viaConcat` can only be true for these (a map
// it cannot compute makes a tensor a base, which passes no concat on), so the
// element maps, the costly part (one run per element of a transpose), are
// computed only for them and what they read. Node order is not topological (a
// pipeline's recv is its sender's alias): depth-first, without recursion.
std::vector<bool> concatChains(const LGraph& lg) {
  enum : uint8_t { Unknown, Busy, No, Yes };
  std::vector<uint8_t> state(lg.nodes.size(), Unknown);
  const eg::Symbol concat = ops::syms().concat;
  std::vector<std::pair<int, size_t>> stack;  // (node, operands decided so far)
  for (size_t root = 0; root < lg.nodes.size(); ++root) {
    if (state[root] != Unknown) continue;
    stack.emplace_back(static_cast<int>(root), 0);
    while (!stack.empty()) {
      int i = stack.back().first;
      const LNode& n = lg.node(i);
      uint8_t& st = state[static_cast<size_t>(i)];
      if (st == Unknown) {
        st = pureRearrangement(n) ? Busy : No;
        if (st == Busy)
          for (const CanonTerm::Node& t : n.def.nodes)
            if (t.op == concat && t.children.size() >= 2) st = Yes;
        if (st != Busy) {
          stack.pop_back();
          continue;
        }
      }
      bool yes = false, descend = false;
      for (size_t& k = stack.back().second; k < n.operands.size(); ++k) {
        int o = lg.resolve(n.operands[k]);
        uint8_t so = state[static_cast<size_t>(o)];
        if (so == Unknown) {
          descend = true;
          break;
        }
        // Busy is a cycle, which graphs have not: counted as a concat, to stay an over-approximation.
        if (so == Yes || so == Busy) {
          yes = true;
          break;
        }
      }
      if (descend) {
        stack.emplace_back(lg.resolve(n.operands[stack.back().second]), 0);
        continue;
      }
      state[static_cast<size_t>(i)] = yes ? Yes : No;
      stack.pop_back();
    }
  }
  std::vector<bool> out(lg.nodes.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = state[i] == Yes;
  return out;
}

// A new definition of a tensor of shape `out` whose element map is `rs`: the
// concat along dim 0 of its pieces, each a whole base tensor or a block of its
// dim-0 rows, of the shape the piece has in `out`. nullopt when a piece is not
// a whole number of rows of `out`, cuts across a base's rows or needs a
// reshape (a flat range hides the structure the lemmas match: sequence
// chunks, heads).
std::optional<CanonTerm> concatOfPieces(const LGraph& lg, const Runs& rs, const interp::Shape& out) {
  if (out.empty() || rs.empty() || rs.size() > kMaxPieces) return std::nullopt;
  int64_t row = runs::numel(interp::Shape(out.begin() + 1, out.end()));
  if (row <= 0) return std::nullopt;
  CanonTerm term;
  std::vector<CanonTerm::Ref> pieces;
  for (const Run& r : rs) {
    if (r.len % row != 0) return std::nullopt;
    interp::Shape piece = out;
    piece[0] = r.len / row;
    auto base = concreteShape(lg.node(r.src));
    if (!base) return std::nullopt;
    int64_t whole = runs::numel(*base);
    CanonTerm::Ref ref = canon::operand(r.src);
    interp::Shape have = *base;
    if (r.off != 0 || r.len != whole) {
      int64_t baseRow = base->empty() ? 0 : runs::numel(interp::Shape(base->begin() + 1, base->end()));
      if (baseRow > 0 && r.off % baseRow == 0 && r.len % baseRow == 0) {
        ref = canon::emit(term, "slice",
                          {eg::Attr::integer(0), eg::Attr::dim(r.off / baseRow), eg::Attr::dim((r.off + r.len) / baseRow),
                           eg::Attr::integer(1)},
                          {ref});
        have[0] = r.len / baseRow;
      } else {
        return std::nullopt;  // a flat range across rows: no simpler than the chain
      }
    }
    // A piece must keep its base's rows as they are: a flattened base (the
    // all-gathered buffer of flattened shards itself) hides the rows the
    // relations and lemmas speak of, and folding it only moved the split.
    if (have != piece) return std::nullopt;
    pieces.push_back(ref);
  }
  if (pieces.size() >= 2) canon::emit(term, "concat", {eg::Attr::integer(0)}, pieces);
  else if (term.nodes.empty()) return std::nullopt;  // one whole base of the same shape: an alias, left alone
  return term;
}

// The element map of a definition over base tensors (each operand its identity).
std::optional<Runs> mapOfTerm(const LGraph& lg, const CanonTerm& term) {
  std::vector<Runs> local;
  std::vector<interp::Shape> shapes;
  for (const CanonTerm::Node& t : term.nodes) {
    std::vector<Runs> own;
    std::vector<interp::Shape> kidShapes;
    for (const CanonTerm::Ref& r : t.children) {
      if (r.kind == CanonTerm::Ref::Kind::Local) {
        own.push_back(local[static_cast<size_t>(r.local)]);
        kidShapes.push_back(shapes[static_cast<size_t>(r.local)]);
      } else if (r.kind == CanonTerm::Ref::Kind::Operand) {
        auto sh = concreteShape(lg.node(r.operand));
        if (!sh) return std::nullopt;
        Runs id;
        if (int64_t n = runs::numel(*sh); n > 0) id.push_back(Run{r.operand, 0, n});
        own.push_back(std::move(id));
        kidShapes.push_back(*sh);
      } else {
        return std::nullopt;
      }
    }
    std::vector<const Runs*> kids;
    for (const Runs& k : own) kids.push_back(&k);
    auto m = runs::opMap(t.op, t.attrs, kidShapes, kMaxRuns);
    if (!m) return std::nullopt;
    auto c = runs::compose(m->runs, kids, kMaxRuns);
    if (!c) return std::nullopt;
    local.push_back(std::move(*c));
    shapes.push_back(std::move(m->shape));
  }
  if (local.empty()) return std::nullopt;
  return local.back();
}

std::vector<bool> liveNodes(const LGraph& lg) {
  std::vector<bool> live(lg.nodes.size(), false);
  std::vector<int> stack;
  for (size_t i = 0; i < lg.nodes.size(); ++i)
    if (lg.nodes[i].isOutput) stack.push_back(lg.resolve(static_cast<int>(i)));
  while (!stack.empty()) {
    int i = stack.back();
    stack.pop_back();
    if (live[static_cast<size_t>(i)]) continue;
    live[static_cast<size_t>(i)] = true;
    for (int o : lg.nodes[static_cast<size_t>(i)].operands) stack.push_back(lg.resolve(o));
  }
  return live;
}


// ---- Lifting a rearrangement over elementwise ops
//
// FSDP's gradient shard is a view of this rank's slice of a sum over ranks of
// packed buffers (reduce-scatter), scaled before and after, and cast: R(E(x_1,
// ..., x_k)) for a rearrangement R and elementwise ops E. When the pieces R
// reaches through E are, in every x_i, the same elements of same-shaped
// tensors y_i (the packing is the same on every rank), R(E(x_1..x_k)) =
// R'(E(y_1..y_k)) with R' the common map: the shard is a slice of the whole
// reduced gradient, which every rank's shard shares, instead of a slice of a
// sum of slices of concats of flattened pieces.

// Elementwise ops whose tensor children all have the result's shape (checked
// where they are used): a gather of the result is the op of the gathered children.
bool liftableElementwise(eg::Symbol op) {
  const ops::Syms& s = ops::syms();
  return op == s.sum || op == s.add || op == s.sub || op == s.mul || op == s.div || op == s.neg || op == s.cast;
}

bool pushable(const LNode& n) { return !n.isInput && n.aliasOf < 0 && !n.data.tuple && !n.def.nodes.empty(); }

// An identity map of a tensor of `n` elements, src 0.
Runs identityRuns(int64_t n) {
  Runs r;
  if (n > 0) r.push_back(Run{0, 0, n});
  return r;
}

Runs withSrc(Runs r, int src) {
  for (Run& x : r) x.src = src;
  return r;
}

// Shapes of a definition's local nodes, for the gather and elementwise ops; nullopt for others.
std::optional<interp::Shape> refShape(const LGraph& lg, const CanonTerm& def, const CanonTerm::Ref& r, int depth = 0);

std::optional<interp::Shape> localShape(const LGraph& lg, const CanonTerm& def, int l, int depth) {
  if (depth > 64) return std::nullopt;
  const CanonTerm::Node& t = def.nodes[static_cast<size_t>(l)];
  std::vector<interp::Shape> kids;
  for (const CanonTerm::Ref& c : t.children) {
    if (c.kind == CanonTerm::Ref::Kind::Scalar) {
      if (ops::isGatherOp(t.op)) return std::nullopt;
      continue;
    }
    auto s = refShape(lg, def, c, depth + 1);
    if (!s) return std::nullopt;
    kids.push_back(*s);
  }
  if (ops::isGatherOp(t.op)) {
    auto m = runs::opMap(t.op, t.attrs, kids, kMaxRuns);
    if (!m) return std::nullopt;
    return m->shape;
  }
  if (liftableElementwise(t.op)) {
    if (kids.empty()) return std::nullopt;
    for (const interp::Shape& k : kids)
      if (k != kids[0]) return std::nullopt;
    return kids[0];
  }
  return std::nullopt;
}

std::optional<interp::Shape> refShape(const LGraph& lg, const CanonTerm& def, const CanonTerm::Ref& r, int depth) {
  if (r.kind == CanonTerm::Ref::Kind::Operand) return concreteShape(lg.node(lg.resolve(r.operand)));
  if (r.kind == CanonTerm::Ref::Kind::Local) return localShape(lg, def, r.local, depth);
  return std::nullopt;
}

// R (src 0) through a gather node's map: runs whose src is the node's child index.
std::optional<Runs> throughGather(const LGraph& lg, const CanonTerm& def, const CanonTerm::Node& t, const Runs& R) {
  std::vector<interp::Shape> kids;
  for (const CanonTerm::Ref& c : t.children) {
    auto s = refShape(lg, def, c);
    if (!s) return std::nullopt;
    kids.push_back(*s);
  }
  auto m = runs::opMap(t.op, t.attrs, kids, kMaxRuns);
  if (!m) return std::nullopt;
  return runs::compose(R, {&m->runs}, kMaxRuns);
}

bool isIdentityOf(const Runs& R, int64_t n) { return R == identityRuns(n); }

std::string runsText(const Runs& R) {
  std::string s = "{";
  for (const Run& r : R) s += fmt::format("{}:{}+{},", r.src, r.off, r.len);
  return s + "}";
}

// The normal form of R(value) with every rearrangement pushed through the
// liftable elementwise ops to the tensors below them: a text, equal for two
// values only when they are equal element by element (each step is an exact
// identity; where the pushing stops depends only on the tensor and the map
// there). Stops at a tensor R covers whole, or that is neither a gather nor a
// liftable elementwise op. nullopt past the budget or when a step fails.
class NormalForm {
 public:
  explicit NormalForm(const LGraph& lg) : lg_(lg) {}

  std::optional<std::string> ofNode(int o, const Runs& R, int depth) {
    o = lg_.resolve(o);
    const LNode& n = lg_.node(o);
    auto sh = concreteShape(n);
    if (!sh) return std::nullopt;
    if (depth > 0 && (pureRearrangement(n) || !isIdentityOf(R, runs::numel(*sh))) && pushable(n))
      if (auto x = ofLocal(n.def, static_cast<int>(n.def.nodes.size()) - 1, R, depth)) return x;
    return "L" + runsText(withSrc(R, o));
  }

  std::optional<std::string> ofRef(const CanonTerm& def, const CanonTerm::Ref& c, const Runs& R, int depth) {
    if (c.kind == CanonTerm::Ref::Kind::Operand) return ofNode(c.operand, R, depth + 1);
    if (c.kind == CanonTerm::Ref::Kind::Local) return ofLocal(def, c.local, R, depth + 1);
    return std::nullopt;
  }

  std::optional<std::string> ofLocal(const CanonTerm& def, int l, const Runs& R, int depth) {
    if (depth > 200 || ++steps_ > 20000) return std::nullopt;
    const CanonTerm::Node& t = def.nodes[static_cast<size_t>(l)];
    if (ops::isGatherOp(t.op)) {
      auto c = throughGather(lg_, def, t, R);
      if (!c) return std::nullopt;
      // maximal segments of one child each
      std::vector<std::string> parts;
      for (size_t i = 0; i < c->size();) {
        size_t j = i;
        Runs seg;
        while (j < c->size() && (*c)[j].src == (*c)[i].src) seg.push_back((*c)[j++]);
        auto p = ofRef(def, t.children[static_cast<size_t>((*c)[i].src)], withSrc(seg, 0), depth);
        if (!p) return std::nullopt;
        parts.push_back(*p);
        i = j;
      }
      if (parts.size() == 1) return parts[0];
      std::string s = "cat(";
      for (const std::string& p : parts) s += p + ",";
      return s + ")";
    }
    if (!liftableElementwise(t.op)) return std::nullopt;
    auto own = localShape(lg_, def, l, 0);
    if (!own) return std::nullopt;
    std::string s = fmt::format("{}[{}](", eg::symbolName(t.op), eg::toString(t.attrs));
    for (const CanonTerm::Ref& c : t.children) {
      if (c.kind == CanonTerm::Ref::Kind::Scalar) {
        s += fmt::format("c{:a},", c.scalar);
        continue;
      }
      auto cs = refShape(lg_, def, c);
      if (!cs || *cs != *own) return std::nullopt;
      auto p = ofRef(def, c, R, depth);
      if (!p) return std::nullopt;
      s += *p + ",";
    }
    return s + ")";
  }

 private:
  const LGraph& lg_;
  size_t steps_ = 0;
};

// R(value) = R'(E) for a term E over tensors of the result shape `sh`.
struct Lift {
  CanonTerm term;
  CanonTerm::Ref root;
  Runs r;  // src 0
  interp::Shape sh;
  bool viaConcat = false;
  bool viaElementwise = false;
};

CanonTerm::Ref appendTerm(CanonTerm& dst, const CanonTerm& src, CanonTerm::Ref root) {
  int base = static_cast<int>(dst.nodes.size());
  for (CanonTerm::Node n : src.nodes) {
    for (CanonTerm::Ref& c : n.children)
      if (c.kind == CanonTerm::Ref::Kind::Local) c.local += base;
    dst.nodes.push_back(std::move(n));
  }
  if (root.kind == CanonTerm::Ref::Kind::Local) root.local += base;
  return root;
}

class Lifter {
 public:
  // `out`: the shape of the tensor lifted, whose rows a leaf's rows must be.
  Lifter(const LGraph& lg, const interp::Shape& out) : lg_(lg), row_(out.empty() ? out : interp::Shape(out.begin() + 1, out.end())) {}

  Lift leaf(int o, const Runs& R, const interp::Shape& sh) {
    Lift l;
    l.root = canon::operand(o);
    l.r = R;
    l.sh = sh;
    return l;
  }

  // Through a tensor: into its definition unless R covers it whole (nothing to gain) or that fails.
  // `below`: a concat of two or more pieces was passed on the way here.
  std::optional<Lift> ofNode(int o, const Runs& R, int depth, bool below) {
    o = lg_.resolve(o);
    const LNode& n = lg_.node(o);
    auto sh = concreteShape(n);
    if (!sh) return std::nullopt;
    // Past the concat, the first tensor whose rows the map takes, rows of the result's shape:
    // what the rows of cast(sum(...)) computes stays a tensor of its own (a gradient, a cast).
    if (below && !sh->empty() && interp::Shape(sh->begin() + 1, sh->end()) == row_ && rowAligned(R, *sh))
      return leaf(o, R, *sh);
    // Deeper only while the map stays blocks of rows (the form rowsOf takes)
    // or was not that here: a transpose below would make it one run per element.
    if ((pureRearrangement(n) || !isIdentityOf(R, runs::numel(*sh))) && pushable(n))
      if (auto x = ofLocal(o, n.def, static_cast<int>(n.def.nodes.size()) - 1, R, depth + 1, below))
        if (rowAligned(x->r, x->sh) || !rowAligned(R, *sh)) return x;
    return leaf(o, R, *sh);
  }

  static bool rowAligned(const Runs& R, const interp::Shape& sh) {
    if (sh.empty()) return false;
    int64_t row = runs::numel(interp::Shape(sh.begin() + 1, sh.end()));
    if (row <= 0) return false;
    for (const Run& r : R)
      if (r.off % row != 0 || r.len % row != 0) return false;
    return true;
  }

  std::optional<Lift> ofRef(int self, const CanonTerm& def, const CanonTerm::Ref& c, const Runs& R, int depth,
                            bool below) {
    if (c.kind == CanonTerm::Ref::Kind::Operand) return ofNode(c.operand, R, depth, below);
    if (c.kind == CanonTerm::Ref::Kind::Local) return ofLocal(self, def, c.local, R, depth + 1, below);
    return std::nullopt;
  }

  // Local `l` of `def`, the definition of tensor `self` (-1: the tensor lifted, whose own it is).
  std::optional<Lift> ofLocal(int self, const CanonTerm& def, int l, const Runs& R, int depth, bool below) {
    if (depth > 200 || ++steps_ > 20000) return std::nullopt;
    const CanonTerm::Node& t = def.nodes[static_cast<size_t>(l)];
    if (ops::isGatherOp(t.op)) {
      auto c = throughGather(lg_, def, t, R);
      if (!c || c->empty()) return std::nullopt;
      for (const Run& x : *c)
        if (x.src != c->front().src) return std::nullopt;  // pieces of two children: no one E below
      bool cat = t.op == ops::syms().concat && t.children.size() >= 2;
      auto out = ofRef(self, def, t.children[static_cast<size_t>(c->front().src)], withSrc(*c, 0), depth, below || cat);
      if (out && cat) out->viaConcat = true;
      return out;
    }
    if (!liftableElementwise(t.op)) return std::nullopt;
    auto own = localShape(lg_, def, l, 0);
    if (!own) return std::nullopt;
    std::vector<std::optional<Lift>> kids;
    bool agree = true;
    int first = -1;
    for (const CanonTerm::Ref& c : t.children) {
      if (c.kind == CanonTerm::Ref::Kind::Scalar) {
        kids.emplace_back();
        continue;
      }
      auto cs = refShape(lg_, def, c);
      if (!cs || *cs != *own) return std::nullopt;
      kids.push_back(ofRef(self, def, c, R, depth, below));
      if (!kids.back()) return std::nullopt;
      if (first < 0) first = static_cast<int>(kids.size()) - 1;
      else if (kids.back()->r != kids[static_cast<size_t>(first)]->r || kids.back()->sh != kids[static_cast<size_t>(first)]->sh)
        agree = false;
    }
    if (first < 0) return std::nullopt;
    if (!agree) {
      // the children themselves, under R, when they are tensors
      for (size_t i = 0; i < t.children.size(); ++i) {
        const CanonTerm::Ref& c = t.children[i];
        if (c.kind == CanonTerm::Ref::Kind::Scalar) continue;
        if (c.kind != CanonTerm::Ref::Kind::Operand) return std::nullopt;
        kids[i] = leaf(lg_.resolve(c.operand), R, *own);
      }
    }
    Lift out;
    CanonTerm::Node node{t.op, t.attrs, {}, t.inlinedFrom >= 0 ? t.inlinedFrom : (l == static_cast<int>(def.nodes.size()) - 1 ? self : -1)};
    for (size_t i = 0; i < t.children.size(); ++i) {
      if (!kids[i]) {
        node.children.push_back(t.children[i]);
        continue;
      }
      node.children.push_back(appendTerm(out.term, kids[i]->term, kids[i]->root));
      out.viaConcat = out.viaConcat || kids[i]->viaConcat;
      out.r = kids[i]->r;
      out.sh = kids[i]->sh;
    }
    out.term.nodes.push_back(std::move(node));
    out.root = CanonTerm::Ref{CanonTerm::Ref::Kind::Local, -1, static_cast<int>(out.term.nodes.size()) - 1, 0};
    out.viaElementwise = true;
    return out;
  }

 private:
  const LGraph& lg_;
  interp::Shape row_;
  size_t steps_ = 0;
};

// A rearrangement of `base` (of shape `from`) with element map `rs` (src 0)
// into shape `out`: the concat along dim 0 of blocks of base's dim-0 rows,
// each of the shape it has in `out`, or base itself (reshaped) when rs is the
// identity. nullopt otherwise.
std::optional<CanonTerm::Ref> rowsOf(CanonTerm& term, CanonTerm::Ref base, const interp::Shape& from, const Runs& rs,
                                     const interp::Shape& out) {
  if (isIdentityOf(rs, runs::numel(from)) && runs::numel(from) == runs::numel(out)) {
    if (from == out) return base;
    return canon::emit(term, "reshape", {eg::Attr::ints(std::vector<int64_t>(out.begin(), out.end()))}, {base});
  }
  if (out.empty() || from.empty() || rs.empty() || rs.size() > kMaxPieces) return std::nullopt;
  int64_t row = runs::numel(interp::Shape(out.begin() + 1, out.end()));
  int64_t baseRow = runs::numel(interp::Shape(from.begin() + 1, from.end()));
  if (row <= 0 || baseRow <= 0) return std::nullopt;
  std::vector<CanonTerm::Ref> pieces;
  for (const Run& r : rs) {
    if (r.len % row != 0 || r.off % baseRow != 0 || r.len % baseRow != 0) return std::nullopt;
    interp::Shape piece = out, have = from;
    piece[0] = r.len / row;
    have[0] = r.len / baseRow;
    if (have != piece) return std::nullopt;
    pieces.push_back(canon::emit(term, "slice",
                                 {eg::Attr::integer(0), eg::Attr::dim(r.off / baseRow),
                                  eg::Attr::dim((r.off + r.len) / baseRow), eg::Attr::integer(1)},
                                 {base}));
  }
  if (pieces.size() == 1) return pieces[0];
  return canon::emit(term, "concat", {eg::Attr::integer(0)}, pieces);
}

// Which of a concat of two or more pieces (1) and a liftable elementwise op (2) the definitions
// the Lifter could pass through from node i hold: its own, and those of the operands whose
// definitions are only gather and liftable elementwise ops, transitively. A lift needs both; this
// structural pass over-approximates the Lifter's walk, so that no element map is computed for the
// many rearrangements that cannot lift (all of a transformer's views and transposes).
class LiftReach {
 public:
  explicit LiftReach(const LGraph& lg) : lg_(lg), memo_(lg.nodes.size(), kUnknown) {}
  bool mayLift(int i) { return of(lg_.resolve(i), 0) == (kConcat | kElementwise); }

 private:
  static constexpr uint8_t kConcat = 1, kElementwise = 2, kVisiting = 4, kUnknown = 8;
  uint8_t of(int i, int depth) {
    uint8_t& m = memo_[static_cast<size_t>(i)];
    if (m == kVisiting || depth > 200) return kConcat | kElementwise;  // give up: assume it may
    if (m != kUnknown) return m;
    const LNode& n = lg_.node(i);
    uint8_t flags = 0;
    bool through = !n.def.nodes.empty() && !n.isInput && n.aliasOf < 0;
    for (const CanonTerm::Node& t : n.def.nodes) {
      if (t.op == ops::syms().concat && t.children.size() >= 2) flags |= kConcat;
      else if (liftableElementwise(t.op)) flags |= kElementwise;
      else if (!ops::isGatherOp(t.op)) through = false;
    }
    if (!through) return m = 0;
    m = kVisiting;
    for (int o : n.operands) flags |= of(lg_.resolve(o), depth + 1);
    return m = flags;
  }
  const LGraph& lg_;
  std::vector<uint8_t> memo_;
};

// The lifted definition of chain end `i`, checked against its own by their normal forms.
std::optional<CanonTerm> liftedDefinition(const LGraph& lg, int i) {
  const LNode& n = lg.node(i);
  auto shape = concreteShape(n);
  if (!shape || runs::numel(*shape) <= 0 || !pushable(n)) return std::nullopt;
  Runs id = identityRuns(runs::numel(*shape));
  Lifter lifter(lg, *shape);
  auto l = lifter.ofLocal(-1, n.def, static_cast<int>(n.def.nodes.size()) - 1, id, 0, false);
  if (!l || !l->viaConcat || !l->viaElementwise) return std::nullopt;
  CanonTerm term;
  CanonTerm::Ref root = appendTerm(term, l->term, l->root);
  auto top = rowsOf(term, root, l->sh, l->r, *shape);
  if (!top || term.nodes.empty() || top->kind != CanonTerm::Ref::Kind::Local ||
      top->local != static_cast<int>(term.nodes.size()) - 1)
    return std::nullopt;
  // The new definition has the tensor's shape, and computes every element as the old one does.
  if (localShape(lg, term, static_cast<int>(term.nodes.size()) - 1, 0) != *shape) return std::nullopt;
  NormalForm nfOld(lg), nfNew(lg);
  auto before = nfOld.ofLocal(n.def, static_cast<int>(n.def.nodes.size()) - 1, id, 0);
  auto after = nfNew.ofLocal(term, static_cast<int>(term.nodes.size()) - 1, id, 0);
  if (!before || !after || *before != *after) return std::nullopt;
  return term;
}

}  // namespace

int foldRearrangements(LGraph& lg) {
  static const bool trace = std::getenv("TANGLE_TRACE_FOLD") != nullptr;
  std::vector<bool> candidate = concatChains(lg);
  // A candidate's readers that are rearrangements are candidates too: one
  // that none reads is the end of its chain.
  std::vector<bool> chainEnd = candidate;
  for (size_t i = 0; i < lg.nodes.size(); ++i)
    if (candidate[i])
      for (int o : lg.nodes[i].operands) chainEnd[static_cast<size_t>(lg.resolve(o))] = false;
  Folder folder(lg, chainEnd);
  std::vector<std::pair<int, CanonTerm>> rewrites;
  for (size_t i = 0; i < lg.nodes.size(); ++i) {
    const LNode& n = lg.nodes[i];
    if (!candidate[i]) continue;
    const std::optional<Folded>& f = folder.of(static_cast<int>(i));
    auto shape = concreteShape(n);
    if (!f || !f->viaConcat || !shape) continue;
    auto term = concatOfPieces(lg, f->runs, *shape);
    if (!term) continue;
    // Only a definition over other tensors than the node reads now is a fold.
    std::vector<int> now = n.operands, next;
    for (const auto& tn : term->nodes)
      for (const auto& r : tn.children)
        if (r.kind == CanonTerm::Ref::Kind::Operand) next.push_back(r.operand);
    std::sort(now.begin(), now.end());
    std::sort(next.begin(), next.end());
    next.erase(std::unique(next.begin(), next.end()), next.end());
    if (now == next) continue;
    // The new definition must move every element exactly as the chain does.
    auto check = mapOfTerm(lg, *term);
    if (!check || *check != f->runs) continue;
    if (trace) fmt::print(stderr, "fold: {} now reads {} tensors (was {})\n", n.name, next.size(), now.size());
    rewrites.emplace_back(static_cast<int>(i), std::move(*term));
  }
  // Live tensors before any rewrite (a full walk of the graph: only when something is rewritten).
  std::vector<bool> liveBefore;
  if (!rewrites.empty()) liveBefore = liveNodes(lg);
  std::vector<bool> folded(lg.nodes.size(), false);
  for (auto& [i, term] : rewrites) {
    lg.nodes[static_cast<size_t>(i)].def = std::move(term);
    folded[static_cast<size_t>(i)] = true;
  }
  if (!rewrites.empty()) reindexOperands(lg);
  int count = static_cast<int>(rewrites.size());
  // Second: rearrangements that end a chain (no rearrangement reads them),
  // lifted over the elementwise ops below them (Lifter).
  std::vector<bool> pure(lg.nodes.size()), end(lg.nodes.size());
  for (size_t i = 0; i < lg.nodes.size(); ++i) {
    pure[i] = pureRearrangement(lg.nodes[i]);
    end[i] = pure[i] && !folded[i];
  }
  for (size_t i = 0; i < lg.nodes.size(); ++i)
    if (pure[i])
      for (int o : lg.nodes[i].operands) end[static_cast<size_t>(lg.resolve(o))] = false;
  std::vector<std::pair<int, CanonTerm>> lifts;
  LiftReach reach(lg);
  for (size_t i = 0; i < lg.nodes.size(); ++i) {
    if (!end[i] || !reach.mayLift(static_cast<int>(i))) continue;
    auto term = liftedDefinition(lg, static_cast<int>(i));
    if (!term) continue;
    if (trace) {
      std::string reads;
      for (const auto& tn : term->nodes)
        for (const auto& r : tn.children)
          if (r.kind == CanonTerm::Ref::Kind::Operand) reads += " " + lg.node(r.operand).name;
      fmt::print(stderr, "fold: {} lifted over elementwise ops ({} term nodes) reads{}\n", lg.nodes[i].name,
                 term->nodes.size(), reads);
    }
    lifts.emplace_back(static_cast<int>(i), std::move(*term));
  }
  if (!lifts.empty() && liveBefore.empty()) liveBefore = liveNodes(lg);  // nothing folded: the graph as it was
  for (auto& [i, term] : lifts) lg.nodes[static_cast<size_t>(i)].def = std::move(term);
  if (!lifts.empty()) reindexOperands(lg);
  count += static_cast<int>(lifts.size());
  if (count == 0) return 0;
  // Tensors only the folded chains read: out of every users list, so the
  // search does not explore them (they compute nothing an output needs).
  std::vector<bool> liveAfter = liveNodes(lg);
  for (auto& us : lg.users)
    us.erase(std::remove_if(us.begin(), us.end(),
                            [&](int u) { return liveBefore[static_cast<size_t>(u)] && !liveAfter[static_cast<size_t>(u)]; }),
             us.end());
  return count;
}

}  // namespace tangle
