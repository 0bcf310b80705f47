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
  if (rewrites.empty()) return 0;
  std::vector<bool> liveBefore = liveNodes(lg);
  for (auto& [i, term] : rewrites) lg.nodes[static_cast<size_t>(i)].def = std::move(term);
  reindexOperands(lg);
  // Tensors only the folded chains read: out of every users list, so the
  // search does not explore them (they compute nothing an output needs).
  std::vector<bool> liveAfter = liveNodes(lg);
  for (auto& us : lg.users)
    us.erase(std::remove_if(us.begin(), us.end(),
                            [&](int u) { return liveBefore[static_cast<size_t>(u)] && !liveAfter[static_cast<size_t>(u)]; }),
             us.end());
  return static_cast<int>(rewrites.size());
}

}  // namespace tangle
