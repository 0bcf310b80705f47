// Zero padding (`zero` statements, src/infer/zeros.cpp): a class whose data
// says it is a splat of 0 (expand of the constant 0, or a rearrangement of
// one) annihilates products and drops out of sums. Identities over the reals,
// like the rest of the library (0 * inf is not considered).
#include <algorithm>

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
    return makeSplat(g, *t, 0);
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

// expand[shape](cast[dt](c)) for a class known to be a splat of the constant
// c that has no expand node yet: zeros of one shape and dtype, however
// computed, become one class (else each rearrangement of zeros is a class of
// its own, and sums over them grow without end). Of one dtype only: zeros in
// f16 and zeros in f32 are different tensors (makeSplat).
std::optional<Id> canonicalSplat(EGraph& g, const Match& m) {
  const eg::ClassData& d = g.data(m.eclass);
  const TensorType* t = d.tensor();
  if (!d.constant || !t || t->shape.empty()) return std::nullopt;
  for (const eg::ENode& n : g.eclass(m.eclass).nodes)
    if (n.op == op().expand) return std::nullopt;
  return makeSplat(g, *t, *d.constant);
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

// add(concat[d](a_i), concat[d](b_j)) of one type where, at every position
// along d, one of the two operands is a zero splat: the concat of the other
// operand's pieces there (each piece, or its slice, kept in place). This is
// what a backward of many slices of one tensor computes: each slice's gradient
// is zero-padded to the full size (slice_backward) and the padded pieces are
// added; their sum is the pieces side by side. Without it the sum is only
// reached by distributing the add over both splits (add-concat-*, add-slices),
// whose intermediate slices of sums grow the e-graph past its limit.
std::optional<Id> addOfDisjointPieces(EGraph& g, const Match& m) {
  Id a = m.subst.cls("a"), b = m.subst.cls("b");
  const TensorType *at = typeOf(g, a), *bt = typeOf(g, b), *out = typeOf(g, m.eclass);
  if (!at || !bt || !out || at->dtype != out->dtype || bt->dtype != out->dtype || at->shape != out->shape ||
      bt->shape != out->shape)
    return std::nullopt;
  std::vector<int64_t> shape;
  for (Dim x : out->shape) {
    if (isSymbolic(x)) return std::nullopt;
    shape.push_back(x);
  }
  struct Piece {
    Id id;
    int64_t start, end;  // along d, in the operand
    bool zero;
  };
  auto piecesAlong = [&](const ENode& n, int64_t d) -> std::optional<std::vector<Piece>> {
    auto sizes = sizesAlong(g, n.children, d);
    if (!sizes) return std::nullopt;
    std::vector<Piece> ps;
    int64_t off = 0;
    bool anyZero = false;
    for (size_t i = 0; i < n.children.size(); ++i) {
      bool z = isZeroSplat(g, n.children[i]);
      anyZero = anyZero || z;
      ps.push_back({g.find(n.children[i]), off, off + (*sizes)[i], z});
      off += (*sizes)[i];
    }
    if (!anyZero) return std::nullopt;  // no padding: nothing is disjoint
    return ps;
  };
  for (const ENode* na : nodesOf(g, a, op().concat)) {
    auto d = ops::attrInt(attrsOf(*na), 0);
    if (!d || *d < 0 || *d >= static_cast<int64_t>(shape.size())) continue;
    auto pa = piecesAlong(*na, *d);
    if (!pa) continue;
    for (const ENode* nb : nodesOf(g, b, op().concat)) {
      if (ops::attrInt(attrsOf(*nb), 0) != d) continue;
      auto pb = piecesAlong(*nb, *d);
      if (!pb) continue;
      // Walk both splits at once; each run is (source piece, start, end) or zeros.
      struct Run {
        const Piece* src;  // nullptr: zeros
        int64_t start, end;
      };
      std::vector<Run> runs;
      bool disjoint = true;
      size_t i = 0, j = 0;
      for (int64_t pos = 0; pos < shape[*d] && disjoint;) {
        const Piece &x = (*pa)[i], &y = (*pb)[j];
        int64_t end = std::min(x.end, y.end);
        const Piece* src = x.zero ? (y.zero ? nullptr : &y) : (y.zero ? &x : nullptr);
        if (!x.zero && !y.zero) disjoint = false;
        if (!runs.empty() && runs.back().src == src && runs.back().end == pos) runs.back().end = end;
        else runs.push_back({src, pos, end});
        pos = end;
        if (x.end == end) ++i;
        if (y.end == end) ++j;
      }
      if (!disjoint) continue;
      std::vector<Id> parts;
      for (const Run& r : runs) {
        std::optional<Id> part;
        if (!r.src) {
          TensorType zs = *out;
          zs.shape[*d] = r.end - r.start;
          part = makeSplat(g, zs, 0);
        } else {
          part = makeSlice(g, r.src->id, *d, r.start - r.src->start, r.end - r.src->start);
        }
        if (!part) return std::nullopt;
        parts.push_back(*part);
      }
      return makeConcat(g, *d, parts);
    }
  }
  return std::nullopt;
}

}  // namespace

void addZeroLemmas(std::vector<Lemma>& out) {
  for (const char* r : {"reshape[?a]", "transpose[?a, ?b]", "permute[?a]", "slice[?a, ?b, ?c, ?d]", "concat[?a]"}) {
    std::string name = r;
    name = "splat-" + name.substr(0, name.find('['));
    std::string lhs = std::string("(") + r + (name == "splat-concat" ? " ?xs...)" : " ?x)");
    Lemma l = applier(name, "a rearrangement of a splat of c (zeros) = expand[shape](c)", lhs, canonicalSplat);
    l.rule.onConstants = true;
    out.push_back(readsOnlyMatch(std::move(l)));
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
  out.push_back(applier("add-disjoint-pieces",
                        "add(concat[d](a_i), concat[d](b_j)) = concat[d] of the non-zero pieces, when at every "
                        "position along d one operand's piece is zeros (zero-padded disjoint pieces)",
                        "(add ?a ?b)", addOfDisjointPieces));
  out.push_back(applier("sum-zeros", "sum(x_i..., 0, ...) = sum(x_i...): all-zero terms drop out", "(sum ?xs...)",
                        sumWithoutZeros));
}

}  // namespace tangle::lemmas::detail
