// Mixture-of-experts routing: topk is row-wise, so it commutes with a
// concat along any other dim (each rank routes its own tokens).
#include "lemmas/lemma_util.h"

namespace tangle::lemmas::detail {

namespace {

// getitem[i](topk[d, k, l](concat[c](xs))), c != d = concat[c](getitem[i](topk[d, k, l](x_j)))
std::optional<Id> topkOfConcat(EGraph& g, const Match& m) {
  if (m.subst.integer("c") == m.subst.integer("d")) return std::nullopt;
  static const eg::Symbol topk = eg::intern("topk");
  AttrList a = {m.subst.attr("d"), m.subst.attr("k"), m.subst.attr("l")};
  auto parts = mapPieces(m.subst.list("xs"), [&](Id x) -> std::optional<Id> {
    auto t = make(g, topk, a, {x});
    if (!t) return std::nullopt;
    return make(g, op().getitem, {m.subst.attr("i")}, {*t});
  });
  if (!parts) return std::nullopt;
  return makeConcat(g, m.subst.integer("c"), *parts);
}

}  // namespace

void addMoeLemmas(std::vector<Lemma>& out) {
  out.push_back(applier("topk-concat",
                        "getitem[i](topk[d, k](concat[c](xs))) = concat[c](getitem[i](topk[d, k](x_j))) for c != d",
                        "(getitem[?i] (topk[?d, ?k, ?l] (concat[?c] ?xs...)))", topkOfConcat));
}

}  // namespace tangle::lemmas::detail
