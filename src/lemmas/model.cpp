// Model-level ops that tensor/sequence parallelism distributes.
//
// Dropout is modelled as a deterministic elementwise function of its input
// (the spec and the implementation are assumed to draw the same mask for the
// same element, Entangle's assumption): it then commutes with concat.
#include "lemmas/lemma_util.h"

namespace tangle::lemmas::detail {

namespace {

const eg::Symbol& dropoutSym() {
  static const eg::Symbol s = ops::syms().dropout;
  return s;
}

// getitem[k](dropout[p, t](concat[d](xs))) = concat[d](getitem[k](dropout[p, t](x_i)))
std::optional<Id> dropoutOfConcat(EGraph& g, const Match& m) {
  AttrList a = {m.subst.attr("p"), m.subst.attr("t")};
  auto parts = mapPieces(m.subst.list("xs"), [&](Id x) -> std::optional<Id> {
    auto dr = make(g, dropoutSym(), a, {x});
    if (!dr) return std::nullopt;
    return make(g, op().getitem, {m.subst.attr("k")}, {*dr});
  });
  if (!parts) return std::nullopt;
  return makeConcat(g, m.subst.integer("d"), *parts);
}

// getitem[k](apex_layer_norm_bwd(concat[0](g), concat[0](mean), concat[0](invvar), concat[0](x), w, b))
//   k = 0: concat[0] of the pieces' input gradients;
//   k = 1, 2: sum of the pieces' weight/bias gradients (they reduce over rows).
// Rows split along the outermost dim keep the flattened statistics split alike.
std::optional<Id> layerNormBwdOfRows(EGraph& g, const Match& m) {
  static const eg::Symbol bwd = ops::syms().apexLayerNormBwd;
  const auto& gs = m.subst.list("gs");
  const auto& ms = m.subst.list("ms");
  const auto& vs = m.subst.list("vs");
  const auto& xs = m.subst.list("xs");
  size_t n = gs.size();
  if (ms.size() != n || vs.size() != n || xs.size() != n || n < 2) return std::nullopt;
  auto gRows = sizesAlong(g, gs, 0), xRows = sizesAlong(g, xs, 0), mRows = sizesAlong(g, ms, 0),
       vRows = sizesAlong(g, vs, 0);
  if (!gRows || !xRows || !mRows || !vRows || *gRows != *xRows || *mRows != *vRows) return std::nullopt;
  // Each piece's statistics cover exactly its rows: rows * prod(leading dims after 0).
  const TensorType* x0 = typeOf(g, xs[0]);
  const Attr& ns = m.subst.attr("ns");
  if (!x0 || ns.kind != Attr::Kind::IntList || x0->rank() <= static_cast<int64_t>(ns.list.size())) return std::nullopt;
  int64_t inner = 1;
  for (int64_t i = 1; i < x0->rank() - static_cast<int64_t>(ns.list.size()); ++i) inner *= x0->shape[i];
  for (size_t i = 0; i < n; ++i)
    if ((*mRows)[i] != (*xRows)[i] * inner) return std::nullopt;
  int64_t k = m.subst.integer("k");
  AttrList a = {ns, m.subst.attr("eps")};
  std::vector<Id> parts;
  for (size_t i = 0; i < n; ++i) {
    auto b = make(g, bwd, a, {gs[i], ms[i], vs[i], xs[i], m.subst.cls("w"), m.subst.cls("b")});
    auto gi = b ? make(g, op().getitem, {Attr::integer(k)}, {*b}) : std::nullopt;
    if (!gi) return std::nullopt;
    parts.push_back(*gi);
  }
  if (k == 0) return makeConcat(g, 0, parts);
  if (k == 1 || k == 2) return makeSum(g, parts);
  return std::nullopt;
}

// rms_norm(concat[d](xs), w) = concat[d](rms_norm(x_i, w)) when d is not the normalized (last) dim.
std::optional<Id> rmsNormOfConcat(EGraph& g, const Match& m) {
  static const eg::Symbol rms = ops::syms().rmsNorm;
  const auto& xs = m.subst.list("xs");
  const TensorType* x0 = typeOf(g, xs[0]);
  int64_t d = m.subst.integer("d");
  if (!x0 || d < 0 || d >= x0->rank() - 1) return std::nullopt;
  auto parts = mapPieces(xs, [&](Id x) { return make(g, rms, {m.subst.attr("eps")}, {x, m.subst.cls("w")}); });
  if (!parts) return std::nullopt;
  return makeConcat(g, d, *parts);
}

}  // namespace

// rotary(pos, concat[1](x_i), cache) = concat[1](rotary(pos, x_i, cache)) when no
// head straddles two pieces (each piece is whole heads).
std::optional<Id> rotaryOfHeads(EGraph& g, const Match& m) {
  static const eg::Symbol rot = ops::syms().rotary;
  const auto& xs = m.subst.list("xs");
  int64_t hs = m.subst.integer("hs");
  auto widths = sizesAlong(g, xs, 1);
  if (!widths || hs <= 0) return std::nullopt;
  for (int64_t w : *widths)
    if (w % hs) return std::nullopt;
  AttrList a = {m.subst.attr("hs"), m.subst.attr("neox")};
  auto parts = mapPieces(xs, [&](Id x) { return make(g, rot, a, {m.subst.cls("pos"), x, m.subst.cls("cache")}); });
  if (!parts) return std::nullopt;
  return makeConcat(g, 1, *parts);
}

// attention(concat[1](q_i), concat[1](k_i), concat[1](v_i)) = concat[1](attention(q_i, k_i, v_i))
// when every piece keeps the grouping: Hq_i / Hkv_i = Hq / Hkv (heads are independent).
std::optional<Id> attentionOfHeads(EGraph& g, const Match& m) {
  static const eg::Symbol att = ops::syms().attention;
  const auto& qs = m.subst.list("qs");
  const auto& ks = m.subst.list("ks");
  const auto& vs = m.subst.list("vs");
  if (qs.size() != ks.size() || ks.size() != vs.size()) return std::nullopt;
  auto hq = sizesAlong(g, qs, 1), hk = sizesAlong(g, ks, 1), hv = sizesAlong(g, vs, 1);
  if (!hq || !hk || !hv || *hk != *hv) return std::nullopt;
  int64_t tq = 0, tk = 0;
  for (size_t i = 0; i < qs.size(); ++i) tq += (*hq)[i], tk += (*hk)[i];
  if (tk <= 0 || tq % tk) return std::nullopt;
  for (size_t i = 0; i < qs.size(); ++i)
    if ((*hk)[i] <= 0 || (*hq)[i] != (*hk)[i] * (tq / tk)) return std::nullopt;
  std::vector<Id> parts;
  for (size_t i = 0; i < qs.size(); ++i) {
    auto r = make(g, att, {m.subst.attr("layer")}, {qs[i], ks[i], vs[i]});
    if (!r) return std::nullopt;
    parts.push_back(*r);
  }
  return makeConcat(g, 1, parts);
}

void addModelLemmas(std::vector<Lemma>& out) {
  out.push_back(applier("rotary-heads", "rotary(pos, concat[1](x_i), cache) = concat[1](rotary(pos, x_i, cache)), whole heads per piece",
                        "(rotary[?hs, ?neox] ?pos (concat[1] ?xs...) ?cache)", rotaryOfHeads));
  out.push_back(applier("attention-heads",
                        "attention(concat[1](q_i), concat[1](k_i), concat[1](v_i)) = concat[1](attention(q_i, k_i, v_i)), "
                        "each piece keeping the query/kv head grouping",
                        "(attention[?layer] (concat[1] ?qs...) (concat[1] ?ks...) (concat[1] ?vs...))", attentionOfHeads));
  out.push_back(applier("rms_norm-concat", "rms_norm(concat[d](xs), w) = concat[d](rms_norm(x_i, w)), d not the last dim",
                        "(rms_norm[?eps] (concat[?d] ?xs...) ?w)", rmsNormOfConcat));
  static const eg::Symbol geluBwd = ops::syms().geluBackward;
  out.push_back(applier("gelu_backward-concat-grad", "gelu_backward(concat[d](gs), x) = concat[d](gelu_backward(g_i, x_i))",
                        "(gelu_backward[?ap] (concat[?d] ?xs...) ?x)", [](EGraph& g, const Match& m) {
                          return distributeOverConcat(g, m, geluBwd, {m.subst.attr("ap")}, {"g", "x"}, 0);
                        }));
  out.push_back(applier("gelu_backward-concat-input", "gelu_backward(g, concat[d](xs)) = concat[d](gelu_backward(g_i, x_i))",
                        "(gelu_backward[?ap] ?g (concat[?d] ?xs...))", [](EGraph& g, const Match& m) {
                          return distributeOverConcat(g, m, geluBwd, {m.subst.attr("ap")}, {"g", "x"}, 1);
                        }));
  out.push_back(applier("apex-layernorm-bwd-rows",
                        "getitem[k](ln_bwd(concat0(g), concat0(mean), concat0(invvar), concat0(x), w, b)) = concat0 (k=0) "
                        "or sum (k=1,2: weight/bias gradients) of the pieces'",
                        "(getitem[?k] (apex_layer_norm_bwd[?ns, ?eps] (concat[0] ?gs...) (concat[0] ?ms...) (concat[0] ?vs...) "
                        "(concat[0] ?xs...) ?w ?b))",
                        layerNormBwdOfRows));
  out.push_back(applier("dropout-concat",
                        "getitem[k](dropout(concat[d](xs))) = concat[d](getitem[k](dropout(x_i))) (elementwise dropout)",
                        "(getitem[?k] (dropout[?p, ?t] (concat[?d] ?xs...)))", dropoutOfConcat));
}

}  // namespace tangle::lemmas::detail
