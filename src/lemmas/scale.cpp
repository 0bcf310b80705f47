// Division by a scalar constant moved out of the operators that are linear
// in one operand. Data parallelism makes these: each rank seeds its backward
// with 1/(local batch elements) where the spec has 1/(global ones), so each
// rank's gradients equal the spec's only up to a constant factor until the
// reduction divides by the world size. Pulling the divisions outward lets
// `div-div-constants` and `div-sum` meet the spec's single division.
// Each rule is an identity for every input: op is linear in that operand and
// k is a nonzero 0-d constant (so it broadcasts over anything).
#include "lemmas/lemma_util.h"

namespace tangle::lemmas::detail {

namespace {

bool nonzeroScalar(const EGraph& g, Subst& s) {
  auto k = scalarConstant(g, s.cls("k"));
  return k && *k != 0;
}

struct Linear {
  const char* name;   // lemma name stem
  const char* lhs;    // pattern with (div ?a ?k) in the linear operand
  const char* rhs;    // the same op on ?a, divided by ?k
};

constexpr Linear kLinear[] = {
    {"mul-lhs", "(mul (div ?a ?k) ?b)", "(div (mul ?a ?b) ?k)"},
    {"mul-rhs", "(mul ?b (div ?a ?k))", "(div (mul ?b ?a) ?k)"},
    {"mm-lhs", "(mm (div ?a ?k) ?b)", "(div (mm ?a ?b) ?k)"},
    {"mm-rhs", "(mm ?b (div ?a ?k))", "(div (mm ?b ?a) ?k)"},
    {"transpose", "(transpose[?p, ?q] (div ?a ?k))", "(div (transpose[?p, ?q] ?a) ?k)"},
    {"permute", "(permute[?p] (div ?a ?k))", "(div (permute[?p] ?a) ?k)"},
    {"reshape", "(reshape[?p] (div ?a ?k))", "(div (reshape[?p] ?a) ?k)"},
    {"slice", "(slice[?d, ?s, ?e, ?st] (div ?a ?k))", "(div (slice[?d, ?s, ?e, ?st] ?a) ?k)"},
    {"sum_dim", "(sum_dim[?d, ?keep] (div ?a ?k))", "(div (sum_dim[?d, ?keep] ?a) ?k)"},
    {"expand", "(expand[?s] (div ?a ?k))", "(div (expand[?s] ?a) ?k)"},
    {"gelu_backward", "(gelu_backward[?ap] (div ?a ?k) ?x)", "(div (gelu_backward[?ap] ?a ?x) ?k)"},
};

}  // namespace

void addScaleLemmas(std::vector<Lemma>& out) {
  out.push_back(rewrite("scale-div-add", "div(add(a, b), k) = add(div(a, k), div(b, k)) for a nonzero scalar constant k",
                        "(div (add ?a ?b) ?k)", "(add (div ?a ?k) (div ?b ?k))", nonzeroScalar));
  for (const Linear& l : kLinear) {
    std::string name = std::string("scale-out-") + l.name;
    out.push_back(rewrite(name, std::string(l.lhs) + " = " + l.rhs + " for a nonzero scalar constant k (linear operand)",
                          l.lhs, l.rhs, nonzeroScalar));
  }
}

}  // namespace tangle::lemmas::detail
