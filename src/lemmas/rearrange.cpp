// Clean algebra: slice, concat, transpose, permute, reshape.
#include <algorithm>
#include <map>

#include "lemmas/lemma_util.h"
#include "sym/context.h"

namespace tangle::lemmas::detail {

namespace {

int64_t attrI(const Subst& s, const char* v) { return s.integer(v); }
const std::vector<int64_t>* attrL(const Subst& s, const char* v) {
  const Attr& a = s.attr(v);
  return a.kind == Attr::Kind::IntList ? &a.list : nullptr;
}
bool isIdentity(const std::vector<int64_t>& p) {
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] != static_cast<int64_t>(i)) return false;
  return true;
}
// (permute[p] (permute[q] x)) = permute[r] x with r[i] = q[p[i]].
std::optional<std::vector<int64_t>> compose(const std::vector<int64_t>& outer, const std::vector<int64_t>& inner) {
  if (outer.size() != inner.size()) return std::nullopt;
  std::vector<int64_t> r(outer.size());
  for (size_t i = 0; i < outer.size(); ++i) {
    if (outer[i] < 0 || outer[i] >= static_cast<int64_t>(inner.size())) return std::nullopt;
    r[i] = inner[outer[i]];
  }
  return r;
}
std::optional<Id> permuteOrSelf(EGraph& g, Id x, const std::vector<int64_t>& r) {
  if (isIdentity(r)) return g.find(x);
  return make(g, op().permute, {Attr::ints(r)}, {x});
}
// Position of dim d after permute[p]: the j with p[j] == d.
std::optional<int64_t> permutedDim(const std::vector<int64_t>& p, int64_t d) {
  auto it = std::find(p.begin(), p.end(), d);
  if (it == p.end()) return std::nullopt;
  return it - p.begin();
}
int64_t transposedDim(int64_t a, int64_t b, int64_t d) { return d == a ? b : d == b ? a : d; }

// With symbolic sizes or bounds: only bounds that are piece boundaries,
// slice[d, off_i, off_j](concat[d](x1..xn)) = concat[d](x_i+1..x_j).
std::optional<Id> sliceOfConcatAtBoundaries(EGraph& g, const std::vector<Id>& xs, int64_t d, Dim s, Dim e) {
  auto sizes = dimsAlong(g, xs, d);
  if (!sizes) return std::nullopt;
  std::optional<size_t> first, last;
  Dim off = 0;
  for (size_t i = 0; i <= xs.size(); ++i) {
    if (!first && sym::dimEqual(g.symbols(), off, s)) first = i;
    if (first && sym::dimEqual(g.symbols(), off, e)) last = i;
    if (i < xs.size()) off = *sym::dimAdd(g.symbols(), off, (*sizes)[i]);
  }
  if (!first || !last || *last <= *first) return std::nullopt;
  return makeConcat(g, d, std::vector<Id>(xs.begin() + *first, xs.begin() + *last));
}

// slice[d, s, e, 1](concat[d](x1..xn)) = the overlapped parts of the pieces.
std::optional<Id> sliceOfConcat(EGraph& g, const Match& m) {
  const auto& xs = m.subst.list("xs");
  int64_t d = attrI(m.subst, "d");
  Dim s = m.subst.dim("s"), e = m.subst.dim("e");
  auto sizes = sizesAlong(g, xs, d);
  if (!sizes || isSymbolic(s) || isSymbolic(e)) return sliceOfConcatAtBoundaries(g, xs, d, s, e);
  if (s >= e) return std::nullopt;
  std::vector<Id> parts;
  int64_t off = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    int64_t len = (*sizes)[i];
    int64_t lo = std::max(s, off), hi = std::min(e, off + len);
    if (lo < hi) {
      auto p = makeSlice(g, xs[i], d, lo - off, hi - off);
      if (!p) return std::nullopt;
      parts.push_back(*p);
    }
    off += len;
  }
  if (e > off) return std::nullopt;  // cannot happen for a well-typed slice
  return makeConcat(g, d, parts);
}

// concat[d](.., concat[d](ys..), ..) = concat[d](.., ys.., ..)
std::optional<Id> flattenConcat(EGraph& g, const Match& m) {
  int64_t d = attrI(m.subst, "d");
  auto out = spliceNested(g, m.subst.list("xs"), op().concat, d);
  if (!out) return std::nullopt;
  return makeConcat(g, d, *out);
}

