// The backward of scaled-dot-product attention over a sequence split into
// blocks: what ring attention's backward (torch's context parallelism) computes.
//
// Given the upstream gradient dO, the output `out` and the log-sum-exp `lse`,
// the backward of row i and key j is a function of that pair alone:
//   p_ij = exp(s q_i.k_j + m_i - lse_i),  ds_ij = p_ij (dO_i.v_j - dO_i.out_i)
//   dq_i = s sum_j ds_ij k_j,  dk_j = s sum_i ds_ij q_i,  dv_j = sum_i p_ij dO_i
// (out and lse enter as inputs, never recomputed: the global ones make every
// block's term exact). So with rows split into blocks r (dO, q, out, lse alike)
// and keys into blocks b (k, v alike), block (r, b)'s backward
// bw(r, b) = sdpa_backward(dO_r, q_r, k_b, v_b, out_r, lse_r, m_r) gives
//   dq of row block r    = the add of bw(r, b)[0] over every key block b
//   dk (dv) of key block b = the add of bw(r, b)[1] ([2]) over every row block r
// which is torch's ring backward: rank r adds its queries' dq term per key
// block it receives, and each key block's dk/dv travels round the ring
// collecting every rank's term. The adds are written in every cyclic order
// (each starting block, either direction): the ring's order depends on the
// rank and the rotater, addition does not. With a causal mask (no load
// balancing, row and key blocks of equal lengths) block (r, r) is causal,
// b < r unmasked and b > r absent: dq_r = bw_causal(r, r) + bw(r, r-1) + ...
// + bw(r, 0), dk_b = bw_causal(b, b) + bw(b+1, b) + ... + bw(n-1, b), in the
// order torch's ring adds them.
// The blocks are the pieces of q's and k's concats (or q or k whole, one
// block: a load-balanced ring's partial step attends one chunk's rows or
// keys); dO, out and lse are cut at q's row boundaries and v at k's, by their
// own concat when split so, else by slices. A load-balanced ring's sums group
// and order the terms otherwise (sdpa_backward_sum.cpp).
#include "lemmas/lemma_util.h"

