// Vocab-parallel lookups (Megatron's VocabParallelEmbedding and vocab-parallel
// cross entropy) and the elementwise/selection ops they are built from.
//
// Rank r owns rows [o_r, o_r + s_r) of a table W = concat(W_0, .., W_{n-1}).
// It looks up the indices that fall in its range (shifted by -o_r, others
// redirected to row 0), zeroes the results of the others, and an all-reduce
// sums the ranks' results. Each element is produced by exactly one rank, so:
//   W[idx] = sum_r where(m_r, 0, W_r[where(m_r, 0, idx - o_r)]),
//   m_r = (idx < o_r) | (idx >= o_r + s_r)
// for every idx inside the table (an index outside raises in PyTorch, so the
// spec lookup itself requires it). Cross entropy's masked gather of the target
// logit carries its own spec-side mask for [a, b) and is an identity for every
// index (out-of-range ones give 0 on both sides).
#include <functional>
#include <map>
#include <set>

#include "lemmas/lemma_util.h"

namespace tangle::lemmas::detail {

namespace {

const ops::Syms& sym() { return ops::syms(); }


// m_r = or(lt(idx, o), ge(idx, o + s))
std::optional<Id> rangeMask(EGraph& g, Id idx, int64_t lo, int64_t hi) {
  auto a = make(g, sym().lt, {}, {idx, makeConstant(g, static_cast<double>(lo))});
  auto b = make(g, sym().ge, {}, {idx, makeConstant(g, static_cast<double>(hi))});
  if (!a || !b) return std::nullopt;
  return make(g, sym().logicalOr, {}, {*a, *b});
}

// Does class m hold or(lt(t, lo), ge(t, hi)) with constant bounds? Returns (lo, hi).
std::optional<std::pair<double, double>> rangeMaskBounds(const EGraph& g, Id m, Id t) {
  for (const ENode* o : nodesOf(g, m, sym().logicalOr)) {
    std::optional<double> lo, hi;
    for (const ENode* l : nodesOf(g, o->children[0], sym().lt))
      if (g.find(l->children[0]) == g.find(t)) lo = scalarConstant(g, l->children[1]);
    for (const ENode* h : nodesOf(g, o->children[1], sym().ge))
      if (g.find(h->children[0]) == g.find(t)) hi = scalarConstant(g, h->children[1]);
    if (lo && hi) return std::make_pair(*lo, *hi);
  }
  return std::nullopt;
}

bool isIntegralValued(double v) { return v == static_cast<double>(static_cast<int64_t>(v)); }

// index_rows(concat[0](W_r), idx) = sum_r where(m_r', 0, index_rows(W_r, where(m_r, 0, idx - o_r)))
std::optional<Id> vocabEmbedding(EGraph& g, const Match& m) {
  const auto& ws = m.subst.list("ws");
  Id idx = m.subst.cls("idx");
  auto sizes = sizesAlong(g, ws, 0);
  const TensorType* it = typeOf(g, idx);
  const TensorType* w0 = typeOf(g, ws[0]);
  if (!sizes || !it || !w0 || ws.size() < 2) return std::nullopt;
  Id zero = makeConstant(g, 0);
  std::vector<Id> terms;
  int64_t off = 0;
  for (size_t r = 0; r < ws.size(); ++r) {
    auto mask = rangeMask(g, idx, off, off + (*sizes)[r]);
    auto shifted = make(g, op().sub, {}, {idx, makeConstant(g, static_cast<double>(off))});
    if (!mask || !shifted) return std::nullopt;
    auto local = make(g, sym().where, {}, {*mask, zero, *shifted});
    if (!local) return std::nullopt;
    auto rows = make(g, sym().indexRows, {}, {ws[r], *local});
    // The row mask, with unit dims for the looked-up row's trailing dims.
    std::vector<int64_t> ms = it->shape;
    ms.resize(it->shape.size() + w0->shape.size() - 1, 1);
    auto outMask = ms.size() == it->shape.size() ? mask : make(g, op().reshape, {Attr::ints(ms)}, {*mask});
    if (!rows || !outMask) return std::nullopt;
    auto zeroed = make(g, sym().where, {}, {*outMask, zero, *rows});
    if (!zeroed) return std::nullopt;
    terms.push_back(*zeroed);
    off += (*sizes)[r];
  }
  return makeSum(g, terms);
}

// where(m, z, reshape[s1](gather_rows(concat[1](x_r), reshape[s2](where(m, z2, sub(t, a))))))
//   with m = or(lt(t, a), ge(t, b)), b - a = sum s_r, z = z2 = 0
// = sum_r where(m_r, z, reshape[s1](gather_rows(x_r, reshape[s2](where(m_r, z2, sub(t, o_r)))))).
std::optional<Id> vocabGather(EGraph& g, const Match& m) {
  const auto& xs = m.subst.list("xs");
  Id t = m.subst.cls("t"), mask = m.subst.cls("m"), z = m.subst.cls("z"), z2 = m.subst.cls("z2");
  auto a = scalarConstant(g, m.subst.cls("a"));
  auto bounds = rangeMaskBounds(g, mask, t);
  auto sizes = sizesAlong(g, xs, 1);
  if (!a || !bounds || !sizes || xs.size() < 2 || scalarConstant(g, z) != 0.0 || scalarConstant(g, z2) != 0.0) return std::nullopt;
  if (bounds->first != *a || !isIntegralValued(*a)) return std::nullopt;
  int64_t total = 0;
  for (int64_t s : *sizes) total += s;
  if (bounds->second - bounds->first != static_cast<double>(total)) return std::nullopt;
  AttrList s1 = {m.subst.attr("s1")}, s2 = {m.subst.attr("s2")};
  std::vector<Id> terms;
  int64_t off = static_cast<int64_t>(*a);
  for (size_t r = 0; r < xs.size(); ++r) {
    auto mr = rangeMask(g, t, off, off + (*sizes)[r]);
    auto shifted = make(g, op().sub, {}, {t, makeConstant(g, static_cast<double>(off))});
    if (!mr || !shifted) return std::nullopt;
    auto local = make(g, sym().where, {}, {*mr, z2, *shifted});
    auto flat = local ? make(g, op().reshape, s2, {*local}) : std::nullopt;
    auto picked = flat ? make(g, sym().gatherRows, {}, {xs[r], *flat}) : std::nullopt;
    auto shaped = picked ? make(g, op().reshape, s1, {*picked}) : std::nullopt;
    auto zeroed = shaped ? make(g, sym().where, {}, {*mr, z, *shaped}) : std::nullopt;
    if (!zeroed) return std::nullopt;
    terms.push_back(*zeroed);
    off += (*sizes)[r];
  }
  return makeSum(g, terms);
}

// Does class c hold where(lt(u, 0), 0, where(gt(u, hi), hi, u)) (clamp(u, 0, hi)
// as canon.cpp lowers it) with u = sub(idx, o)? Returns u.
std::optional<Id> clampedShift(const EGraph& g, Id c, Id idx, double o, double hi) {
  auto is = [&](Id k, double v) { return scalarConstant(g, k) == v; };
  for (const ENode* w : nodesOf(g, c, sym().where)) {
    if (!is(w->children[1], 0)) continue;
    for (const ENode* l : nodesOf(g, w->children[0], sym().lt)) {
      Id u = g.find(l->children[0]);
      if (!is(l->children[1], 0)) continue;
      bool shifted = false;
      for (const ENode* sb : nodesOf(g, u, op().sub))
        shifted |= g.find(sb->children[0]) == g.find(idx) && is(sb->children[1], o);
      if (!shifted) continue;
      for (const ENode* w2 : nodesOf(g, w->children[2], sym().where)) {
        if (!is(w2->children[1], hi) || g.find(w2->children[2]) != u) continue;
        for (const ENode* gt : nodesOf(g, w2->children[0], sym().gt))
          if (g.find(gt->children[0]) == u && is(gt->children[1], hi)) return u;
      }
    }
  }
  return std::nullopt;
}

// torchtitan's vocab-parallel embedding on one rank, rows [o, o + s) of the
// table in W (s rows):
//   mul(index_rows(W, clamp(idx - o, 0, s - 1)), cast[dt](reshape[sh](and(ge(idx, o), lt(idx, o + s)))))
// = where(reshape[sh](m), 0, index_rows(W, where(m, 0, idx - o))),  m = lt(idx, o) | ge(idx, o + s)
// (the form vocab-parallel-embedding sums): inside the range both look up
// row idx - o, outside both give 0 (the clamped lookup is multiplied by 0;
// weights are finite, as the real-number reading of every lemma assumes).
std::optional<Id> clampedEmbedding(EGraph& g, const Match& m) {
  Id w = m.subst.cls("w"), idx = m.subst.cls("idx");
  if (g.find(idx) != g.find(m.subst.cls("idx2"))) return std::nullopt;
  auto o = scalarConstant(g, m.subst.cls("o")), oe = scalarConstant(g, m.subst.cls("oe"));
  const TensorType* wt = typeOf(g, w);
  auto rows = sizeOf(g, w, 0);
  const Attr& dtAttr = m.subst.attr("dt");
  const std::string* dt = dtAttr.kind == Attr::Kind::Str ? &eg::symbolName(static_cast<eg::Symbol>(dtAttr.i)) : nullptr;
  if (!o || !oe || !wt || !rows || !dt || !isIntegralValued(*o) || *oe - *o != static_cast<double>(*rows) || *rows < 1)
    return std::nullopt;
  if (*dt != dtypeName(wt->dtype)) return std::nullopt;  // the product keeps W's dtype
  auto u = clampedShift(g, m.subst.cls("c"), idx, *o, static_cast<double>(*rows - 1));
  if (!u) return std::nullopt;
  auto mask = rangeMask(g, idx, static_cast<int64_t>(*o), static_cast<int64_t>(*oe));
  if (!mask) return std::nullopt;
  Id zero = makeConstant(g, 0);
  auto local = make(g, sym().where, {}, {*mask, zero, *u});
  auto looked = local ? make(g, sym().indexRows, {}, {w, *local}) : std::nullopt;
  auto outMask = make(g, op().reshape, {m.subst.attr("sh")}, {*mask});
  if (!looked || !outMask) return std::nullopt;
  return make(g, sym().where, {}, {*outMask, zero, *looked});
}

// The embedding backward one_hot(idx)^T @ G of a table with V rows, split by
// vocab ranges [o_r, o_r + s_r) that tile [0, V) and whose range masks
// and(ge(idx, o_r), lt(idx, o_r + s_r)) are in the e-graph (torchtitan's
// vocab-parallel embedding ranks build them):
//   mm(t(reshape[T, V](cast(one_hot[V](idx)))), reshape[T, H](G))
// = concat[0]_r mm(t(reshape[T, s_r](cast(one_hot[s_r](clamp(idx - o_r, 0, s_r - 1))))),
//                  reshape[T, H](mul(G, cast(reshape[idx.shape + 1](and(ge(idx, o_r), lt(idx, o_r + s_r)))))))
// for idx in [0, V) (the left side's one_hot requires it): row j of block r
// sums the rows of G whose index is o_r + j; tokens outside the range are
// zeroed before their clamped row is hit.
std::optional<Id> embeddingBackwardByRanges(EGraph& g, const Match& m) {
  static const eg::Symbol oneHot = eg::intern("one_hot");
  Id idx = g.find(m.subst.cls("idx")), grad = m.subst.cls("g");
  int64_t v = m.subst.integer("v");
  const TensorType *it = typeOf(g, idx), *gt = typeOf(g, grad);
  auto ints = [&](const char* var) {
    const Attr& a = m.subst.attr(var);
    return a.kind == Attr::Kind::IntList ? &a.list : nullptr;
  };
  const auto *s1 = ints("s1"), *s2 = ints("s2");
  if (!it || !gt || !s1 || !s2 || gt->rank() != it->rank() + 1) return std::nullopt;
  int64_t tokens = 1;
  for (int64_t i = 0; i < it->rank(); ++i) {
    if (isSymbolic(it->shape[i]) || gt->shape[i] != it->shape[i]) return std::nullopt;
    tokens *= it->shape[i];
  }
  int64_t h = gt->shape.back();
  if (isSymbolic(h) || *s1 != std::vector<int64_t>{tokens, v} || *s2 != std::vector<int64_t>{tokens, h})
    return std::nullopt;
  // The ranges of the masks over idx: start -> end.
  std::map<int64_t, int64_t> ranges;
  for (const auto& [n, cls] : g.eclass(idx).parents) {
    if (n.op != sym().ge || g.find(n.children[0]) != idx) continue;
    auto o = scalarConstant(g, n.children[1]);
    if (!o || !isIntegralValued(*o)) continue;
    for (const auto& [a, acls] : g.eclass(g.find(cls)).parents) {
      if (a.op != sym().logicalAnd || g.find(a.children[0]) != g.find(cls)) continue;
      for (const ENode* l : nodesOf(g, a.children[1], sym().lt)) {
        auto e = scalarConstant(g, l->children[1]);
        if (g.find(l->children[0]) == idx && e && isIntegralValued(*e) && *e > *o)
          ranges.emplace(static_cast<int64_t>(*o), static_cast<int64_t>(*e));
      }
    }
  }
  std::vector<std::pair<int64_t, int64_t>> tiles;
  for (int64_t at = 0; at < v;) {
    auto r = ranges.find(at);
    if (r == ranges.end() || r->second > v) return std::nullopt;
    tiles.emplace_back(r->first, r->second);
    at = r->second;
  }
  if (tiles.size() < 2) return std::nullopt;
  Shape maskShape(it->shape.begin(), it->shape.end());
  maskShape.push_back(1);
  Id zero = makeConstant(g, 0);
  std::vector<Id> blocks;
  for (auto [o, e] : tiles) {
    int64_t s = e - o;
    Id co = makeConstant(g, static_cast<double>(o)), hi = makeConstant(g, static_cast<double>(s - 1));
    // The tile's one-hot rows of idx - o, clamped to [0, s-1], transposed.
    auto oneHotTile = [&]() -> std::optional<Id> {
      auto u = make(g, op().sub, {}, {idx, co});
      if (!u) return std::nullopt;
      auto over = make(g, sym().gt, {}, {*u, hi});
      auto top = over ? make(g, sym().where, {}, {*over, hi, *u}) : std::nullopt;
      auto under = make(g, sym().lt, {}, {*u, zero});
      if (!top || !under) return std::nullopt;
      auto c = make(g, sym().where, {}, {*under, zero, *top});
      if (!c) return std::nullopt;
      auto h = make(g, oneHot, {Attr::integer(s)}, {*c});
      if (h) h = make(g, op().cast, {m.subst.attr("dt")}, {*h});
      if (h) h = make(g, op().reshape, {Attr::ints({tokens, s})}, {*h});
      if (h) h = make(g, op().transpose, {Attr::integer(0), Attr::integer(1)}, {*h});
      return h;
    };
    auto hot = oneHotTile();
    auto ge = make(g, sym().ge, {}, {idx, co});
    auto lt = make(g, sym().lt, {}, {idx, makeConstant(g, static_cast<double>(e))});
    auto in = ge && lt ? make(g, sym().logicalAnd, {}, {*ge, *lt}) : std::nullopt;
    auto mask = in ? make(g, op().reshape, {Attr::ints(maskShape)}, {*in}) : std::nullopt;
    mask = mask ? make(g, op().cast, {Attr::str(dtypeName(gt->dtype))}, {*mask}) : std::nullopt;
    auto masked = mask ? make(g, op().mul, {}, {grad, *mask}) : std::nullopt;
    auto rows = masked ? make(g, op().reshape, {m.subst.attr("s2")}, {*masked}) : std::nullopt;
    auto block = hot && rows ? make(g, op().mm, {}, {*hot, *rows}) : std::nullopt;
    if (!block) return std::nullopt;
    blocks.push_back(*block);
  }
  return makeConcat(g, 0, blocks);
}

// The vocab ranges [lo, hi) that range masks or(lt(idx, lo), ge(idx, hi)) over
// class idx in the e-graph tile [start, v) with, in order (at least two pieces).
std::optional<std::vector<std::pair<int64_t, int64_t>>> maskTiling(const EGraph& g, Id idx, int64_t v,
                                                                    int64_t start = 0) {
  std::map<int64_t, std::set<int64_t>> ranges;  // lo -> his
  for (const auto& [n, ltCls] : g.eclass(idx).parents) {
    if (n.op != sym().lt || g.find(n.children[0]) != g.find(idx)) continue;
    for (const auto& [o, orCls] : g.eclass(ltCls).parents) {
      if (o.op != sym().logicalOr) continue;
      auto b = rangeMaskBounds(g, orCls, idx);
      if (b && isIntegralValued(b->first) && isIntegralValued(b->second) && b->first < b->second)
        ranges[static_cast<int64_t>(b->first)].insert(static_cast<int64_t>(b->second));
    }
  }
  // Depth-first from start: the first chain of ranges that ends exactly at v.
  std::vector<std::pair<int64_t, int64_t>> chain;
  std::function<bool(int64_t)> extend = [&](int64_t at) {
    if (at == v) return chain.size() >= 2;
    auto it = ranges.find(at);
    if (it == ranges.end()) return false;
    for (int64_t hi : it->second) {
      if (hi > v) continue;
      chain.emplace_back(at, hi);
      if (extend(hi)) return true;
      chain.pop_back();
    }
    return false;
  };
  if (!extend(start)) return std::nullopt;
  return chain;
}

// embedding_dense_backward as canon_grad.cpp writes it, split by vocab range:
//   mm(transpose(reshape[T, V](cast(one_hot[V](idx)))), reshape[T, H](g))
//   = concat[0]_r mm(transpose(reshape[T, s_r](cast(one_hot[s_r](where(m_r, 0, idx - o_r))))),
//                    reshape[T, H](where(reshape(m_r), 0, g)))
// for ranges [o_r, o_r + s_r) tiling [0, V) (taken from the range masks over
// idx in the e-graph): row v of the gradient sums the g rows of the tokens
// with id v, and exactly one range holds v. A rank's masked tokens look up
// row 0 with a zeroed g row. idx in [0, V), as the left side's one_hot requires.
std::optional<Id> vocabEmbeddingBackward(EGraph& g, const Match& m) {
  Id idx = m.subst.cls("idx"), grad = m.subst.cls("g");
  const TensorType *it = typeOf(g, idx), *gt = typeOf(g, grad);
  const Attr &va = m.subst.attr("V"), &sa = m.subst.attr("s");
  if (va.kind != Attr::Kind::Int || sa.kind != Attr::Kind::IntList) return std::nullopt;
  auto v = std::optional<int64_t>(va.i);
  const std::vector<int64_t>* s = &sa.list;
  if (!it || !gt || s->size() != 2 || (*s)[0] < 0 || gt->rank() < it->rank()) return std::nullopt;
  if (m.subst.attr("a").i == m.subst.attr("b").i) return std::nullopt;  // the 2-D transpose, not the identity
  for (int64_t i = 0; i < it->rank(); ++i)
    if (gt->shape[i] != it->shape[i] || it->shape[i] < 0) return std::nullopt;
  auto tiles = maskTiling(g, idx, *v);
  if (!tiles) return std::nullopt;
  std::vector<int64_t> maskShape = it->shape;
  maskShape.resize(gt->shape.size(), 1);
  AttrList tr = {m.subst.attr("a"), m.subst.attr("b")}, dt = {m.subst.attr("dt")}, s2 = {m.subst.attr("s2")};
  Id zero = makeConstant(g, 0);
  std::vector<Id> pieces;
  for (auto [lo, hi] : *tiles) {
    auto mask = rangeMask(g, idx, lo, hi);
    auto shifted = make(g, op().sub, {}, {idx, makeConstant(g, static_cast<double>(lo))});
    if (!mask || !shifted) return std::nullopt;
    auto local = make(g, sym().where, {}, {*mask, zero, *shifted});
    auto hot = local ? make(g, eg::intern("one_hot"), {Attr::integer(hi - lo)}, {*local}) : std::nullopt;
    auto cast = hot ? make(g, op().cast, dt, {*hot}) : std::nullopt;
    auto rows = cast ? make(g, op().reshape, {Attr::ints({(*s)[0], hi - lo})}, {*cast}) : std::nullopt;
    auto t = rows ? make(g, op().transpose, tr, {*rows}) : std::nullopt;
    auto outMask = maskShape.size() == it->shape.size() ? mask : make(g, op().reshape, {Attr::ints(maskShape)}, {*mask});
    auto zeroed = outMask ? make(g, sym().where, {}, {*outMask, zero, grad}) : std::nullopt;
    auto flat = zeroed ? make(g, op().reshape, s2, {*zeroed}) : std::nullopt;
    auto piece = (t && flat) ? make(g, op().mm, {}, {*t, *flat}) : std::nullopt;
    if (!piece) return std::nullopt;
    pieces.push_back(*piece);
  }
  return makeConcat(g, 0, pieces);
}

// Cross entropy's "subtract 1 at the target" (canon_model.cpp's subtractAt) on
// vocab-sharded logits, the one-hot part:
//   mul(cast(one_hot[V](reshape(where(m, 0, t - a)))), reshape(sub(1, cast(reshape(m)))))
//   with m = t < a | t >= b, b - a = V,
//   = concat[1]_r mul(cast(one_hot[s_r](reshape(where(m_r, 0, t - o_r)))), reshape(sub(1, cast(reshape(m_r)))))
// for ranges [o_r, o_r + s_r) tiling [a, b) (from the range masks over t in the
// e-graph). Row i: t_i in [a, b) is in exactly one range, whose one-hot puts
// the 1 at column t_i - a of the concat; t_i outside gives a zero row on both
// sides (each mask zeroes its row). Exact for every t.
std::optional<Id> vocabOneHot(EGraph& g, const Match& m) {
  Id t = m.subst.cls("t"), mask = m.subst.cls("m");
  if (g.find(mask) != g.find(m.subst.cls("m2")) || scalarConstant(g, m.subst.cls("z")) != 0.0 ||
      scalarConstant(g, m.subst.cls("one")) != 1.0)
    return std::nullopt;
  auto a = scalarConstant(g, m.subst.cls("a"));
  auto bounds = rangeMaskBounds(g, mask, t);
  const Attr& va = m.subst.attr("V");
  if (!a || !bounds || va.kind != Attr::Kind::Int || bounds->first != *a || !isIntegralValued(*a) ||
      bounds->second - bounds->first != static_cast<double>(va.i))
    return std::nullopt;
  auto start = static_cast<int64_t>(*a);
  auto tiles = maskTiling(g, t, start + va.i, start);
  if (!tiles) return std::nullopt;
  AttrList dt = {m.subst.attr("dt")}, dt2 = {m.subst.attr("dt2")}, sj = {m.subst.attr("sj")},
           su = {m.subst.attr("su")}, sm = {m.subst.attr("sm")};
  Id zero = m.subst.cls("z"), one = m.subst.cls("one");
  std::vector<Id> pieces;
  for (auto [lo, hi] : *tiles) {
    auto mr = rangeMask(g, t, lo, hi);
    auto shifted = make(g, op().sub, {}, {t, makeConstant(g, static_cast<double>(lo))});
    if (!mr || !shifted) return std::nullopt;
    auto local = make(g, sym().where, {}, {*mr, zero, *shifted});
    auto flat = local ? make(g, op().reshape, sj, {*local}) : std::nullopt;
    auto hot = flat ? make(g, eg::intern("one_hot"), {Attr::integer(hi - lo)}, {*flat}) : std::nullopt;
    auto hotc = hot ? make(g, op().cast, dt, {*hot}) : std::nullopt;
    auto mflat = make(g, op().reshape, sm, {*mr});
    auto mcast = mflat ? make(g, op().cast, dt2, {*mflat}) : std::nullopt;
    auto keep = mcast ? make(g, op().sub, {}, {one, *mcast}) : std::nullopt;
    auto column = keep ? make(g, op().reshape, su, {*keep}) : std::nullopt;
    auto piece = (hotc && column) ? make(g, op().mul, {}, {*hotc, *column}) : std::nullopt;
    if (!piece) return std::nullopt;
    pieces.push_back(*piece);
  }
  return makeConcat(g, 1, pieces);
}

// where with one operand a concat: concat of the pieces' wheres.
Apply whereOverConcat(size_t pos) {
  return [pos](EGraph& g, const Match& m) { return distributeOverConcat(g, m, sym().where, {}, {"c", "a", "b"}, pos); };
}

// getitem[k](max_dim[d](concat[c](xs))): over the reduced dim, the values are
// the cross-rank max of the pieces' maxima; over another dim, a concat.
std::optional<Id> maxDimOfConcat(EGraph& g, const Match& m) {
  const auto& xs = m.subst.list("xs");
  int64_t d = m.subst.integer("d"), c = m.subst.integer("c"), k = m.subst.integer("k");
  bool keep = m.subst.attr("keep").i != 0;
  AttrList a = {m.subst.attr("d"), m.subst.attr("keep")};
  auto parts = mapPieces(xs, [&](Id x) -> std::optional<Id> {
    auto mx = make(g, sym().maxDim, a, {x});
    if (!mx) return std::nullopt;
    return make(g, op().getitem, {Attr::integer(k)}, {*mx});
  });
  if (!parts) return std::nullopt;
  if (c == d) {
    if (k != 0) return std::nullopt;  // indices would need the pieces' offsets
    return make(g, sym().rmax, {}, *parts);
  }
  return makeConcat(g, (keep || c < d) ? c : c - 1, *parts);
}

}  // namespace

void addVocabLemmas(std::vector<Lemma>& out) {
  out.push_back(applier("vocab-parallel-embedding",
                        "index_rows(concat[0](W_r), idx) = sum_r where(m_r, 0, index_rows(W_r, where(m_r, 0, idx - o_r))), "
                        "m_r = idx < o_r | idx >= o_r + s_r (idx inside the table, as the spec lookup requires)",
                        "(index_rows (concat[0] ?ws...) ?idx)", vocabEmbedding));
  out.push_back(applier("vocab-parallel-gather",
                        "where(m, 0, gather_rows(concat[1](x_r), where(m, 0, t - a))) with m = t < a | t >= b, b - a = sum s_r "
                        "= sum_r where(m_r, 0, gather_rows(x_r, where(m_r, 0, t - o_r))) (reshapes around kept)",
                        "(where ?m ?z (reshape[?s1] (gather_rows (concat[1] ?xs...) (reshape[?s2] (where ?m ?z2 (sub ?t ?a))))))",
                        vocabGather));
  out.push_back(applier("vocab-embedding-clamped",
                        "mul(index_rows(W, clamp(idx - o, 0, s - 1)), cast(reshape(ge(idx, o) & lt(idx, o + s)))) "
                        "= where(reshape(m), 0, index_rows(W, where(m, 0, idx - o))), m = idx < o | idx >= o + s, s = rows of W",
                        "(mul (index_rows ?w ?c) (cast[?dt] (reshape[?sh] (and (ge ?idx ?o) (lt ?idx2 ?oe)))))",
                        clampedEmbedding));
  out.push_back(applier("vocab-embedding-backward-clamped",
                        "mm(t(reshape(cast(one_hot[V](idx)))), reshape(G)) = concat[0]_r mm(t(reshape(cast(one_hot[s_r]("
                        "clamp(idx - o_r, 0, s_r - 1))))), reshape(mul(G, cast(reshape(ge(idx, o_r) & lt(idx, o_r + s_r)))))), "
                        "for existing range masks tiling [0, V) (idx in [0, V))",
                        "(mm (transpose[0, 1] (reshape[?s1] (cast[?dt] (one_hot[?v] ?idx)))) (reshape[?s2] ?g))",
                        embeddingBackwardByRanges));
  out.push_back(applier("vocab-embedding-backward",
                        "mm(t(reshape(cast(one_hot[V](idx)))), reshape(g)) = concat[0]_r mm(t(reshape(cast(one_hot[s_r]("
                        "where(m_r, 0, idx - o_r))))), reshape(where(m_r, 0, g))), [o_r, o_r + s_r) tiling [0, V) from the "
                        "range masks m_r over idx in the e-graph (idx inside [0, V), as one_hot requires)",
                        "(mm (transpose[?a, ?b] (reshape[?s] (cast[?dt] (one_hot[?V] ?idx)))) (reshape[?s2] ?g))",
                        vocabEmbeddingBackward));
  out.push_back(applier("vocab-parallel-one-hot",
                        "mul(cast(one_hot[V](reshape(where(m, 0, t - a)))), reshape(1 - cast(reshape(m)))), m = t < a | t >= b, "
                        "b - a = V, = concat[1]_r of the same over [o_r, o_r + s_r) tiling [a, b) (range masks m_r over t in "
                        "the e-graph)",
                        "(mul (cast[?dt] (one_hot[?V] (reshape[?sj] (where ?m ?z (sub ?t ?a))))) "
                        "(reshape[?su] (sub ?one (cast[?dt2] (reshape[?sm] ?m2)))))",
                        vocabOneHot));
  out.push_back(applier("where-concat-cond", "where(concat[d](cs), a, b) = concat[d](where(c_i, a_i, b_i))",
                        "(where (concat[?d] ?xs...) ?a ?b)", whereOverConcat(0)));
  out.push_back(applier("where-concat-then", "where(c, concat[d](as), b) = concat[d](where(c_i, a_i, b_i))",
                        "(where ?c (concat[?d] ?xs...) ?b)", whereOverConcat(1)));
  out.push_back(applier("where-concat-else", "where(c, a, concat[d](bs)) = concat[d](where(c_i, a_i, b_i))",
                        "(where ?c ?a (concat[?d] ?xs...))", whereOverConcat(2)));
  out.push_back(applier("max_dim-concat",
                        "getitem[0](max_dim[d](concat[d](xs))) = rmax(getitem[0](max_dim[d](x_i))); over another dim c: concat",
                        "(getitem[?k] (max_dim[?d, ?keep] (concat[?c] ?xs...)))", maxDimOfConcat));
}

}  // namespace tangle::lemmas::detail