// concat[d](.., x, ..) = concat[d](..) without x when x is empty along d (a
// concrete size 0): it contributes no element. FSDP gives a rank an empty
// shard when a parameter has fewer rows than there are ranks.
std::optional<Id> dropEmptyPieces(EGraph& g, const Match& m) {
  int64_t d = attrI(m.subst, "d");
  const auto& xs = m.subst.list("xs");
  std::vector<Id> kept;
  for (Id x : xs) {
    const TensorType* t = typeOf(g, x);
    if (!t) return std::nullopt;
    int64_t r = static_cast<int64_t>(t->shape.size()), dd = d < 0 ? d + r : d;
    if (dd < 0 || dd >= r) return std::nullopt;
    Dim n = t->shape[static_cast<size_t>(dd)];
    if (!isSymbolic(n) && n == 0) continue;
    kept.push_back(x);
  }
  if (kept.size() == xs.size() || kept.empty()) return std::nullopt;
  return makeConcat(g, d, kept);
}

// Class c holds an implementation tensor (a clean leaf).
bool holdsImplTensor(const EGraph& g, Id c) {
  for (const ENode* n : nodesOf(g, c, op().tensor))
    if (ops::isCleanNode(*n)) return true;
  return false;
}

// concat[d](.., x_i, .., x_j, ..) = concat[d](.., y, ..) for an existing
// y = concat[d](x_i..x_j) that is an implementation tensor (a proper run of
// at least two pieces; the longest run from each position, left to right).
// Only such groups: regrouping into any existing concat fed slice-concat a
// new split of every concat (a Llama TP check's e-graph grew 6x). concat-flatten's converse, for the
// grouping the extraction needs: a spec gradient found as the concat of every
// expert's piece is the concat of the ranks' returned gradients, each of which
// is the concat of its own experts' pieces.
std::optional<Id> regroupConcat(EGraph& g, const Match& m) {
  int64_t d = attrI(m.subst, "d");
  const auto& xs = m.subst.list("xs");
  if (xs.size() < 3) return std::nullopt;
  eg::AttrsId attrs = eg::internAttrs({Attr::integer(d)});
  std::vector<Id> out;
  bool changed = false;
  // The lengths of the concat[d] nodes that have x_i's class as a child: a node
  // concat[d](x_i..x_j) is among them, so the other runs need no lookup (a lookup hashes and
  // copies its run: over n pieces, n^3 work per match).
  std::vector<char> runLengths;
  for (size_t i = 0; i < xs.size();) {
    size_t best = i + 1;
    std::optional<Id> group;
    bool filtered = xs.size() - i > 4;
    if (filtered) {
      runLengths.assign(xs.size() + 1, 0);
      for (const auto& [parent, cls] : g.eclass(xs[i]).parents)
        if (parent.op == op().concat && parent.attrs == attrs && parent.children.size() <= xs.size())
          runLengths[parent.children.size()] = 1;
    }
    for (size_t j = xs.size() - (i == 0 ? 1 : 0); j >= i + 2; --j) {
      if (filtered && !runLengths[j - i]) continue;
      auto y = g.lookup(ENode{op().concat, attrs, std::vector<Id>(xs.begin() + i, xs.begin() + j)});
      if (y && holdsImplTensor(g, *y)) {
        group = y;
        best = j;
        break;
      }
    }
    out.push_back(group ? *group : xs[i]);
    changed = changed || group.has_value();
    i = best;
  }
  if (!changed) return std::nullopt;
  return makeConcat(g, d, out);
}

// A splat of a constant (zeros padding a gradient: slice_backward) cut along
// `dim` into pieces of `sizes`: a splat of c of the piece's shape and c's dtype each (makeSplat).
// Only concrete shapes.
std::optional<std::vector<Id>> splatPieces(EGraph& g, Id c, int64_t dim, const std::vector<Dim>& sizes) {
  const eg::ClassData& data = g.data(c);
  const TensorType* t = data.tensor();
  if (!data.constant || !t || dim < 0 || dim >= t->rank()) return std::nullopt;
  TensorType pieceType = *t;
  std::vector<Id> out;
  int64_t total = 0;
  for (Dim len : sizes) {
    if (isSymbolic(len)) return std::nullopt;
    pieceType.shape[static_cast<size_t>(dim)] = len;
    total += len;
    auto piece = makeSplat(g, pieceType, *data.constant);
    if (!piece) return std::nullopt;
    out.push_back(*piece);
  }
  if (total != t->shape[static_cast<size_t>(dim)]) return std::nullopt;
  return out;
}

