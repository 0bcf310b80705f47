// Scaled-dot-product attention over heads or batches split into pieces.
//
// Attention is independent per (batch, query head): the result's rows for a
// block of query heads depend only on those heads' queries and on the kv
// heads they read. With G = Hq / Hkv query heads per kv head, a piece of
// Hq_i query heads reads exactly its Hkv_i kv heads iff Hq_i = G * Hkv_i for
// every piece (then piece i starts at query head G * (kv heads before it)).
// The lemmas check that grouping: a piece of q next to a piece of k/v from
// another group, or k/v split along another dim (the sequence), never
// matches. The mask is used whole where it broadcasts along the split dim,
// else split into the same pieces.
#include "lemmas/lemma_util.h"

namespace tangle::lemmas::detail {

std::optional<std::vector<Id>> maskPieces(EGraph& g, Id m, int64_t d, const std::vector<int64_t>& sizes) {
  const TensorType* t = typeOf(g, m);
  if (!t) return std::nullopt;
  int64_t md = d - (4 - t->rank());  // the mask aligns right
  if (md < 0 || t->shape[md] == 1) return std::vector<Id>(sizes.size(), m);
  return piecesOf(g, m, md, std::vector<Dim>(sizes.begin(), sizes.end()));
}

namespace {

// The pieces' query sizes along d when q, k, v (and the rest of `same`, shaped
// like q) are split consistently: along the batch (d = 0) k/v pieces match q's;
// along the heads (d = 1) each piece keeps the query/kv grouping.
std::optional<std::vector<int64_t>> groupedSizes(const EGraph& g, int64_t d, const std::vector<Id>& qs,
                                                 const std::vector<Id>& ks, const std::vector<Id>& vs,
                                                 const std::vector<const std::vector<Id>*>& same) {
  size_t n = qs.size();
  if (n < 2 || ks.size() != n || vs.size() != n) return std::nullopt;
  auto hq = sizesAlong(g, qs, d), hk = sizesAlong(g, ks, d), hv = sizesAlong(g, vs, d);
  if (!hq || !hk || !hv || *hk != *hv) return std::nullopt;
  for (const auto* xs : same) {
    auto s = xs->size() == n ? sizesAlong(g, *xs, d) : std::nullopt;
    if (!s || *s != *hq) return std::nullopt;
  }
  int64_t tq = 0, tk = 0;
  for (size_t i = 0; i < n; ++i) tq += (*hq)[i], tk += (*hk)[i];
  if (d == 0) return *hq == *hk ? hq : std::nullopt;
  if (tk <= 0 || tq % tk) return std::nullopt;
  for (size_t i = 0; i < n; ++i)
    if ((*hk)[i] <= 0 || (*hq)[i] != (*hk)[i] * (tq / tk)) return std::nullopt;
  return hq;
}

// concat[d](getitem[i](op[c, s](operands of piece j..., mask_j))) over the pieces j.
std::optional<Id> perPiece(EGraph& g, const Match& m, eg::Symbol sym, int64_t d, const std::vector<int64_t>& sizes,
                           const std::vector<const std::vector<Id>*>& lists) {
  auto masks = maskPieces(g, m.subst.cls("m"), d, sizes);
  if (!masks) return std::nullopt;
  AttrList a = {m.subst.attr("c"), m.subst.attr("s")};
  std::vector<Id> parts;
  for (size_t j = 0; j < sizes.size(); ++j) {
    std::vector<Id> kids;
    for (const auto* l : lists) kids.push_back((*l)[j]);
    kids.push_back((*masks)[j]);
    auto r = make(g, sym, a, kids);
    auto item = r ? make(g, op().getitem, {m.subst.attr("i")}, {*r}) : std::nullopt;
    if (!item) return std::nullopt;
    parts.push_back(*item);
  }
  return makeConcat(g, d, parts);
}

Apply forward(int64_t d) {
  return [d](EGraph& g, const Match& m) -> std::optional<Id> {
    const auto &qs = m.subst.list("qs"), &ks = m.subst.list("ks"), &vs = m.subst.list("vs");
    auto sizes = groupedSizes(g, d, qs, ks, vs, {});
    if (!sizes) return std::nullopt;
    return perPiece(g, m, op().sdpa, d, *sizes, {&qs, &ks, &vs});
  };
}

Apply backward(int64_t d) {
  return [d](EGraph& g, const Match& m) -> std::optional<Id> {
    const auto &gs = m.subst.list("gs"), &qs = m.subst.list("qs"), &ks = m.subst.list("ks"),
               &vs = m.subst.list("vs"), &os = m.subst.list("os"), &ls = m.subst.list("ls");
    auto sizes = groupedSizes(g, d, qs, ks, vs, {&gs, &os, &ls});
    if (!sizes) return std::nullopt;
    return perPiece(g, m, op().sdpaBackward, d, *sizes, {&gs, &qs, &ks, &vs, &os, &ls});
  };
}

}  // namespace

void addSdpaLemmas(std::vector<Lemma>& out) {
  for (int64_t d : {0, 1}) {
    std::string what = d == 0 ? "batch" : "heads", c = "(concat[" + std::to_string(d) + "] ";
    out.push_back(applier("sdpa-" + what,
                          "getitem[i](sdpa(concat[d](q_j), concat[d](k_j), concat[d](v_j), m)) = "
                          "concat[d](getitem[i](sdpa(q_j, k_j, v_j, m_j))), d = " + std::to_string(d) + " (" + what +
                              "), pieces keeping the query/kv head grouping",
                          "(getitem[?i] (sdpa[?c, ?s] " + c + "?qs...) " + c + "?ks...) " + c + "?vs...) ?m))",
                          forward(d)));
    out.push_back(applier("sdpa_backward-" + what,
                          "getitem[i](sdpa_backward(concat[d] of dO, q, k, v, out, lse; m)) = "
                          "concat[d](getitem[i](sdpa_backward(pieces, m_j))), d = " + std::to_string(d) + " (" + what +
                              "), pieces keeping the query/kv head grouping",
                          "(getitem[?i] (sdpa_backward[?c, ?s] " + c + "?gs...) " + c + "?qs...) " + c + "?ks...) " + c +
                              "?vs...) " + c + "?os...) " + c + "?ls...) ?m))",
                          backward(d)));
  }
}

}  // namespace tangle::lemmas::detail
