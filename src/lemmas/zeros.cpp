// Zero padding (`zero` statements, src/infer/zeros.cpp): a class whose data
// says it is a splat of 0 (expand of the constant 0, or a rearrangement of
// one) annihilates products and drops out of sums. Identities over the reals,
// like the rest of the library (0 * inf is not considered).
#include "lemmas/lemma_util.h"

namespace tangle::lemmas::detail {

namespace {

bool isZeroSplat(const EGraph& g, Id c) {
  const eg::ClassData& d = g.data(c);
  return d.tensor() && d.constant && *d.constant == 0.0;
}

// expand[shape of the matched class](0), when an operand of the product is all zeros.
Apply productOfZeros(std::vector<std::string> operands) {
  return [operands](EGraph& g, const Match& m) -> std::optional<Id> {
    bool zero = false;
    for (const auto& v : operands) zero = zero || isZeroSplat(g, m.subst.cls(v));
    const TensorType* t = typeOf(g, m.eclass);
    if (!zero || !t || isZeroSplat(g, m.eclass)) return std::nullopt;
    std::vector<int64_t> shape;
    for (Dim d : t->shape) {
      if (isSymbolic(d)) return std::nullopt;
      shape.push_back(d);
    }
    return make(g, op().expand, {Attr::ints(shape)}, {makeConstant(g, 0)});
  };
}

std::optional<Id> sumWithoutZeros(EGraph& g, const Match& m) {
  std::vector<Id> kept;
  for (Id x : m.subst.list("xs"))
    if (!isZeroSplat(g, x)) kept.push_back(x);
  if (kept.empty() || kept.size() == m.subst.list("xs").size()) return std::nullopt;
  return makeSum(g, kept);
}

// A product whose contracted dim is a concat with all-zero pieces: the sum
// over the other pieces of the product with the matching slice of the other
// operand (the zero pieces contribute nothing). `lhs`: the concat is the left
// operand (split along its last dim kd, the other operand's slices along od).
Apply contractedWithZeros(eg::Symbol sym, bool lhs, int64_t kd, int64_t od) {
  return [=](EGraph& g, const Match& m) -> std::optional<Id> {
    const auto& xs = m.subst.list("xs");
    Id y = m.subst.cls("y");
    auto sizes = sizesAlong(g, xs, kd);
    if (!sizes) return std::nullopt;
    std::vector<Id> terms;
    bool dropped = false;
    int64_t off = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      int64_t n = (*sizes)[i];
      if (isZeroSplat(g, xs[i])) {
        dropped = true;
      } else {
        auto part = makeSlice(g, y, od, off, off + n);
        auto t = part ? (lhs ? make(g, sym, {}, {xs[i], *part}) : make(g, sym, {}, {*part, xs[i]})) : std::nullopt;
        if (!t) return std::nullopt;
        terms.push_back(*t);
      }
      off += n;
    }
    if (!dropped || terms.empty()) return std::nullopt;
    return makeSum(g, terms);
  };
}

// expand[shape](c) for a class known to be a splat of the constant c that
// has no such node yet: zeros of one shape, however computed, become one
// class (else each rearrangement of zeros is a class of its own, and sums
// over them grow without end).
std::optional<Id> canonicalSplat(EGraph& g, const Match& m) {
  const eg::ClassData& d = g.data(m.eclass);
  const TensorType* t = d.tensor();
  if (!d.constant || !t || t->shape.empty()) return std::nullopt;
  std::vector<int64_t> shape;
  for (Dim x : t->shape) {
    if (isSymbolic(x)) return std::nullopt;
    shape.push_back(x);
  }
  for (const eg::ENode& n : g.eclass(m.eclass).nodes)
    if (n.op == op().expand) return std::nullopt;
  return make(g, op().expand, {Attr::ints(shape)}, {makeConstant(g, *d.constant)});
}

// add(x, zeros) = x (and zeros + x, x - zeros) for an all-zero tensor operand,
// when the result keeps x's type: the sum of slice_backward's zero-padded
// pieces of a gradient (each piece placed in its own rows). The scalar 0 is
// arange.cpp's add-zero-*.
Apply withoutZeroTerm() {
  return [](EGraph& g, const Match& m) -> std::optional<Id> {
    Id x = m.subst.cls("x"), z = m.subst.cls("z");
    const TensorType *zt = typeOf(g, z), *xt = typeOf(g, x), *out = typeOf(g, m.eclass);
    if (!isZeroSplat(g, z) || !zt || zt->shape.empty() || !xt || !out || xt->dtype != out->dtype ||
        xt->shape != out->shape)
      return std::nullopt;
    return g.find(x);
  };
}

}  // namespace

void addZeroLemmas(std::vector<Lemma>& out) {
  for (const char* r : {"reshape[?a]", "transpose[?a, ?b]", "permute[?a]", "slice[?a, ?b, ?c, ?d]", "concat[?a]"}) {
    std::string name = r;
    name = "splat-" + name.substr(0, name.find('['));
    std::string lhs = std::string("(") + r + (name == "splat-concat" ? " ?xs...)" : " ?x)");
    Lemma l = applier(name, "a rearrangement of a splat of c (zeros) = expand[shape](c)", lhs, canonicalSplat);
    l.rule.onConstants = true;
    out.push_back(std::move(l));
  }
  out.push_back(applier("mm-zeros", "mm(a, b) = 0 when a or b is all zeros (zero padding)", "(mm ?a ?b)",
                        productOfZeros({"a", "b"})));
  out.push_back(applier("bmm-zeros", "bmm(a, b) = 0 when a or b is all zeros (zero padding)", "(bmm ?a ?b)",
                        productOfZeros({"a", "b"})));
  out.push_back(applier("mm-zero-rows", "mm(y, concat[0](b_i)) = sum over the non-zero b_i of mm(y[:, k_i], b_i)",
                        "(mm ?y (concat[0] ?xs...))", contractedWithZeros(op().mm, false, 0, 1)));
  out.push_back(applier("mm-zero-cols", "mm(concat[1](a_i), y) = sum over the non-zero a_i of mm(a_i, y[k_i, :])",
                        "(mm (concat[1] ?xs...) ?y)", contractedWithZeros(op().mm, true, 1, 0)));
  out.push_back(applier("bmm-zero-rows", "bmm(y, concat[1](b_i)) = sum over the non-zero b_i of bmm(y[:, :, k_i], b_i)",
                        "(bmm ?y (concat[1] ?xs...))", contractedWithZeros(op().bmm, false, 1, 2)));
  out.push_back(applier("bmm-zero-cols", "bmm(concat[2](a_i), y) = sum over the non-zero a_i of bmm(a_i, y[:, k_i])",
                        "(bmm (concat[2] ?xs...) ?y)", contractedWithZeros(op().bmm, true, 2, 1)));
  out.push_back(applier("add-zeros-rhs", "add(x, zeros) = x (x's type kept)", "(add ?x ?z)", withoutZeroTerm()));
  out.push_back(applier("add-zeros-lhs", "add(zeros, x) = x (x's type kept)", "(add ?z ?x)", withoutZeroTerm()));
  out.push_back(applier("sub-zeros", "sub(x, zeros) = x (x's type kept)", "(sub ?x ?z)", withoutZeroTerm()));
  out.push_back(applier("sum-zeros", "sum(x_i..., 0, ...) = sum(x_i...): all-zero terms drop out", "(sum ?xs...)",
                        sumWithoutZeros));
}

}  // namespace tangle::lemmas::detail