// concat[d](concat[e](a1..ak), concat[e](b1..bk), ..), e != d, the inner
// concats split alike along e = concat[e](concat[d](a1, b1, ..), .., concat[d](ak, bk, ..)):
// a block matrix read by rows or by columns (heads sharded over ranks, then
// halves of each head concatenated, as rotate_half does on every rank).
// A constant splat among the blocks is cut alike (the zeros slice_backward puts
// around a row-sharded gradient); the split is taken from the first block, or
// from the first non-splat block when only splats precede it.
std::optional<Id> concatInterchange(EGraph& g, const Match& m) {
  int64_t d = attrI(m.subst, "d");
  const auto& xs = m.subst.list("xs");
  if (xs.size() < 2) return std::nullopt;
  auto isSplat = [&](Id c) { return g.data(c).constant.has_value() && g.data(c).tensor(); };
  for (size_t t = 0; t < xs.size(); ++t) {
    if (t > 0 && !isSplat(xs[t - 1])) break;
    for (const ENode* first : nodesOf(g, xs[t], op().concat)) {
      auto e = ops::attrInt(attrsOf(*first), 0);
      if (!e || *e == d || first->children.size() < 2) continue;
      auto sizes = dimsAlong(g, first->children, *e);
      if (!sizes) continue;
      std::vector<std::vector<Id>> rows;
      for (size_t j = 0; j < xs.size(); ++j) {
        auto pieces = j == t ? std::optional<std::vector<Id>>(first->children)
                             : piecesOf(g, xs[j], *e, *sizes, /*allowSlices=*/false);
        if (!pieces && isSplat(xs[j])) pieces = splatPieces(g, xs[j], *e, *sizes);
        if (!pieces) break;
        rows.push_back(*pieces);
      }
      if (rows.size() != xs.size()) continue;
      std::vector<Id> cols;
      for (size_t i = 0; i < sizes->size(); ++i) {
        std::vector<Id> col;
        for (const auto& row : rows) col.push_back(row[i]);
        auto c = makeConcat(g, d, col);
        if (!c) return std::nullopt;
        cols.push_back(*c);
      }
      return makeConcat(g, *e, cols);
    }
  }
  return std::nullopt;
}

// A slice[d, s, e, 1] node of class c, as (source, start, end).
struct SliceOf {
  Id src;
  int64_t start, end;
};
std::vector<SliceOf> slicesIn(const EGraph& g, Id c, int64_t d) {
  std::vector<SliceOf> out;
  for (const ENode* n : nodesOf(g, c, op().slice)) {
    const AttrList& a = attrsOf(*n);
    if (ops::attrInt(a, 0) != d || ops::attrInt(a, 3) != 1) continue;
    out.push_back({g.find(n->children[0]), *ops::attrDim(a, 1), *ops::attrDim(a, 2)});
  }
  return out;
}

// concat[d](.., slice[d,a,b] x, slice[d,b,c] x, ..) = concat[d](.., slice[d,a,c] x, ..)
std::optional<Id> mergeAdjacentSlices(EGraph& g, const Match& m) {
  int64_t d = attrI(m.subst, "d");
  const auto& xs = m.subst.list("xs");
  for (size_t i = 0; i + 1 < xs.size(); ++i) {
    for (const SliceOf& first : slicesIn(g, xs[i], d)) {
      int64_t hi = first.end;
      size_t j = i + 1;
      for (; j < xs.size(); ++j) {
        bool extended = false;
        for (const SliceOf& next : slicesIn(g, xs[j], d))
          if (next.src == first.src && next.start == hi) {
            hi = next.end;
            extended = true;
            break;
          }
        if (!extended) break;
      }
      if (j == i + 1) continue;
      auto merged = makeSlice(g, first.src, d, first.start, hi);
      if (!merged) return std::nullopt;
      std::vector<Id> out(xs.begin(), xs.begin() + i);
      out.push_back(*merged);
      out.insert(out.end(), xs.begin() + j, xs.end());
      return makeConcat(g, d, out);
    }
  }
  return std::nullopt;
}

