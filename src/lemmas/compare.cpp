// Comparisons (lt le gt ge eq ne) and logical and/or are elementwise with
// broadcasting, like add: they distribute over a concat operand. Routers
// build their expert masks this way (one_hot(idx) = idx[..., None] == arange(E)).
#include "lemmas/lemma_util.h"

namespace tangle::lemmas::detail {

void addCompareLemmas(std::vector<Lemma>& out) {
  for (const char* f : {"lt", "le", "gt", "ge", "eq", "ne", "and", "or"}) {
    eg::Symbol sym = eg::intern(f);
    std::string name = f;
    out.push_back(applier(name + "-concat-lhs",
                          name + "(concat[d](x1..xn), y) = concat[d](" + name + "(x_i, y_i)), y_i = y if y broadcasts "
                                 "along d, else y's pieces of the same split",
                          "(" + name + " (concat[?d] ?xs...) ?y)",
                          [sym](EGraph& g, const Match& m) { return distributeOverConcat(g, m, sym, {}, {"xs", "y"}, 0); }));
    out.push_back(applier(name + "-concat-rhs", name + "(y, concat[d](x1..xn)) = concat[d](" + name + "(y_i, x_i)), as -lhs",
                          "(" + name + " ?y (concat[?d] ?xs...))",
                          [sym](EGraph& g, const Match& m) { return distributeOverConcat(g, m, sym, {}, {"y", "xs"}, 1); }));
  }
}

}  // namespace tangle::lemmas::detail
