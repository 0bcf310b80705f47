// Double negation. Without it, neg-slice and neg-concat build ever deeper
// towers neg(neg(...)) around rotate-half RoPE (cat(-x2, x1)) whenever no
// clean expression exists, so the search ends at a limit (inconclusive)
// instead of a violation.
#include "lemmas/lemma_util.h"

namespace tangle::lemmas::detail {

void addSignLemmas(std::vector<Lemma>& out) {
  out.push_back(rewrite("neg-neg", "neg(neg(x)) = x (exact in floating point)", "(neg (neg ?x))", "?x"));
}

}  // namespace tangle::lemmas::detail
