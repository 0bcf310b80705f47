// Grouped-query attention when the query heads are split finer than the kv
// heads (the TP degree exceeds the number of kv heads: a kv head is
// replicated on a group of ranks, each rank holding part of its query heads).
//
// * concat-equal-pieces: two concat[d] nodes of one class whose pieces have
//   the same sizes along d have equal pieces (concat is injective). A kv
//   weight given as concat(D0.w, D2.w) and as concat(D1.w, D3.w) thereby
//   makes D0.w = D1.w, so per-rank products over it meet.
// * sdpa-heads-subgroup: with G = Hq / Hkv query heads per kv head, a block
//   of query heads [Q, Q + h) lying inside one kv head's group reads only
//   that kv head: sdpa(q_j, k[kv], v[kv]) with local grouping h. Blocks that
//   cover whole groups read their kv heads as in sdpa-heads.
#include "lemmas/lemma_util.h"

namespace tangle::lemmas::detail {

namespace {

std::optional<Id> mergeEqualPieces(EGraph& g, const Match& m) {
  const auto& xs = m.subst.list("xs");
  int64_t d = m.subst.attr("d").i;
  auto dims = dimsAlong(g, xs, d);
  if (!dims) return std::nullopt;
  std::vector<std::pair<Id, Id>> pairs;
  for (const ENode* n : nodesOf(g, m.eclass, op().concat)) {
    if (attrsOf(*n).empty() || attrsOf(*n)[0].i != d || n->children.size() != xs.size()) continue;
    auto other = dimsAlong(g, n->children, d);
    if (!other || !sameDims(g.symbols(), *dims, *other)) continue;
    for (size_t i = 0; i < xs.size(); ++i)
      if (g.find(xs[i]) != g.find(n->children[i])) pairs.emplace_back(xs[i], n->children[i]);
  }
  for (auto [a, b] : pairs) g.merge(a, b);
  return std::nullopt;  // the merges are the rule's whole effect
}

// Mask for query heads [q0, q0 + h) of the [B, H, L, S] scores: whole where it
// broadcasts along the heads, else its slice.
std::optional<Id> maskFor(EGraph& g, Id mask, int64_t q0, int64_t h) {
  const TensorType* t = typeOf(g, mask);
  if (!t) return std::nullopt;
  int64_t md = 1 - (4 - t->rank());  // the mask aligns right
  if (md < 0 || t->shape[md] == 1) return mask;
  return makeSlice(g, mask, md, q0, q0 + h);
}

std::optional<Id> sdpaSubgroups(EGraph& g, const Match& m) {
  const auto& qs = m.subst.list("qs");
  Id k = m.subst.cls("k"), v = m.subst.cls("v");
  auto hq = sizesAlong(g, qs, 1);
  auto hk = sizeOf(g, k, 1), hv = sizeOf(g, v, 1);
  if (!hq || !hk || !hv || *hk != *hv || *hk <= 0) return std::nullopt;
  int64_t total = 0;
  for (int64_t h : *hq) total += h;
  if (total % *hk) return std::nullopt;
  int64_t G = total / *hk;
  // Each piece's kv head range, checked before anything is built.
  bool subgroup = false;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  int64_t q0 = 0;
  for (int64_t h : *hq) {
    if (h <= 0) return std::nullopt;
    if (q0 % G == 0 && h % G == 0) {  // whole groups: kv heads [q0/G, (q0+h)/G)
      ranges.emplace_back(q0 / G, (q0 + h) / G);
    } else if (q0 / G == (q0 + h - 1) / G) {  // inside one group: that kv head only
      ranges.emplace_back(q0 / G, q0 / G + 1);
      subgroup = true;
    } else {
      return std::nullopt;  // straddles a group boundary
    }
    q0 += h;
  }
  // Splits that keep whole groups everywhere are sdpa-heads' (over k/v pieces).
  if (!subgroup) return std::nullopt;
  AttrList a = {m.subst.attr("c"), m.subst.attr("s")};
  std::vector<Id> parts;
  q0 = 0;
  for (size_t j = 0; j < qs.size(); ++j) {
    auto [lo, hi] = ranges[j];
    int64_t h = (*hq)[j];
    auto kj = makeSlice(g, k, 1, lo, hi), vj = makeSlice(g, v, 1, lo, hi);
    auto mj = maskFor(g, m.subst.cls("m"), q0, h);
    if (!kj || !vj || !mj) return std::nullopt;
    auto r = make(g, op().sdpa, a, {qs[j], *kj, *vj, *mj});
    auto item = r ? make(g, op().getitem, {m.subst.attr("i")}, {*r}) : std::nullopt;
    if (!item) return std::nullopt;
    parts.push_back(*item);
    q0 += h;
  }
  return makeConcat(g, 1, parts);
}

}  // namespace

void addGqaLemmas(std::vector<Lemma>& out) {
  out.push_back(applier("concat-equal-pieces",
                        "concat[d](a_i) = concat[d](b_i) with size_d(a_i) = size_d(b_i) for all i => a_i = b_i",
                        "(concat[?d] ?xs...)", mergeEqualPieces));
  out.push_back(applier("sdpa-heads-subgroup",
                        "getitem[i](sdpa(concat[1](q_j), k, v, m)) = concat[1](getitem[i](sdpa(q_j, k[kv_j], "
                        "v[kv_j], m_j))) where each q_j lies in one kv head's group (or covers whole groups)",
                        "(getitem[?i] (sdpa[?c, ?s] (concat[1] ?qs...) ?k ?v ?m))", sdpaSubgroups));
}

}  // namespace tangle::lemmas::detail