namespace tangle::lemmas::detail {

namespace {

// The mask adds the same to every key of a row (absent, or size 1 along the keys).
bool broadcastsOverKeys(const EGraph& g, Id mask) {
  const TensorType* t = typeOf(g, mask);
  return t && (t->rank() == 0 || t->shape.back() == 1);
}

// The row-side operands (dO, q, out, lse) of every row block, and the key-side (k, v) of every key block.
struct Blocks {
  std::vector<Id> gs, qs, os, ls, masks, ks, vs;
};

// The blocks are q's and k's pieces; dO, out and lse are cut at q's row boundaries, v at k's (their own
// concat when split so, else slices: a load-balanced ring's output is assembled from differently sized parts).
std::optional<Blocks> blocksOf(EGraph& g, const Match& m, const std::vector<Id>& qs, const std::vector<Id>& ks) {
  Id mask = m.subst.cls("m");
  if (!broadcastsOverKeys(g, mask) || ks.size() + qs.size() < 3) return std::nullopt;
  auto rows = sizesAlong(g, qs, 2), rowDims = dimsAlong(g, qs, 2), keyDims = dimsAlong(g, ks, 2);
  if (!rows || !rowDims || !keyDims) return std::nullopt;
  Blocks b{{}, qs, {}, {}, {}, ks, {}};
  auto gs = piecesOf(g, m.subst.cls("g"), 2, *rowDims), os = piecesOf(g, m.subst.cls("o"), 2, *rowDims);
  auto ls = piecesOf(g, m.subst.cls("l"), 2, *rowDims), vs = piecesOf(g, m.subst.cls("v"), 2, *keyDims);
  auto masks = maskPieces(g, mask, 2, *rows);
  if (!gs || !os || !ls || !vs || !masks) return std::nullopt;
  b.gs = *gs, b.os = *os, b.ls = *ls, b.vs = *vs, b.masks = *masks;
  return b;
}

// The ways x is split along the sequence: each concat[2] of its class, or x whole when it has none.
std::vector<std::vector<Id>> sequenceSplits(const EGraph& g, Id x) {
  std::vector<std::vector<Id>> out;
  for (const ENode* c : nodesOf(g, x, op().concat))
    if (attrsOf(*c)[0].i == 2 && c->children.size() > 1) out.push_back(c->children);
  if (out.empty()) out.push_back({g.find(x)});
  return out;
}

// getitem[item](sdpa_backward[causal, s](block (r, c))).
std::optional<Id> term(EGraph& g, const Match& m, const Blocks& b, bool causal, int64_t item, size_t r, size_t c) {
  auto bw = make(g, op().sdpaBackward, {Attr::boolean(causal), m.subst.attr("s")},
                 {b.gs[r], b.qs[r], b.ks[c], b.vs[c], b.os[r], b.ls[r], b.masks[r]});
  return bw ? make(g, op().getitem, {Attr::integer(item)}, {*bw}) : std::nullopt;
}

// add(add(t_0, t_1), ...) in the given order.
std::optional<Id> addChain(EGraph& g, const std::vector<Id>& terms) {
  std::optional<Id> acc = terms.at(0);
  for (size_t i = 1; i < terms.size() && acc; ++i) acc = make(g, op().add, {}, {*acc, terms[i]});
  return acc;
}

// The terms added in every cyclic order (each start, either direction), all merged into one class.
std::optional<Id> cyclicSum(EGraph& g, const std::vector<Id>& terms) {
  size_t n = terms.size();
  std::optional<Id> first;
  for (size_t s = 0; s < n; ++s)
    for (int dir : {-1, 1}) {
      if (n < 3 && dir == 1) continue;  // one or two terms: the other direction is the same order
      std::vector<Id> order;
      for (size_t t = 0; t < n; ++t) order.push_back(terms[dir == 1 ? (s + t) % n : (s + n - t) % n]);
      auto c = addChain(g, order);
      if (!c) return std::nullopt;
      if (first) g.merge(*first, *c);
      else first = c;
    }
  return first;
}

// Not causal: dq = concat over row blocks of the cyclic sums over key blocks; dk, dv = concat over key
// blocks of the cyclic sums over row blocks.
std::optional<Id> ringBackward(EGraph& g, const Match& m, const std::optional<Blocks>& b) {
  if (!b) return std::nullopt;
  int64_t item = m.subst.attr("i").i;
  bool byRows = item == 0;
  size_t outer = byRows ? b->qs.size() : b->ks.size(), inner = byRows ? b->ks.size() : b->qs.size();
  std::vector<Id> parts;
  for (size_t x = 0; x < outer; ++x) {
    std::vector<Id> terms;
    for (size_t y = 0; y < inner; ++y) {
      auto t = byRows ? term(g, m, *b, false, item, x, y) : term(g, m, *b, false, item, y, x);
      if (!t) return std::nullopt;
      terms.push_back(*t);
    }
    auto s = cyclicSum(g, terms);
    if (!s) return std::nullopt;
    parts.push_back(*s);
  }
  return makeConcat(g, 2, parts);
}

// Causal, row and key blocks of equal lengths: dq_r = bw_causal(r, r) + bw(r, r-1) + ... + bw(r, 0);
// dk_b (dv_b) = bw_causal(b, b) + bw(b+1, b) + ... + bw(n-1, b).
std::optional<Id> causalRingBackward(EGraph& g, const Match& m, const std::optional<Blocks>& b) {
  if (!b || b->qs.size() != b->ks.size() || sizesAlong(g, b->qs, 2) != sizesAlong(g, b->ks, 2)) return std::nullopt;
  int64_t item = m.subst.attr("i").i;
  size_t n = b->qs.size();
  std::vector<Id> parts;
  for (size_t x = 0; x < n; ++x) {
    auto diag = term(g, m, *b, true, item, x, x);
    if (!diag) return std::nullopt;
    std::vector<Id> terms = {*diag};
    // dq: key blocks x-1, ..., 0 for row block x; dk/dv: row blocks x+1, ..., n-1 for key block x
    for (size_t y = item == 0 ? 0 : x + 1; y < (item == 0 ? x : n); ++y) {
      auto t = item == 0 ? term(g, m, *b, false, item, x, x - 1 - y) : term(g, m, *b, false, item, y, x);
      if (!t) return std::nullopt;
      terms.push_back(*t);
    }
    auto s = addChain(g, terms);
    if (!s) return std::nullopt;
    parts.push_back(*s);
  }
  return makeConcat(g, 2, parts);
}

// The lemma over every split of q and of k (merged into one class): the spec's operands are concats of the
// ranks' chunks, a ring step's are a rank's chunks, one (a partial step's) or two (after slices-tile-whole).
Apply overSplits(bool causal) {
  return [causal](EGraph& g, const Match& m) -> std::optional<Id> {
    if (m.subst.attr("c") != Attr::boolean(causal)) return std::nullopt;
    std::optional<Id> first;
    for (const auto& qs : sequenceSplits(g, m.subst.cls("q")))
      for (const auto& ks : sequenceSplits(g, m.subst.cls("k"))) {
        auto b = blocksOf(g, m, qs, ks);
        auto r = causal ? causalRingBackward(g, m, b) : ringBackward(g, m, b);
        if (!r) continue;
        if (first) g.merge(*first, *r);
        else first = r;
      }
    return first;
  };
}

const char* const kPattern = "(getitem[?i] (sdpa_backward[?c, ?s] ?g ?q ?k ?v ?o ?l ?m))";

}  // namespace

void addSdpaBackwardRingLemmas(std::vector<Lemma>& out) {
  out.push_back(applier("sdpa_backward-ring",
                        "getitem[i](sdpa_backward(dO, q, k, v, out, lse, m)) with q split into row blocks r and k "
                        "into key blocks b (dim 2; one block: q or k whole), dO, out, lse cut at q's rows and v at "
                        "k's = for dq, concat over r of the sum over b of "
                        "bw(r, b)[0]; for dk/dv, concat over b of the sum over r of bw(r, b)[i], bw(r, b) the "
                        "backward of block (r, b) with the global out/lse rows, sums in every cyclic order; not "
                        "causal, m broadcast over keys",
                        kPattern, overSplits(false)));
  out.push_back(applier("sdpa_backward-causal-ring",
                        "getitem[i](sdpa_backward[causal](...)) with q's rows and k's keys split into equal blocks "
                        "(dO, out, lse cut at q's rows, v at k's) = dq_r = "
                        "bw_causal(r, r)[0] + bw(r, r-1)[0] + ... + bw(r, 0)[0], dk_b = bw_causal(b, b)[i] + "
                        "bw(b+1, b)[i] + ... + bw(n-1, b)[i], concat over the blocks; m broadcast over keys",
                        kPattern, overSplits(true)));
}

}  // namespace tangle::lemmas::detail
