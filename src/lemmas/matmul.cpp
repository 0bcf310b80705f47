// Matrix products over concat and sum: mm, bmm, matmul.
#include "lemmas/lemma_util.h"
#include "sym/context.h"

namespace tangle::lemmas::detail {

namespace {

// P(concat[d](xs), y) = concat[outDim](P(x_i, y_i)) (xsOnLeft) or
// P(y, concat[d](xs)) = concat[outDim](P(y_i, x_i)), where y_i = y when
// `split` is false, else y's pieces along yDim with the same split.
std::optional<Id> concatProduct(EGraph& g, eg::Symbol sym, const std::vector<Id>& xs, Id y, bool xsOnLeft,
                                int64_t outDim, bool split, int64_t yDim, const std::vector<Dim>& sizes) {
  std::vector<Id> ys(xs.size(), y);
  if (split) {
    auto p = piecesOf(g, y, yDim, sizes);
    if (!p) return std::nullopt;
    ys = std::move(*p);
  }
  std::vector<Id> parts;
  for (size_t i = 0; i < xs.size(); ++i) {
    auto r = xsOnLeft ? make(g, sym, {}, {xs[i], ys[i]}) : make(g, sym, {}, {ys[i], xs[i]});
    if (!r) return std::nullopt;
    parts.push_back(*r);
  }
  return makeConcat(g, outDim, parts);
}

// P(concat[k](a1..an), concat[k'](b1..bn)) = sum(P(a_i, b_i)) with the inner
// (contracted) dims split the same way: sizes(a_i, ka) == sizes(b_i, kb).
std::optional<Id> innerSplit(EGraph& g, eg::Symbol sym, const std::vector<Id>& as, const std::vector<Id>& bs,
                             int64_t ka, int64_t kb) {
  if (as.size() != bs.size()) return std::nullopt;
  auto sa = dimsAlong(g, as, ka), sb = dimsAlong(g, bs, kb);
  if (!sa || !sb || !sameDims(g.symbols(), *sa, *sb)) return std::nullopt;
  return zipSum(g, sym, as, bs);
}

// Concat along a fixed dim of one operand, the other operand kept whole.
Apply fixedDim(eg::Symbol sym, bool xsOnLeft, int64_t outDim) {
  return [=](EGraph& g, const Match& m) -> std::optional<Id> {
    return concatProduct(g, sym, m.subst.list("xs"), m.subst.cls("y"), xsOnLeft, outDim, false, 0, {});
  };
}

// bmm over a batch concat: the other operand is split along its batch dim too.
Apply bmmBatch(bool xsOnLeft) {
  return [=](EGraph& g, const Match& m) -> std::optional<Id> {
    const auto& xs = m.subst.list("xs");
    auto sizes = dimsAlong(g, xs, 0);
    if (!sizes) return std::nullopt;
    return concatProduct(g, op().bmm, xs, m.subst.cls("y"), xsOnLeft, 0, true, 0, *sizes);
  };
}

Apply inner(eg::Symbol sym, int64_t ka, int64_t kb) {
  return [=](EGraph& g, const Match& m) { return innerSplit(g, sym, m.subst.list("as"), m.subst.list("bs"), ka, kb); };
}

Apply overSum(eg::Symbol sym, bool sumOnLeft) {
  return [=](EGraph& g, const Match& m) -> std::optional<Id> {
    Id y = m.subst.cls("y");
    auto parts = mapPieces(m.subst.list("xs"), [&](Id x) { return sumOnLeft ? make(g, sym, {}, {x, y}) : make(g, sym, {}, {y, x}); });
    if (!parts) return std::nullopt;
    return makeSum(g, *parts);
  };
}

// matmul with a concat operand (both operands of rank >= 2):
//   split rows of the left / columns of the right  -> concat of products;
//   split the contracted dim on both sides          -> sum of products;
//   split a batch dim                               -> concat, the other operand
//     kept whole where it broadcasts, else split the same way.
Apply matmulConcat(bool xsOnLeft) {
  return [=](EGraph& g, const Match& m) -> std::optional<Id> {
    const auto& xs = m.subst.list("xs");
    int64_t d = m.subst.integer("d");
    Id y = m.subst.cls("y");
    const TensorType* out = typeOf(g, m.eclass);
    const TensorType* x0 = typeOf(g, xs[0]);
    const TensorType* yt = typeOf(g, y);
    auto sizes = dimsAlong(g, xs, d);
    if (!out || !x0 || !yt || !sizes || x0->rank() < 2 || yt->rank() < 2) return std::nullopt;
    int64_t rx = x0->rank(), ry = yt->rank(), R = out->rank();
    const eg::Symbol mm = op().matmul;
    if (xsOnLeft && d == rx - 2) return concatProduct(g, mm, xs, y, true, R - 2, false, 0, {});
    if (!xsOnLeft && d == rx - 1) return concatProduct(g, mm, xs, y, false, R - 1, false, 0, {});
    if (xsOnLeft && d == rx - 1) {  // contracted: y must be split along ry-2 the same way
      auto ys = piecesOf(g, y, ry - 2, *sizes, /*allowSlices=*/false);
      if (!ys || ys->size() != xs.size()) return std::nullopt;
      return innerSplit(g, mm, xs, *ys, rx - 1, ry - 2);
    }
    if (!xsOnLeft && d == rx - 2) {
      auto ys = piecesOf(g, y, ry - 1, *sizes, /*allowSlices=*/false);
      if (!ys || ys->size() != xs.size()) return std::nullopt;
      return innerSplit(g, mm, *ys, xs, ry - 1, rx - 2);
    }
    // Batch dim.
    int64_t D = d + (R - rx);
    Dim total = totalDim(g.symbols(), *sizes);
    if (D < 0 || D >= R - 2 || !sym::dimEqual(g.symbols(), out->shape[D], total)) return std::nullopt;
    int64_t yd = D - (R - ry);
    bool whole = yd < 0 || yt->shape[yd] == 1;
    if (!whole && !sym::dimEqual(g.symbols(), yt->shape[yd], total)) return std::nullopt;
    return concatProduct(g, mm, xs, y, xsOnLeft, D, !whole, yd, *sizes);
  };
}

// transpose of the last two dims of a product: (a b)^T = b^T a^T.
std::optional<Id> transposeProduct(EGraph& g, const Match& m, eg::Symbol sym) {
  Id a = m.subst.cls("a"), b = m.subst.cls("b");
  const TensorType *ta = typeOf(g, a), *tb = typeOf(g, b), *out = typeOf(g, m.eclass);
  if (!ta || !tb || !out || ta->rank() < 2 || tb->rank() < 2) return std::nullopt;
  int64_t p = m.subst.integer("p"), q = m.subst.integer("q"), R = out->rank();
  if (std::min(p, q) != R - 2 || std::max(p, q) != R - 1) return std::nullopt;
  auto bt = make(g, op().transpose, {Attr::integer(tb->rank() - 2), Attr::integer(tb->rank() - 1)}, {b});
  auto at = make(g, op().transpose, {Attr::integer(ta->rank() - 2), Attr::integer(ta->rank() - 1)}, {a});
  if (!bt || !at) return std::nullopt;
  return make(g, sym, {}, {*bt, *at});
}

}  // namespace

void addMatmulLemmas(std::vector<Lemma>& out) {
  const ops::Syms& o = op();
  // mm: [n,k] x [k,m]
  out.push_back(applier("mm-concat-rows", "mm(concat[0](xs), y) = concat[0](mm(x_i, y))", "(mm (concat[0] ?xs...) ?y)",
                        fixedDim(o.mm, true, 0)));
  out.push_back(applier("mm-concat-cols", "mm(y, concat[1](xs)) = concat[1](mm(y, x_i))", "(mm ?y (concat[1] ?xs...))",
                        fixedDim(o.mm, false, 1)));
  out.push_back(applier("mm-concat-inner", "mm(concat[1](a1..an), concat[0](b1..bn)) = sum(mm(a_i, b_i)), equal k-splits",
                        "(mm (concat[1] ?as...) (concat[0] ?bs...))", inner(o.mm, 1, 0)));
  out.push_back(applier("mm-sum-lhs", "mm(sum(xs), y) = sum(mm(x_i, y))", "(mm (sum ?xs...) ?y)", overSum(o.mm, true)));
  out.push_back(applier("mm-sum-rhs", "mm(y, sum(xs)) = sum(mm(y, x_i))", "(mm ?y (sum ?xs...))", overSum(o.mm, false)));
  // A product of a slice of rows (or columns) is that slice of the product.
  out.push_back(rewrite("mm-slice-rows", "mm(slice[0, s, e](x), y) = slice[0, s, e](mm(x, y))",
                        "(mm (slice[0, ?s, ?e, 1] ?x) ?y)", "(slice[0, ?s, ?e, 1] (mm ?x ?y))"));
  out.push_back(rewrite("mm-slice-cols", "mm(y, slice[1, s, e](w)) = slice[1, s, e](mm(y, w))",
                        "(mm ?y (slice[1, ?s, ?e, 1] ?w))", "(slice[1, ?s, ?e, 1] (mm ?y ?w))"));
  out.push_back(rewrite("transpose-mm", "transpose[0,1](mm(a, b)) = mm(transpose[0,1](b), transpose[0,1](a))",
                        "(transpose[0, 1] (mm ?a ?b))", "(mm (transpose[0, 1] ?b) (transpose[0, 1] ?a))"));

  // bmm: [B,n,k] x [B,k,m]
  out.push_back(applier("bmm-concat-batch-lhs", "bmm(concat[0](xs), y) = concat[0](bmm(x_i, y_i)), y split alike along 0",
                        "(bmm (concat[0] ?xs...) ?y)", bmmBatch(true)));
  out.push_back(applier("bmm-concat-batch-rhs", "bmm(y, concat[0](xs)) = concat[0](bmm(y_i, x_i)), y split alike along 0",
                        "(bmm ?y (concat[0] ?xs...))", bmmBatch(false)));
  out.push_back(applier("bmm-concat-rows", "bmm(concat[1](xs), y) = concat[1](bmm(x_i, y))", "(bmm (concat[1] ?xs...) ?y)",
                        fixedDim(o.bmm, true, 1)));
  out.push_back(applier("bmm-concat-cols", "bmm(y, concat[2](xs)) = concat[2](bmm(y, x_i))", "(bmm ?y (concat[2] ?xs...))",
                        fixedDim(o.bmm, false, 2)));
  out.push_back(applier("bmm-concat-inner", "bmm(concat[2](a1..an), concat[1](b1..bn)) = sum(bmm(a_i, b_i)), equal k-splits",
                        "(bmm (concat[2] ?as...) (concat[1] ?bs...))", inner(o.bmm, 2, 1)));
  out.push_back(applier("bmm-sum-lhs", "bmm(sum(xs), y) = sum(bmm(x_i, y))", "(bmm (sum ?xs...) ?y)", overSum(o.bmm, true)));
  out.push_back(applier("bmm-sum-rhs", "bmm(y, sum(xs)) = sum(bmm(y, x_i))", "(bmm ?y (sum ?xs...))", overSum(o.bmm, false)));
  out.push_back(rewrite("transpose-bmm", "transpose[1,2](bmm(a, b)) = bmm(transpose[1,2](b), transpose[1,2](a))",
                        "(transpose[1, 2] (bmm ?a ?b))", "(bmm (transpose[1, 2] ?b) (transpose[1, 2] ?a))"));

  // matmul: batch-broadcasting, ranks >= 2
  out.push_back(applier("matmul-concat-lhs",
                        "matmul(concat[d](xs), y) = concat (rows, batch) or sum (contracted dim, y split alike)",
                        "(matmul (concat[?d] ?xs...) ?y)", matmulConcat(true)));
  out.push_back(applier("matmul-concat-rhs",
                        "matmul(y, concat[d](xs)) = concat (columns, batch) or sum (contracted dim, y split alike)",
                        "(matmul ?y (concat[?d] ?xs...))", matmulConcat(false)));
  out.push_back(applier("matmul-sum-lhs", "matmul(sum(xs), y) = sum(matmul(x_i, y))", "(matmul (sum ?xs...) ?y)",
                        overSum(o.matmul, true)));
  out.push_back(applier("matmul-sum-rhs", "matmul(y, sum(xs)) = sum(matmul(y, x_i))", "(matmul ?y (sum ?xs...))",
                        overSum(o.matmul, false)));
  out.push_back(applier("transpose-matmul", "transpose[-2,-1](matmul(a, b)) = matmul(b^T, a^T) (ranks >= 2)",
                        "(transpose[?p, ?q] (matmul ?a ?b))",
                        [](EGraph& g, const Match& m) { return transposeProduct(g, m, op().matmul); }));
}

}  // namespace tangle::lemmas::detail
