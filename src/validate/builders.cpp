// Hand-written instance builders for the lemmas the generic generator of
// generate.cpp cannot reach on its own (left-hand sides whose guard needs a
// specific structure between several operands).
#include <map>

#include "validate/generate.h"

namespace tangle::validate {

namespace {

using eg::Attr;

// where(m, 0, reshape[T](gather_rows(concat[1](x_r), reshape[[N]](where(m, 0, t - a))))),
// m = t < a | t >= b, b - a = the concat's width; t integral around [a, b).
std::optional<eg::Id> vocabParallelGather(Gen& gen) {
  Shape t = gen.chance(0.5) ? Shape{gen.size()} : Shape{gen.size(), gen.size()};
  int64_t n = 1;
  for (int64_t d : t) n *= d;
  std::vector<eg::Id> xs;
  int64_t width = 0;
  for (int64_t i = 0, k = gen.uniform(2, 3); i < k; ++i) {
    int64_t v = gen.size();
    width += v;
    xs.push_back(gen.leaf({n, v}));
  }
  int64_t a = gen.uniform(0, 3), b = a + width;
  eg::Id target = gen.intLeaf(t, a - 2, b + 2);
  eg::Id ca = gen.constant(static_cast<double>(a)), cb = gen.constant(static_cast<double>(b)), zero = gen.constant(0);
  auto lt = gen.node("lt", {}, {target, ca});
  auto ge = gen.node("ge", {}, {target, cb});
  if (!lt || !ge) return std::nullopt;
  auto m = gen.node("or", {}, {*lt, *ge});
  auto shifted = gen.node("sub", {}, {target, ca});
  if (!m || !shifted) return std::nullopt;
  eg::Id mask = *m;
  auto local = gen.node("where", {}, {mask, zero, *shifted});
  if (!local) return std::nullopt;
  auto flat = gen.node("reshape", {Attr::ints({n})}, {*local});
  auto cat = gen.node("concat", {Attr::integer(1)}, xs);
  if (!flat || !cat) return std::nullopt;
  auto picked = gen.node("gather_rows", {}, {*cat, *flat});
  if (!picked) return std::nullopt;
  auto shaped = gen.node("reshape", {Attr::ints(t)}, {*picked});
  if (!shaped) return std::nullopt;
  return gen.node("where", {}, {mask, zero, *shaped});
}

// mm(transpose(reshape[[n, V]](cast["f32"](one_hot[V](idx)))), reshape[[n, H]](g)), idx in [0, V), next to
// the range masks idx < o_r | idx >= o_r + s_r of 2 or 3 ranges tiling [0, V) (what vocab-embedding-backward
// looks for: the vocab-parallel embedding's masks on the ranks).
std::optional<eg::Id> vocabEmbeddingBackward(Gen& gen) {
  Shape t = gen.chance(0.5) ? Shape{gen.size()} : Shape{gen.size(), gen.size()};
  int64_t n = 1;
  for (int64_t d : t) n *= d;
  int64_t h = gen.size(), v = 0;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (int64_t i = 0, k = gen.uniform(2, 3); i < k; ++i) {
    int64_t s = gen.uniform(1, 4);
    ranges.emplace_back(v, v + s);
    v += s;
  }
  eg::Id idx = gen.intLeaf(t, 0, v);
  Shape gs = t;
  gs.push_back(h);
  eg::Id g = gen.leaf(gs);
  for (auto [lo, hi] : ranges) {
    auto lt = gen.node("lt", {}, {idx, gen.constant(static_cast<double>(lo))});
    auto ge = gen.node("ge", {}, {idx, gen.constant(static_cast<double>(hi))});
    if (!lt || !ge || !gen.node("or", {}, {*lt, *ge})) return std::nullopt;
  }
  auto hot = gen.node("one_hot", {Attr::integer(v)}, {idx});
  auto cast = hot ? gen.node("cast", {Attr::str("f32")}, {*hot}) : std::nullopt;
  auto rows = cast ? gen.node("reshape", {Attr::ints({n, v})}, {*cast}) : std::nullopt;
  auto tr = rows ? gen.node("transpose", {Attr::integer(0), Attr::integer(1)}, {*rows}) : std::nullopt;
  auto flat = gen.node("reshape", {Attr::ints({n, h})}, {g});
  if (!tr || !flat) return std::nullopt;
  return gen.node("mm", {}, {*tr, *flat});
}

// mul(cast["f32"](one_hot[V](reshape[[N]](where(m, 0, t - a)))), reshape[[N, 1]](sub(1, cast["f32"](reshape[[N]](m))))),
// m = t < a | t >= a + V, t integral around [a, a + V), next to the range masks of 2 or 3 ranges tiling it.
std::optional<eg::Id> vocabOneHot(Gen& gen) {
  int64_t n = gen.size(), a = gen.uniform(0, 3), v = 0;
  Shape t = gen.chance(0.5) ? Shape{n} : Shape{n, 1};
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (int64_t i = 0, k = gen.uniform(2, 3); i < k; ++i) {
    int64_t s = gen.uniform(1, 4);
    ranges.emplace_back(a + v, a + v + s);
    v += s;
  }
  eg::Id target = gen.intLeaf(t, std::max<int64_t>(a - 2, 0), a + v + 2);
  for (auto [lo, hi] : ranges) {
    auto lt = gen.node("lt", {}, {target, gen.constant(static_cast<double>(lo))});
    auto ge = gen.node("ge", {}, {target, gen.constant(static_cast<double>(hi))});
    if (!lt || !ge || !gen.node("or", {}, {*lt, *ge})) return std::nullopt;
  }
  eg::Id ca = gen.constant(static_cast<double>(a)), zero = gen.constant(0), one = gen.constant(1);
  auto lt = gen.node("lt", {}, {target, ca});
  auto ge = gen.node("ge", {}, {target, gen.constant(static_cast<double>(a + v))});
  auto m = (lt && ge) ? gen.node("or", {}, {*lt, *ge}) : std::nullopt;
  auto shifted = gen.node("sub", {}, {target, ca});
  auto local = (m && shifted) ? gen.node("where", {}, {*m, zero, *shifted}) : std::nullopt;
  auto flat = local ? gen.node("reshape", {Attr::ints({n})}, {*local}) : std::nullopt;
  auto hot = flat ? gen.node("one_hot", {Attr::integer(v)}, {*flat}) : std::nullopt;
  auto hotc = hot ? gen.node("cast", {Attr::str("f32")}, {*hot}) : std::nullopt;
  auto mflat = m ? gen.node("reshape", {Attr::ints({n})}, {*m}) : std::nullopt;
  auto mcast = mflat ? gen.node("cast", {Attr::str("f32")}, {*mflat}) : std::nullopt;
  auto keep = mcast ? gen.node("sub", {}, {one, *mcast}) : std::nullopt;
  auto column = keep ? gen.node("reshape", {Attr::ints({n, 1})}, {*keep}) : std::nullopt;
  if (!hotc || !column) return std::nullopt;
  return gen.node("mul", {}, {*hotc, *column});
}

// mul(index_rows(W, clamp(idx - o, 0, s - 1)), cast["f32"](reshape[idx.shape + 1](ge(idx, o) & lt(idx, o + s)))),
// W: [s, D], idx integral around [o, o + s) (torchtitan's vocab-parallel embedding on one rank).
std::optional<eg::Id> clampedEmbedding(Gen& gen) {
  Shape t = gen.chance(0.5) ? Shape{gen.size()} : Shape{gen.size(), gen.size()};
  int64_t rows = gen.uniform(1, 4), o = gen.uniform(0, 4);
  eg::Id w = gen.leaf({rows, gen.size()});
  eg::Id idx = gen.intLeaf(t, std::max<int64_t>(o - 2, 0), o + rows + 2);
  eg::Id co = gen.constant(static_cast<double>(o)), ce = gen.constant(static_cast<double>(o + rows));
  eg::Id zero = gen.constant(0), hi = gen.constant(static_cast<double>(rows - 1));
  auto u = gen.node("sub", {}, {idx, co});
  if (!u) return std::nullopt;
  auto over = gen.node("gt", {}, {*u, hi}), under = gen.node("lt", {}, {*u, zero});
  if (!over || !under) return std::nullopt;
  auto top = gen.node("where", {}, {*over, hi, *u});
  auto c = top ? gen.node("where", {}, {*under, zero, *top}) : std::nullopt;
  auto rowsOut = c ? gen.node("index_rows", {}, {w, *c}) : std::nullopt;
  auto ge = gen.node("ge", {}, {idx, co}), lt = gen.node("lt", {}, {idx, ce});
  if (!rowsOut || !ge || !lt) return std::nullopt;
  auto in = gen.node("and", {}, {*ge, *lt});
  Shape sh = t;
  sh.push_back(1);
  auto r = in ? gen.node("reshape", {Attr::ints(sh)}, {*in}) : std::nullopt;
  auto mask = r ? gen.node("cast", {Attr::str("f32")}, {*r}) : std::nullopt;
  if (!mask) return std::nullopt;
  return gen.node("mul", {}, {*rowsOut, *mask});
}

// mm(t(reshape[T, V](cast["f32"](one_hot[V](idx)))), reshape[T, H](G)) with
// idx in [0, V) and, in the e-graph, the range masks and(ge(idx, o_r),
// lt(idx, o_r + s_r)) of 2-3 ranges tiling [0, V) (vocab-parallel ranks).
std::optional<eg::Id> embeddingBackwardByRanges(Gen& gen) {
  Shape t = gen.chance(0.5) ? Shape{gen.size()} : Shape{gen.size(), gen.size()};
  int64_t tokens = 1;
  for (int64_t d : t) tokens *= d;
  std::vector<int64_t> bounds{0};
  for (int64_t r = 0, n = gen.uniform(2, 3); r < n; ++r) bounds.push_back(bounds.back() + gen.uniform(1, 3));
  int64_t v = bounds.back(), h = gen.size();
  eg::Id idx = gen.intLeaf(t, 0, v);
  for (size_t r = 0; r + 1 < bounds.size(); ++r) {
    auto ge = gen.node("ge", {}, {idx, gen.constant(static_cast<double>(bounds[r]))});
    auto lt = gen.node("lt", {}, {idx, gen.constant(static_cast<double>(bounds[r + 1]))});
    if (!ge || !lt || !gen.node("and", {}, {*ge, *lt})) return std::nullopt;
  }
  Shape gs = t;
  gs.push_back(h);
  eg::Id grad = gen.leaf(gs);
  auto hot = gen.node("one_hot", {Attr::integer(v)}, {idx});
  hot = hot ? gen.node("cast", {Attr::str("f32")}, {*hot}) : std::nullopt;
  hot = hot ? gen.node("reshape", {Attr::ints({tokens, v})}, {*hot}) : std::nullopt;
  hot = hot ? gen.node("transpose", {Attr::integer(0), Attr::integer(1)}, {*hot}) : std::nullopt;
  auto rows = gen.node("reshape", {Attr::ints({tokens, h})}, {grad});
  if (!hot || !rows) return std::nullopt;
  return gen.node("mm", {}, {*hot, *rows});
}

// getitem[k](layer_norm[ns, eps](concat[d](xs), w, b)) with d a leading dim:
// the pieces vary along d, ns is a suffix of the rest, w and b have shape ns
// (or are 0-d constants, PyTorch's None).
Builder layerNormOfConcat(const char* op) {
  return [op](Gen& gen) -> std::optional<eg::Id> {
    Shape x = {gen.size(), gen.size()};
    if (gen.chance(0.5)) x.push_back(gen.size());
    int64_t r = static_cast<int64_t>(x.size()), k = gen.uniform(1, r - 1), d = gen.uniform(0, r - k - 1);
    std::vector<eg::Id> xs;
    for (int64_t i = 0, n = gen.uniform(2, 3); i < n; ++i) {
      Shape p = x;
      p[d] = gen.size();
      xs.push_back(gen.leaf(p));
    }
    Shape ns(x.end() - k, x.end());
    auto param = [&](double none) { return gen.chance(0.2) ? gen.constant(none) : gen.leaf(ns); };
    eg::Id w = param(1), b = param(0);
    auto cat = gen.node("concat", {Attr::integer(d)}, xs);
    auto ln = cat ? gen.node(op, {Attr::ints(ns), Attr::real(1e-5)}, {*cat, w, b}) : std::nullopt;
    return ln ? gen.node("getitem", {Attr::integer(gen.uniform(0, 2))}, {*ln}) : std::nullopt;
  };
}

// getitem[k](apex_layer_norm_bwd[ns](concat0(g_i), concat0(mean_i), concat0(invvar_i), concat0(x_i), w, b)):
// row blocks x_i [r_i, (a,) c], statistics [r_i * a] per block.
std::optional<eg::Id> layerNormBwdOfRows(Gen& gen) {
  bool inner = gen.chance(0.5);
  int64_t a = inner ? gen.size() : 1, c = gen.size();
  std::vector<eg::Id> gs, ms, vs, xs;
  for (int64_t i = 0, n = gen.uniform(2, 3); i < n; ++i) {
    int64_t r = gen.size();
    Shape x = inner ? Shape{r, a, c} : Shape{r, c};
    gs.push_back(gen.leaf(x));
    xs.push_back(gen.leaf(x));
    ms.push_back(gen.leaf({r * a}));
    vs.push_back(gen.leaf({r * a}));
  }
  auto cat = [&](const std::vector<eg::Id>& pieces) { return gen.node("concat", {Attr::integer(0)}, pieces); };
  auto g = cat(gs), m = cat(ms), v = cat(vs), x = cat(xs);
  eg::Id w = gen.leaf({c}), b = gen.leaf({c});
  if (!g || !m || !v || !x) return std::nullopt;
  auto bwd = gen.node("apex_layer_norm_bwd", {Attr::ints({c}), Attr::real(1e-5)}, {*g, *m, *v, *x, w, b});
  return bwd ? gen.node("getitem", {Attr::integer(gen.uniform(0, 2))}, {*bwd}) : std::nullopt;
}

// div(div(x, a), b) with scalar constants a, b (zero included, to exercise the guard).
std::optional<eg::Id> divDivConstants(Gen& gen) {
  Shape s;
  for (int64_t i = 0, r = gen.uniform(0, 2); i < r; ++i) s.push_back(gen.size());
  eg::Id x = gen.leaf(s);
  auto pick = [&] { return gen.constant(gen.chance(0.1) ? 0.0 : static_cast<double>(gen.uniform(1, 9)) / 2); };
  auto inner = gen.node("div", {}, {x, pick()});
  return inner ? gen.node("div", {}, {*inner, pick()}) : std::nullopt;
}

// div(x, b * r) beside div(x, b): the divisor split by div-split-constant (r an integer, sometimes 1,
// sometimes b zero or the product not a multiple, where the rule must not fire).
std::optional<eg::Id> divSplitConstant(Gen& gen) {
  Shape s;
  for (int64_t i = 0, r = gen.uniform(0, 2); i < r; ++i) s.push_back(gen.size());
  eg::Id x = gen.leaf(s);
  double b = gen.chance(0.1) ? 0.0 : static_cast<double>(gen.uniform(-8, 8)) / 2;
  double a = gen.chance(0.2) ? static_cast<double>(gen.uniform(1, 9)) / 3 : b * static_cast<double>(gen.uniform(1, 6));
  if (!gen.node("div", {}, {x, gen.constant(b)})) return std::nullopt;
  return gen.node("div", {}, {x, gen.constant(a)});
}

// sum(div(x_1, k_1), ..) with one divisor k mostly, sometimes a term with another divisor (or
// zero, or no division) where scale-out-sum must not fire.
std::optional<eg::Id> sumOfScaled(Gen& gen) {
  Shape s = gen.randomShape();
  double k = gen.chance(0.1) ? 0.0 : static_cast<double>(gen.uniform(1, 8)) / 2;
  std::vector<eg::Id> xs;
  for (int64_t i = 0, n = gen.uniform(2, 3); i < n; ++i) {
    eg::Id x = gen.leaf(s);
    if (gen.chance(0.1)) {
      xs.push_back(x);
      continue;
    }
    auto d = gen.node("div", {}, {x, gen.constant(gen.chance(0.15) ? k + 1 : k)});
    if (!d) return std::nullopt;
    xs.push_back(*d);
  }
  return gen.node("sum", {}, xs);
}

// rms_norm[eps](concat[d](x_i), w) with d a leading dim and w of the last dim's size.
std::optional<eg::Id> rmsNormOfConcat(Gen& gen) {
  int64_t rank = gen.uniform(2, 3), d = gen.uniform(0, rank - 2), c = gen.size();
  Shape s;
  for (int64_t i = 0; i + 1 < rank; ++i) s.push_back(gen.size());
  s.push_back(c);
  std::vector<eg::Id> xs;
  for (int64_t i = 0, k = gen.uniform(2, 3); i < k; ++i) {
    Shape p = s;
    p[d] = gen.size();
    xs.push_back(gen.leaf(p));
  }
  auto cat = gen.node("concat", {Attr::integer(d)}, xs);
  return cat ? gen.node("rms_norm", {Attr::real(1e-6)}, {*cat, gen.leaf({c})}) : std::nullopt;
}

// rotary[hs, neox](pos, concat[1](x_i), cache): pieces of whole heads, valid positions.
std::optional<eg::Id> rotaryOfHeads(Gen& gen) {
  int64_t hs = 2 * gen.uniform(1, 2), t = gen.size(), maxPos = gen.uniform(2, 4);
  int64_t rot = 2 * gen.uniform(1, hs / 2);
  std::vector<eg::Id> xs;
  for (int64_t i = 0, k = gen.uniform(2, 3); i < k; ++i) xs.push_back(gen.leaf({t, hs * gen.uniform(1, 2)}));
  auto cat = gen.node("concat", {Attr::integer(1)}, xs);
  if (!cat) return std::nullopt;
  eg::Id pos = gen.intLeaf({t}, 0, maxPos - 1);
  return gen.node("rotary", {Attr::integer(hs), Attr::boolean(gen.chance(0.5))}, {pos, *cat, gen.leaf({maxPos, rot})});
}

// attention[layer](concat[1](q_i), concat[1](k_i), concat[1](v_i)) with a common
// query-per-kv-head group size.
std::optional<eg::Id> attentionOfHeads(Gen& gen) {
  int64_t t = gen.size(), d = gen.uniform(1, 3), group = gen.uniform(1, 2);
  std::vector<eg::Id> qs, ks, vs;
  for (int64_t i = 0, k = gen.uniform(2, 3); i < k; ++i) {
    int64_t kv = gen.uniform(1, 2);
    qs.push_back(gen.leaf({t, kv * group, d}));
    ks.push_back(gen.leaf({t, kv, d}));
    vs.push_back(gen.leaf({t, kv, d}));
  }
  auto q = gen.node("concat", {Attr::integer(1)}, qs), k = gen.node("concat", {Attr::integer(1)}, ks),
       v = gen.node("concat", {Attr::integer(1)}, vs);
  if (!q || !k || !v) return std::nullopt;
  return gen.node("attention", {Attr::str("layer")}, {*q, *k, *v});
}

// expand[[a, k*p, c]](y) next to expand[[a, p, c]](y), y: [a, 1, c] (the
// narrower copy is what expand-tiles looks for).
std::optional<eg::Id> expandTiles(Gen& gen) {
  int64_t a = gen.size(), c = gen.size(), p = gen.uniform(1, 3), k = gen.uniform(2, 3);
  eg::Id y = gen.leaf({a, 1, c});
  if (!gen.node("expand", {Attr::ints({a, p, c})}, {y})) return std::nullopt;
  return gen.node("expand", {Attr::ints({a, k * p, c})}, {y});
}

const std::map<std::string, Builder>& builders() {
  static const std::map<std::string, Builder> m = {
      {"vocab-parallel-gather", vocabParallelGather},
      {"vocab-embedding-clamped", clampedEmbedding},
      {"vocab-embedding-backward-clamped", embeddingBackwardByRanges},
      {"vocab-embedding-backward", vocabEmbeddingBackward},
      {"vocab-parallel-one-hot", vocabOneHot},
      {"layernorm-concat", layerNormOfConcat("native_layer_norm")},
      {"apex-layernorm-bwd-rows", layerNormBwdOfRows},
      {"apex-layernorm-concat", layerNormOfConcat("apex_layer_norm")},
      {"div-div-constants", divDivConstants},
      {"div-split-constant", divSplitConstant},
      {"scale-out-sum", sumOfScaled},
      {"scale-out-concat", concatOfScaled},
      {"rms_norm-concat", rmsNormOfConcat},
      {"rotary-heads", rotaryOfHeads},
      {"attention-heads", attentionOfHeads},
      {"expand-tiles", expandTiles},
      {"sdpa-batch", sdpaOfPieces(false, 0)},
      {"sdpa-heads", sdpaOfPieces(false, 1)},
      {"sdpa_backward-batch", sdpaOfPieces(true, 0)},
      {"sdpa_backward-heads", sdpaOfPieces(true, 1)},
      {"one_hot-concat", oneHotOfConcat},
      {"index_rows-concat-ids", indexRowsOfConcat},
      {"index_rows-prefix", indexRowsOfPrefix},
      {"concat-equal-pieces", concatEqualPieces},
      {"sdpa-heads-subgroup", sdpaOfSubgroups},
      {"sdpa-rows", sdpaOfSequenceBlocks(false)},
      {"sdpa-ring", sdpaOfSequenceBlocks(true)},
      {"sdpa-causal-ring", causalSdpaOfBlocks},
      {"sdpa_backward-ring", sdpaBackwardOfBlocks(false)},
      {"sdpa_backward-causal-ring", sdpaBackwardOfBlocks(true)},
      {"add-assoc-backward", backwardSumOutOfOrder(0)},
      {"add-swap-backward", backwardSumOutOfOrder(1)},
      {"add-commute-backward", backwardSumOutOfOrder(2)},
      {"merge-swap-out", mergeOutOfOrder(false, true)},
      {"merge-swap-lse", mergeOutOfOrder(true, true)},
      {"merge-commute-out", mergeOutOfOrder(false, false)},
      {"merge-commute-lse", mergeOutOfOrder(true, false)},
      {"mm-zeros", productWithZeros(false, 0)},
      {"bmm-zeros", productWithZeros(true, 0)},
      {"mm-zero-rows", productWithZeros(false, 1)},
      {"mm-zero-cols", productWithZeros(false, 2)},
      {"bmm-zero-rows", productWithZeros(true, 1)},
      {"bmm-zero-cols", productWithZeros(true, 2)},
      {"sum-zeros", sumWithZeros},
      {"add-zeros-rhs", withZeroTerm("add", false)},
      {"add-zeros-lhs", withZeroTerm("add", true)},
      {"sub-zeros", withZeroTerm("sub", false)},
      {"concat-interchange", concatOfConcats},
      {"add-disjoint-pieces", addOfDisjointPieces},
      {"concat-regroup", concatNextToItsRun},
      {"concat-drop-empty", concatWithEmptyPieces},
      {"add-unit-lead", binaryOfUnitLead("add")},
      {"sub-unit-lead", binaryOfUnitLead("sub")},
      {"mul-unit-lead", binaryOfUnitLead("mul")},
      {"div-unit-lead", binaryOfUnitLead("div")},
      {"add-drop-unit-lead", binaryDropUnitLead("add")},
      {"sub-drop-unit-lead", binaryDropUnitLead("sub")},
      {"mul-drop-unit-lead", binaryDropUnitLead("mul")},
      {"div-drop-unit-lead", binaryDropUnitLead("div")},
      {"expand-unit-lead", expandOfUnitLead},
      {"arange-subrange", arangeSubrange},
      {"add-arange-scalar", arangeShifted("add", false)},
      {"add-scalar-arange", arangeShifted("add", true)},
      {"sub-arange-scalar", arangeShifted("sub", false)},
      {"mul-one-rhs", identityOp("mul", 1, false)},
      {"mul-one-lhs", identityOp("mul", 1, true)},
      {"div-one", identityOp("div", 1, false)},
      {"add-zero-rhs", identityOp("add", 0, false)},
      {"add-zero-lhs", identityOp("add", 0, true)},
      {"sub-zero", identityOp("sub", 0, false)},
      {"where-untype-const-then", untypeConst("where", 3, 1)},
      {"where-untype-const-else", untypeConst("where", 3, 2)},
      {"add-untype-const-lhs", untypeConst("add", 2, 0)},
      {"add-untype-const-rhs", untypeConst("add", 2, 1)},
      {"sub-untype-const-lhs", untypeConst("sub", 2, 0)},
      {"sub-untype-const-rhs", untypeConst("sub", 2, 1)},
      {"mul-untype-const-lhs", untypeConst("mul", 2, 0)},
      {"mul-untype-const-rhs", untypeConst("mul", 2, 1)},
      {"div-untype-const-lhs", untypeConst("div", 2, 0)},
      {"div-untype-const-rhs", untypeConst("div", 2, 1)},
      {"mul-broadcast-unit-lead-rhs", broadcastUnitLead("mul", false)},
      {"mul-broadcast-unit-lead-lhs", broadcastUnitLead("mul", true)},
      {"sum-pairs-into-adds", sumNextToAdds},
      {"reshape-slice", reshapeOfSlice},
      {"splat-reshape", splatRearranged(0)},
      {"splat-transpose", splatRearranged(1)},
      {"splat-permute", splatRearranged(2)},
      {"splat-slice", splatRearranged(3)},
      {"splat-concat", splatRearranged(4)},
  };
  return m;
}

}  // namespace

const Builder* builderFor(const std::string& lemma) {
  auto it = builders().find(lemma);
  return it == builders().end() ? nullptr : &it->second;
}

}  // namespace tangle::validate