// Constrained: existing slices slice[d, 0, a] x, slice[d, a, b] x, ...,
// slice[d, z, size] x tile x => x = concat[d](those slices). Only the concat
// is new. It merges into x's class itself (the match is rooted at one of the
// slices, not at x) and so returns nullopt to the runner.
std::optional<Id> slicesTileWhole(EGraph& g, const Match& m) {
  Id x = g.find(m.subst.cls("x"));
  int64_t d = attrI(m.subst, "d");
  auto size = dimOf(g, x, d);
  if (!size || sym::dimEqual(g.symbols(), m.subst.dim("e"), *size)) return std::nullopt;
  // Bounds are Dims: equal ids are equal values, so chaining by id is exact.
  std::map<Dim, std::vector<std::pair<Dim, Id>>> byStart;  // start -> (end, slice class)
  for (const auto& [n, cls] : g.eclass(x).parents) {
    if (n.op != op().slice || n.children.size() != 1 || g.find(n.children[0]) != x) continue;
    const AttrList& a = attrsOf(n);
    auto dim = ops::attrInt(a, 0), s = ops::attrDim(a, 1), e = ops::attrDim(a, 2), st = ops::attrInt(a, 3);
    if (dim != d || st != 1 || !s || !e || *s == *e) continue;
    auto& v = byStart[*s];
    Id c = g.find(cls);
    if (std::find(v.begin(), v.end(), std::make_pair(*e, c)) == v.end()) v.emplace_back(*e, c);
  }
  // Depth-first search for a chain 0 -> size (bounded).
  std::vector<Id> chain;
  size_t budget = 256;
  std::function<bool(Dim)> dfs = [&](Dim at) -> bool {
    if (sym::dimEqual(g.symbols(), at, *size)) return chain.size() >= 2;
    if (budget-- == 0 || chain.size() >= 64) return false;
    auto it = byStart.find(at);
    if (it == byStart.end()) return false;
    for (const auto& [end, cls] : it->second) {
      if (!isSymbolic(end) && !isSymbolic(*size) && end > *size) continue;
      chain.push_back(cls);
      if (dfs(end)) return true;
      chain.pop_back();
    }
    return false;
  };
  if (!dfs(0)) return std::nullopt;
  auto whole = makeConcat(g, d, chain);
  if (whole) g.merge(*whole, x);
  return std::nullopt;
}

// reshape[O](concat[d](xs)) = concat[d'](reshape[O_i] x_i) when the concat
// pieces stay contiguous blocks of the output: equal leading products
// L = prod(I[:d]) = prod(O[:d']) and every piece boundary, in elements of the
// trailing block T = prod(I[d+1:]), a multiple of T' = prod(O[d'+1:]).
std::optional<Id> reshapeOfConcat(EGraph& g, const Match& m) {
  const auto& xs = m.subst.list("xs");
  int64_t d = attrI(m.subst, "d");
  const std::vector<int64_t>* out = attrL(m.subst, "s");
  const TensorType* first = typeOf(g, xs[0]);
  auto sizes = sizesAlong(g, xs, d);
  if (!out || !first || !sizes) return std::nullopt;
  Shape in = first->shape;
  in[d] = 0;
  for (int64_t s : *sizes) in[d] += s;
  // The leading dims may be symbolic (a token count): L and Lo are compared
  // by proof; the block arithmetic needs the dims from d (dd) on concrete.
  auto leading = [](const Shape& s, size_t to) {
    sym::ExprId p = sym::constant(1);
    for (size_t i = 0; i < to; ++i) p = sym::mul(p, sym::fromDim(s[i]));
    return p;
  };
  sym::ExprId L = leading(in, d);
  auto T = ops::product(in, d + 1, in.size());
  if (!T || *T <= 0) return std::nullopt;
  for (size_t dd = 0; dd < out->size(); ++dd) {
    auto To = ops::product(*out, dd + 1, out->size());
    if (!To || *To <= 0 || isSymbolic((*out)[dd])) continue;
    if ((*out)[dd] * *To != in[d] * *T) continue;
    if (!g.symbols().proveEqual(leading(*out, dd), L)) continue;
    bool aligned = true;
    int64_t off = 0;
    for (int64_t len : *sizes) {
      aligned = aligned && (off * *T) % *To == 0 && (len * *T) % *To == 0;
      off += len;
    }
    if (!aligned) continue;
    std::vector<Id> parts;
    for (size_t i = 0; i < xs.size(); ++i) {
      std::vector<int64_t> shape = *out;
      shape[dd] = (*sizes)[i] * *T / *To;
      auto p = make(g, op().reshape, {Attr::ints(shape)}, {xs[i]});
      if (!p) return std::nullopt;
      parts.push_back(*p);
    }
    return makeConcat(g, static_cast<int64_t>(dd), parts);
  }
  return std::nullopt;
}

