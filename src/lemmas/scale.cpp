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

// sum(add(a, b), x2, ..) = sum(a, b, x2', ..), where every further term
// that holds an add(c, d) is flattened too, when the flattened terms all have
// the sum's shape (no broadcasting: each is one term of the elementwise sum).
// Gradient accumulation adds the micro-batch gradients on a rank before the
// data-parallel sum combines the ranks.
std::optional<Id> flattenAddInSum(EGraph& g, const Match& m) {
  const TensorType* out = typeOf(g, m.eclass);
  if (!out) return std::nullopt;
  auto sameShape = [&](Id c) {
    const TensorType* t = typeOf(g, c);
    return t && t->shape == out->shape;
  };
  Id a = m.subst.cls("a"), b = m.subst.cls("b");
  if (!sameShape(a) || !sameShape(b)) return std::nullopt;
  std::vector<Id> terms{a, b};
  for (Id x : m.subst.list("xs")) {
    Id cx = g.find(x);
    const ENode* add = nullptr;
    for (const ENode* n : nodesOf(g, cx, op().add)) {
      bool selfRef = g.find(n->children[0]) == cx || g.find(n->children[1]) == cx;
      if (!selfRef && sameShape(n->children[0]) && sameShape(n->children[1])) {
        add = n;
        break;
      }
    }
    if (add) terms.insert(terms.end(), add->children.begin(), add->children.end());
    else terms.push_back(x);
  }
  return makeSum(g, terms);
}

}  // namespace

void addScaleLemmas(std::vector<Lemma>& out) {
  out.push_back(rewrite("scale-div-add", "div(add(a, b), k) = add(div(a, k), div(b, k)) for a nonzero scalar constant k",
                        "(div (add ?a ?b) ?k)", "(add (div ?a ?k) (div ?b ?k))", nonzeroScalar));
  out.push_back(applier("sum-add-flatten", "sum(add(a, b), xs..) = sum(a, b, xs..) (an add among xs flattened too) when the terms have the sum's shape",
                        "(sum (add ?a ?b) ?xs...)", flattenAddInSum));
  for (const Linear& l : kLinear) {
    std::string name = std::string("scale-out-") + l.name;
    out.push_back(rewrite(name, std::string(l.lhs) + " = " + l.rhs + " for a nonzero scalar constant k (linear operand)",
                          l.lhs, l.rhs, nonzeroScalar));
  }
}

}  // namespace tangle::lemmas::detail
