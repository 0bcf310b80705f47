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

// sum(add(a1, b1), .., add(an, bn)) = sum(a1, b1, .., an, bn) when every
// term has the sum's shape (no broadcasting). Gradient accumulation adds the
// micro-batch gradients on each rank before the data-parallel sum combines
// the ranks. Only when EVERY term of the sum is such an add: flattening one
// add next to other terms (sum(add(residual, p0), p1)) would make a rank's
// own addition part of a "clean" cross-rank sum (see arith.cpp's note on
// add and sum), and the blame for a missing reduction would move past the add.
Apply flattenAdds(size_t n) {
  return [n](EGraph& g, const Match& m) -> std::optional<Id> {
    const TensorType* out = typeOf(g, m.eclass);
    if (!out) return std::nullopt;
    std::vector<Id> terms;
    for (size_t i = 0; i < n; ++i)
      for (const char* v : {"a", "b"}) {
        Id c = m.subst.cls(v + std::to_string(i));
        const TensorType* t = typeOf(g, c);
        if (!t || t->shape != out->shape) return std::nullopt;
        terms.push_back(c);
      }
    return makeSum(g, terms);
  };
}

}  // namespace

void addScaleLemmas(std::vector<Lemma>& out) {
  out.push_back(rewrite("scale-div-add", "div(add(a, b), k) = add(div(a, k), div(b, k)) for a nonzero scalar constant k",
                        "(div (add ?a ?b) ?k)", "(add (div ?a ?k) (div ?b ?k))", nonzeroScalar));
  for (size_t n = 2; n <= 4; ++n) {  // 2-4 data-parallel ranks
    std::string lhs = "(sum";
    for (size_t i = 0; i < n; ++i) lhs += " (add ?a" + std::to_string(i) + " ?b" + std::to_string(i) + ")";
    lhs += ")";
    out.push_back(applier("sum-of-adds-" + std::to_string(n),
                          "sum(add(a1, b1), .., add(an, bn)) = sum(a1, b1, .., an, bn), n = " + std::to_string(n) +
                              ", all of the sum's shape",
                          lhs, flattenAdds(n)));
  }
  for (const Linear& l : kLinear) {
    std::string name = std::string("scale-out-") + l.name;
    out.push_back(rewrite(name, std::string(l.lhs) + " = " + l.rhs + " for a nonzero scalar constant k (linear operand)",
                          l.lhs, l.rhs, nonzeroScalar));
  }
}

}  // namespace tangle::lemmas::detail