// slice[d, s, e, 1](expand[S](y)) = expand[S'](y'), S' = S with e - s at d:
// y' = y when y has no dim at d or size 1 there (the slice only narrows the
// broadcast), else y' = slice[d - lead, s, e, 1](y).
std::optional<Id> sliceOfExpand(EGraph& g, const Match& m) {
  int64_t d = attrI(m.subst, "d");
  auto s = ops::attrInt({m.subst.attr("s")}, 0), e = ops::attrInt({m.subst.attr("e")}, 0);
  const std::vector<int64_t>* shape = attrL(m.subst, "S");
  Id y = m.subst.cls("y");
  const TensorType* yt = typeOf(g, y);
  if (!s || !e || !shape || !yt || *s >= *e || d < 0 || d >= static_cast<int64_t>(shape->size())) return std::nullopt;
  int64_t lead = static_cast<int64_t>(shape->size()) - yt->rank();
  std::vector<int64_t> narrowed = *shape;
  narrowed[static_cast<size_t>(d)] = *e - *s;
  Id src = y;
  if (d >= lead && yt->shape[static_cast<size_t>(d - lead)] != 1) {
    auto sliced = makeSlice(g, y, d - lead, *s, *e);
    if (!sliced) return std::nullopt;
    src = *sliced;
  }
  return make(g, op().expand, {Attr::ints(narrowed)}, {src});
}

// expand[S](concat[d](xs)) = concat[d + lead](expand[S_i](x_i)) when the
// concat dim is not broadcast (the pieces' sizes add up to S there).
std::optional<Id> expandOfConcat(EGraph& g, const Match& m) {
  int64_t d = attrI(m.subst, "d");
  const std::vector<int64_t>* shape = attrL(m.subst, "S");
  const auto& xs = m.subst.list("xs");
  const TensorType* x0 = typeOf(g, xs[0]);
  auto sizes = sizesAlong(g, xs, d);
  if (!shape || !x0 || !sizes || !ops::allConcrete(*shape)) return std::nullopt;
  int64_t lead = static_cast<int64_t>(shape->size()) - x0->rank(), D = d + lead;
  if (lead < 0 || D < 0 || D >= static_cast<int64_t>(shape->size())) return std::nullopt;
  int64_t total = 0;
  for (int64_t n : *sizes) total += n;
  if (total != (*shape)[static_cast<size_t>(D)]) return std::nullopt;
  auto parts = mapPieces(xs, [&](Id x) -> std::optional<Id> {
    std::vector<int64_t> si = *shape;
    si[static_cast<size_t>(D)] = *sizeOf(g, x, d);
    return make(g, op().expand, {Attr::ints(si)}, {x});
  });
  if (!parts) return std::nullopt;
  return makeConcat(g, D, *parts);
}

// Constrained: expand[S](y) = concat[d](k copies of expand[S'](y)) for an
// existing expand[S'](y) whose shape differs from S only at a dim d that y
// broadcasts, with S[d] = k * S'[d] (a replicated value split the way a
// rank's narrower copy is). Only the concat is new.
std::optional<Id> expandAsTiles(EGraph& g, const Match& m) {
  const std::vector<int64_t>* shape = attrL(m.subst, "S");
  Id y = g.find(m.subst.cls("y"));
  const TensorType* yt = typeOf(g, y);
  if (!shape || !yt || !ops::allConcrete(*shape)) return std::nullopt;
  int64_t lead = static_cast<int64_t>(shape->size()) - yt->rank();
  for (const auto& [n, cls] : g.eclass(y).parents) {
    if (n.op != op().expand || n.children.size() != 1 || g.find(n.children[0]) != y) continue;
    const std::vector<int64_t>* narrow = ops::attrInts(attrsOf(n), 0);
    if (!narrow || narrow->size() != shape->size() || *narrow == *shape) continue;
    int64_t d = -1, differing = 0;
    for (size_t i = 0; i < shape->size(); ++i)
      if ((*narrow)[i] != (*shape)[i]) d = static_cast<int64_t>(i), ++differing;
    if (differing != 1 || (d >= lead && yt->shape[static_cast<size_t>(d - lead)] != 1)) continue;
    int64_t part = (*narrow)[static_cast<size_t>(d)], whole = (*shape)[static_cast<size_t>(d)];
    if (part <= 0 || whole % part != 0 || whole / part < 2 || whole / part > 64) continue;
    return makeConcat(g, d, std::vector<Id>(static_cast<size_t>(whole / part), g.find(cls)));
  }
  return std::nullopt;
}

}  // namespace

