// Model-level ops that tensor/sequence parallelism distributes.
//
// Dropout is modelled as a deterministic elementwise function of its input
// (the spec and the implementation are assumed to draw the same mask for the
// same element, Entangle's assumption): it then commutes with concat.
#include "lemmas/lemma_util.h"

namespace tangle::lemmas::detail {

namespace {

const eg::Symbol& dropoutSym() {
  static const eg::Symbol s = eg::intern("dropout");
  return s;
}

// getitem[k](dropout[p, t](concat[d](xs))) = concat[d](getitem[k](dropout[p, t](x_i)))
std::optional<Id> dropoutOfConcat(EGraph& g, const Match& m) {
  AttrList a = {m.subst.attr("p"), m.subst.attr("t")};
  auto parts = mapPieces(m.subst.list("xs"), [&](Id x) -> std::optional<Id> {
    auto dr = make(g, dropoutSym(), a, {x});
    if (!dr) return std::nullopt;
    return make(g, op().getitem, {m.subst.attr("k")}, {*dr});
  });
  if (!parts) return std::nullopt;
  return makeConcat(g, m.subst.integer("d"), *parts);
}

}  // namespace

void addModelLemmas(std::vector<Lemma>& out) {
  out.push_back(applier("dropout-concat",
                        "getitem[k](dropout(concat[d](xs))) = concat[d](getitem[k](dropout(x_i))) (elementwise dropout)",
                        "(getitem[?k] (dropout[?p, ?t] (concat[?d] ?xs...)))", dropoutOfConcat));
}

}  // namespace tangle::lemmas::detail
