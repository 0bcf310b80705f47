// Normalizations, softmax, reductions and split, along dims they do not mix.
#include <algorithm>

#include "lemmas/lemma_util.h"

namespace tangle::lemmas::detail {

namespace {

// getitem[k](native_layer_norm[ns, eps](concat[d](xs), w, b))
//   = concat[d](getitem[k](native_layer_norm[ns, eps](x_i, w, b)))
// when d is a leading (not normalized) dim; out, mean and rstd all keep d.
// For apex_layer_norm the statistics are flattened to [prod(leading dims)],
// so they stay a concat only when d is the outermost dim.
std::optional<Id> layerNormOfConcat(EGraph& g, const Match& m, eg::Symbol sym) {
  const auto& xs = m.subst.list("xs");
  int64_t d = m.subst.integer("d");
  const Attr& ns = m.subst.attr("ns");
  const TensorType* x0 = typeOf(g, xs[0]);
  if (!x0 || ns.kind != Attr::Kind::IntList) return std::nullopt;
  int64_t axis = x0->rank() - static_cast<int64_t>(ns.list.size());
  if (d < 0 || d >= axis) return std::nullopt;
  if (sym != op().layerNorm && m.subst.integer("k") != 0 && d != 0) return std::nullopt;
  AttrList lnAttrs = {ns, m.subst.attr("eps")};
  Id w = m.subst.cls("w"), b = m.subst.cls("b");
  auto parts = mapPieces(xs, [&](Id x) -> std::optional<Id> {
    auto ln = make(g, sym, lnAttrs, {x, w, b});
    if (!ln) return std::nullopt;
    return make(g, op().getitem, {m.subst.attr("k")}, {*ln});
  });
  if (!parts) return std::nullopt;
  return makeConcat(g, d, *parts);
}

// softmax[dim](concat[d](xs)) = concat[d](softmax[dim](x_i)), dim != d (safe_softmax alike)
Apply softmaxOfConcat(eg::Symbol sym) {
  return [sym](EGraph& g, const Match& m) -> std::optional<Id> {
    AttrList a = {m.subst.attr("dim"), m.subst.attr("h")};
    auto parts = mapPieces(m.subst.list("xs"), [&](Id x) { return make(g, sym, a, {x}); });
    if (!parts) return std::nullopt;
    return makeConcat(g, m.subst.integer("d"), *parts);
  };
}

// A reduction red[[dims], keep](concat[d](xs)):
//   d not reduced: concat[d'](red(x_i)), d' = d minus the reduced dims before it (unless keep);
//   d reduced (sum only): sum(red(x_i)).
Apply reductionOfConcat(eg::Symbol sym, bool allowReducedDim) {
  return [=](EGraph& g, const Match& m) -> std::optional<Id> {
    const auto& xs = m.subst.list("xs");
    int64_t d = m.subst.integer("d");
    const Attr& dims = m.subst.attr("dims");
    const TensorType* x0 = typeOf(g, xs[0]);
    if (!x0 || dims.kind != Attr::Kind::IntList) return std::nullopt;
    auto red = ops::reducedDims(dims.list, x0->rank());
    if (!red) return std::nullopt;
    bool keep = m.subst.attr("keep").i != 0;
    AttrList a = {dims, m.subst.attr("keep")};
    auto parts = mapPieces(xs, [&](Id x) { return make(g, sym, a, {x}); });
    if (!parts) return std::nullopt;
    if (std::binary_search(red->begin(), red->end(), d)) {
      if (!allowReducedDim) return std::nullopt;
      return makeSum(g, *parts);
    }
    int64_t before = std::count_if(red->begin(), red->end(), [&](int64_t r) { return r < d; });
    return makeConcat(g, keep ? d : d - before, *parts);
  };
}

// Linear reductions over a cross-rank sum.
Apply reductionOfSum(eg::Symbol sym) {
  return [=](EGraph& g, const Match& m) -> std::optional<Id> {
    AttrList a = {m.subst.attr("dims"), m.subst.attr("keep")};
    auto parts = mapPieces(m.subst.list("xs"), [&](Id x) { return make(g, sym, a, {x}); });
    if (!parts) return std::nullopt;
    return makeSum(g, *parts);
  };
}

}  // namespace

void addNormLemmas(std::vector<Lemma>& out) {
  const ops::Syms& o = op();
  out.push_back(applier("layernorm-concat",
                        "getitem[k](layer_norm[ns](concat[d](xs), w, b)) = concat[d](getitem[k](layer_norm[ns](x_i, w, b))), "
                        "d outside the normalized trailing dims",
                        "(getitem[?k] (native_layer_norm[?ns, ?eps] (concat[?d] ?xs...) ?w ?b))",
                        [](EGraph& g, const Match& m) { return layerNormOfConcat(g, m, op().layerNorm); }));
  out.push_back(applier("apex-layernorm-concat",
                        "getitem[k](apex_layer_norm[ns](concat[d](xs), w, b)) = concat[d](getitem[k](apex_layer_norm(x_i, w, b))), "
                        "d a leading dim; for the flattened mean/invvar (k = 1, 2) only d = 0",
                        "(getitem[?k] (apex_layer_norm[?ns, ?eps] (concat[?d] ?xs...) ?w ?b))",
                        [](EGraph& g, const Match& m) { return layerNormOfConcat(g, m, ops::syms().apexLayerNorm); }));
  out.push_back(applier("softmax-concat", "softmax[dim](concat[d](xs)) = concat[d](softmax[dim](x_i)), dim != d",
                        "(softmax[?dim, ?h] (concat[?d] ?xs...))", softmaxOfConcat(o.softmax),
                        [](const EGraph&, Subst& s) { return s.integer("dim") != s.integer("d"); }));
  out.push_back(applier("safe_softmax-concat",
                        "safe_softmax[dim](concat[d](xs)) = concat[d](safe_softmax[dim](x_i)), dim != d",
                        "(safe_softmax[?dim, ?h] (concat[?d] ?xs...))", softmaxOfConcat(o.safeSoftmax),
                        [](const EGraph&, Subst& s) { return s.integer("dim") != s.integer("d"); }));
  out.push_back(applier("sum_dim-concat",
                        "sum_dim[dims](concat[d](xs)) = concat[d'](sum_dim(x_i)) if d kept, else sum(sum_dim(x_i))",
                        "(sum_dim[?dims, ?keep] (concat[?d] ?xs...))", reductionOfConcat(o.sumDim, true)));
  out.push_back(applier("mean_dim-concat", "mean_dim[dims](concat[d](xs)) = concat[d'](mean_dim(x_i)), d kept",
                        "(mean_dim[?dims, ?keep] (concat[?d] ?xs...))", reductionOfConcat(o.meanDim, false)));
  out.push_back(applier("amax-concat", "amax[dims](concat[d](xs)) = concat[d'](amax(x_i)), d kept",
                        "(amax[?dims, ?keep] (concat[?d] ?xs...))", reductionOfConcat(o.amax, false)));
  out.push_back(applier("sum_dim-sum", "sum_dim[dims](sum(xs)) = sum(sum_dim[dims](x_i))",
                        "(sum_dim[?dims, ?keep] (sum ?xs...))", reductionOfSum(o.sumDim)));
  out.push_back(applier("mean_dim-sum", "mean_dim[dims](sum(xs)) = sum(mean_dim[dims](x_i))",
                        "(mean_dim[?dims, ?keep] (sum ?xs...))", reductionOfSum(o.meanDim)));
  out.push_back(rewrite("getitem-split", "getitem[i](split[d, sizes](x)) = slice[d, off_i, off_i + sizes[i]](x)",
                        "(getitem[?i] (split[?d, ?sizes] ?x))", "(slice[?d, ?s, ?e, 1] ?x)", [](const EGraph&, Subst& s) {
                          const Attr& sizes = s.attr("sizes");
                          int64_t i = s.integer("i");
                          if (sizes.kind != Attr::Kind::IntList || i < 0 || i >= static_cast<int64_t>(sizes.list.size()))
                            return false;
                          for (int64_t k = 0; k <= i; ++k)
                            if (sizes.list[k] < 0) return false;  // symbolic: not modelled
                          int64_t off = 0;
                          for (int64_t k = 0; k < i; ++k) off += sizes.list[k];
                          s.attrs["s"] = Attr::integer(off);
                          s.attrs["e"] = Attr::integer(off + sizes.list[i]);
                          return true;
                        }));
}

}  // namespace tangle::lemmas::detail