void addRearrangeLemmas(std::vector<Lemma>& out) {
  // --- slice ---
  out.push_back(rewrite("slice-full", "slice[d, 0, size(x,d)](x) = x", "(slice[?d, 0, ?e, 1] ?x)", "?x",
                        [](const EGraph& g, Subst& s) {
                          auto size = dimOf(g, s.cls("x"), s.integer("d"));
                          return size && sym::dimEqual(g.symbols(), *size, s.dim("e"));
                        }));
  out.push_back(rewrite("slice-slice", "slice[d, s2, e2](slice[d, s1, e1](x)) = slice[d, s1+s2, s1+e2](x)",
                        "(slice[?d, ?s2, ?e2, 1] (slice[?d, ?s1, ?e1, 1] ?x))", "(slice[?d, ?s, ?e, 1] ?x)",
                        [](const EGraph& g, Subst& s) {
                          const sym::Context& cx = g.symbols();
                          Dim s1 = s.dim("s1"), e1 = s.dim("e1");
                          auto lo = sym::dimAdd(cx, s1, s.dim("s2")), hi = sym::dimAdd(cx, s1, s.dim("e2"));
                          if (!lo || !hi || !sym::dimLE(cx, *hi, e1) || !sym::dimLE(cx, *lo, *hi)) return false;
                          s.attrs["s"] = Attr::dim(*lo);
                          s.attrs["e"] = Attr::dim(*hi);
                          return true;
                        }));
  out.push_back(readsOnlyMatch(applier("slice-concat",
                        "slice[d, s, e](concat[d](x1..xn)) = concat[d] of the overlapped parts of the x_i, "
                        "each shifted to its own offsets (one piece: a slice of it)",
                        "(slice[?d, ?s, ?e, 1] (concat[?d] ?xs...))", sliceOfConcat)));
  out.push_back(applier("slice-concat-other-dim", "slice[d](concat[c](x1..xn)) = concat[c](slice[d](x_i)), d != c",
                        "(slice[?d, ?s, ?e, ?st] (concat[?c] ?xs...))",
                        [](EGraph& g, const Match& m) -> std::optional<Id> {
                          AttrList a = {m.subst.attr("d"), m.subst.attr("s"), m.subst.attr("e"), m.subst.attr("st")};
                          auto parts = mapPieces(m.subst.list("xs"), [&](Id x) { return make(g, op().slice, a, {x}); });
                          if (!parts) return std::nullopt;
                          return makeConcat(g, m.subst.integer("c"), *parts);
                        },
                        [](const EGraph&, Subst& s) { return s.integer("d") != s.integer("c"); }));

  // --- concat ---
  out.push_back(rewrite("concat-single", "concat[d](x) = x", "(concat[?d] ?x)", "?x"));
  out.push_back(applier("concat-drop-empty", "concat[d](.., x, ..) = concat[d](..) for x of size 0 along d",
                        "(concat[?d] ?xs...)", dropEmptyPieces));
  out.push_back(applier("concat-flatten", "concat[d](.., concat[d](ys..), ..) = concat[d](.., ys.., ..)",
                        "(concat[?d] ?xs...)", flattenConcat));
  out.push_back(applier("concat-regroup",
                        "concat[d](.., x_i..x_j, ..) = concat[d](.., y, ..) for an existing y = concat[d](x_i..x_j) "
                        "that is an implementation tensor (constrained)",
                        "(concat[?d] ?xs...)", regroupConcat));
  out.push_back(applier("concat-interchange",
                        "concat[d](concat[e](a1..ak), concat[e](b1..bk), ..) = concat[e](concat[d](a1, b1, ..), .., "
                        "concat[d](ak, bk, ..)), e != d, the inner concats split alike (a constant splat is cut alike)",
                        "(concat[?d] ?xs...)", concatInterchange));
  out.push_back(applier("concat-adjacent-slices",
                        "concat[d](.., slice[d,a,b](x), slice[d,b,c](x), ..) = concat[d](.., slice[d,a,c](x), ..)",
                        "(concat[?d] ?xs...)", mergeAdjacentSlices));
  out.push_back(applier("slices-tile-whole",
                        "constrained: existing slice[d,0,a](x), slice[d,a,b](x), .., slice[d,z,size](x) => "
                        "x = concat[d](those slices)",
                        "(slice[?d, 0, ?e, 1] ?x)", slicesTileWhole));

  // --- transpose / permute over concat and slice ---
  out.push_back(readsOnlyMatch(
      applier("transpose-concat", "transpose[a,b](concat[d](xs)) = concat[d'](transpose[a,b](x_i)), d' = d with a<->b",
                        "(transpose[?a, ?b] (concat[?d] ?xs...))", [](EGraph& g, const Match& m) -> std::optional<Id> {
                          int64_t a = m.subst.integer("a"), b = m.subst.integer("b");
                          auto parts = mapPieces(m.subst.list("xs"), [&](Id x) {
                            return make(g, op().transpose, {Attr::integer(a), Attr::integer(b)}, {x});
                          });
                          if (!parts) return std::nullopt;
                          return makeConcat(g, transposedDim(a, b, m.subst.integer("d")), *parts);
                        })));
  out.push_back(readsOnlyMatch(
      applier("permute-concat", "permute[p](concat[d](xs)) = concat[j](permute[p](x_i)), p[j] = d",
                        "(permute[?p] (concat[?d] ?xs...))", [](EGraph& g, const Match& m) -> std::optional<Id> {
                          const auto* p = attrL(m.subst, "p");
                          if (!p) return std::nullopt;
                          auto j = permutedDim(*p, m.subst.integer("d"));
                          if (!j) return std::nullopt;
                          auto parts = mapPieces(m.subst.list("xs"),
                                                 [&](Id x) { return make(g, op().permute, {Attr::ints(*p)}, {x}); });
                          if (!parts) return std::nullopt;
                          return makeConcat(g, *j, *parts);
                        })));
  out.push_back(readsOnlyMatch(
      rewrite("transpose-slice", "transpose[a,b](slice[d](x)) = slice[d'](transpose[a,b](x)), d' = d with a<->b",
                        "(transpose[?a, ?b] (slice[?d, ?s, ?e, ?st] ?x))", "(slice[?d2, ?s, ?e, ?st] (transpose[?a, ?b] ?x))",
                        [](const EGraph&, Subst& s) {
                          s.attrs["d2"] = Attr::integer(transposedDim(s.integer("a"), s.integer("b"), s.integer("d")));
                          return true;
                        })));
  out.push_back(readsOnlyMatch(rewrite("permute-slice", "permute[p](slice[d](x)) = slice[j](permute[p](x)), p[j] = d",
                        "(permute[?p] (slice[?d, ?s, ?e, ?st] ?x))", "(slice[?d2, ?s, ?e, ?st] (permute[?p] ?x))",
                        [](const EGraph&, Subst& s) {
                          const auto* p = attrL(s, "p");
                          auto j = p ? permutedDim(*p, s.integer("d")) : std::nullopt;
                          if (!j) return false;
                          s.attrs["d2"] = Attr::integer(*j);
                          return true;
                        })));

  // --- transpose / permute compositions ---
  out.push_back(rewrite("transpose-same-dim", "transpose[a,a](x) = x", "(transpose[?a, ?a] ?x)", "?x"));
  out.push_back(readsOnlyMatch(rewrite("permute-identity", "permute[0,1,..,n-1](x) = x", "(permute[?p] ?x)", "?x",
                        [](const EGraph&, Subst& s) {
                          const auto* p = attrL(s, "p");
                          return p && isIdentity(*p);
                        })));
  out.push_back(readsOnlyMatch(
      applier("transpose-transpose", "transpose[a,b](transpose[c,e](x)) = x if {a,b} = {c,e}, else permute",
                        "(transpose[?a, ?b] (transpose[?c, ?e] ?x))", [](EGraph& g, const Match& m) -> std::optional<Id> {
                          const TensorType* t = typeOf(g, m.subst.cls("x"));
                          if (!t) return std::nullopt;
                          auto r = compose(ops::transposePerm(m.subst.integer("a"), m.subst.integer("b"), t->rank()),
                                           ops::transposePerm(m.subst.integer("c"), m.subst.integer("e"), t->rank()));
                          if (!r) return std::nullopt;
                          return permuteOrSelf(g, m.subst.cls("x"), *r);
                        })));
  out.push_back(readsOnlyMatch(applier("permute-permute", "permute[p](permute[q](x)) = permute[r](x), r[i] = q[p[i]]",
                        "(permute[?p] (permute[?q] ?x))", [](EGraph& g, const Match& m) -> std::optional<Id> {
                          const auto *p = attrL(m.subst, "p"), *q = attrL(m.subst, "q");
                          auto r = p && q ? compose(*p, *q) : std::nullopt;
                          if (!r) return std::nullopt;
                          return permuteOrSelf(g, m.subst.cls("x"), *r);
                        })));
  out.push_back(readsOnlyMatch(applier("permute-transpose", "permute[p](transpose[a,b](x)) = permute[r](x)",
                        "(permute[?p] (transpose[?a, ?b] ?x))", [](EGraph& g, const Match& m) -> std::optional<Id> {
                          const auto* p = attrL(m.subst, "p");
                          if (!p) return std::nullopt;
                          auto q = ops::transposePerm(m.subst.integer("a"), m.subst.integer("b"),
                                                      static_cast<int64_t>(p->size()));
                          auto r = compose(*p, q);
                          if (!r) return std::nullopt;
                          return permuteOrSelf(g, m.subst.cls("x"), *r);
                        })));
  out.push_back(readsOnlyMatch(applier("transpose-permute", "transpose[a,b](permute[q](x)) = permute[r](x)",
                        "(transpose[?a, ?b] (permute[?q] ?x))", [](EGraph& g, const Match& m) -> std::optional<Id> {
                          const auto* q = attrL(m.subst, "q");
                          if (!q) return std::nullopt;
                          auto p = ops::transposePerm(m.subst.integer("a"), m.subst.integer("b"),
                                                      static_cast<int64_t>(q->size()));
                          auto r = compose(p, *q);
                          if (!r) return std::nullopt;
                          return permuteOrSelf(g, m.subst.cls("x"), *r);
                        })));

  // --- reshape ---
  out.push_back(rewrite("reshape-reshape", "reshape[s](reshape[t](x)) = reshape[s](x)", "(reshape[?s] (reshape[?t] ?x))",
                        "(reshape[?s] ?x)"));
  out.push_back(readsOnlyMatch(rewrite("reshape-same-shape", "reshape[shape(x)](x) = x", "(reshape[?s] ?x)", "?x",
                        [](const EGraph& g, Subst& s) {
                          const TensorType* t = typeOf(g, s.cls("x"));
                          const auto* shape = attrL(s, "s");
                          return t && shape && t->shape == *shape;
                        })));
  out.push_back(readsOnlyMatch(applier("reshape-concat",
                        "reshape[O](concat[d](xs)) = concat[d'](reshape[O_i](x_i)) when the pieces stay contiguous "
                        "blocks along d' (equal leading products, aligned piece boundaries)",
                        "(reshape[?s] (concat[?d] ?xs...))", reshapeOfConcat)));

  // --- expand (broadcast) ---
  out.push_back(applier("slice-expand",
                        "slice[d, s, e](expand[S](y)) = expand[S with e-s at d](y) when d is broadcast, else "
                        "expand[..](slice[d', s, e](y))",
                        "(slice[?d, ?s, ?e, 1] (expand[?S] ?y))", sliceOfExpand));
  out.push_back(applier("expand-concat",
                        "expand[S](concat[d](xs)) = concat[d'](expand[S_i](x_i)) when the concat dim is not broadcast",
                        "(expand[?S] (concat[?d] ?xs...))", expandOfConcat));
  out.push_back(applier("expand-tiles",
                        "constrained: expand[S](y) = concat[d](expand[S'](y), ...) with an existing expand[S'](y), "
                        "S' = S but at a broadcast dim d, S[d] = k*S'[d]",
                        "(expand[?S] ?y)", expandAsTiles));
}

}  // namespace tangle::lemmas::detail
