// one_hot and embedding lookups over concat (comparisons are in compare.cpp, where in vocab.cpp): the
// selection ops a loss's backward is lowered into (canon_grad.cpp:
// nll_loss_backward is one_hot(where(t != ignore, t, 0)) * where(t != ignore,
// -g, 0)). A batch split into microbatches (pipeline schedules, gradient
// accumulation) splits them along the rows, so they distribute over a concat
// as add/mul do.
#include "lemmas/lemma_util.h"

namespace tangle::lemmas::detail {

void addSelectLemmas(std::vector<Lemma>& out) {
  // one_hot appends the class dim: a concat along an index dim stays one.
  eg::Symbol oneHot = eg::intern("one_hot");
  out.push_back(applier("one_hot-concat", "one_hot[k](concat[d](xs)) = concat[d](one_hot[k](x_i))",
                        "(one_hot[?k] (concat[?d] ?xs...))", [oneHot](EGraph& g, const Match& m) -> std::optional<Id> {
                          int64_t d = m.subst.integer("d");
                          if (d < 0) return std::nullopt;
                          AttrList a = {m.subst.attr("k")};
                          auto parts = mapPieces(m.subst.list("xs"), [&](Id x) { return make(g, oneHot, a, {x}); });
                          if (!parts) return std::nullopt;
                          return makeConcat(g, d, *parts);
                        }));
  // A lookup of a batch of ids split along an index dim (microbatches).
  eg::Symbol indexRows = eg::intern("index_rows");
  out.push_back(applier("index_rows-concat-ids", "index_rows(w, concat[d](ids)) = concat[d](index_rows(w, ids_i))",
                        "(index_rows ?w (concat[?d] ?xs...))", [indexRows](EGraph& g, const Match& m) -> std::optional<Id> {
                          int64_t d = m.subst.integer("d");
                          if (d < 0) return std::nullopt;
                          Id w = m.subst.cls("w");
                          auto parts = mapPieces(m.subst.list("xs"), [&](Id x) { return make(g, indexRows, {}, {w, x}); });
                          if (!parts) return std::nullopt;
                          return makeConcat(g, d, *parts);
                        }));
  // A table padded past its real rows (a vocabulary padded to a multiple of the
  // degree) and cut back to them: every id the cut table's lookup accepts is
  // below e (an id outside a table raises, so the lookup itself requires it),
  // and those rows are the same in the padded table.
  out.push_back(rewrite("index_rows-prefix", "index_rows(slice[0, 0, e](w), ids) = index_rows(w, ids), ids in [0, e)",
                        "(index_rows (slice[0, 0, ?e, 1] ?w) ?ids)", "(index_rows ?w ?ids)"));
}

}  // namespace tangle::lemmas::detail
