// The backward ATen calls of training graphs (src/lower/canon_grad.cpp) keep
// PyTorch's values: each call is lowered and evaluated with the reference
// interpreter on small inputs, against what torch 2.13 computes for the same
// call in float64 (the expected numbers were printed by torch.ops.aten.*).
#include "../fx_text.h"
#include <gtest/gtest.h>

#include "import/fx_importer.h"
#include "replay/lgraph_eval.h"

namespace tangle::replay {
namespace {

struct Eval {
  sym::Context symbols;
  Graph g;
  LGraph lg;
  std::unique_ptr<LGraphEvaluator> ev;
  Eval(const std::string& params, const std::string& body) {
    g = importFxText(testing::fxModuleText(params, body), "spec.py");
    lg = lowerSpec(g, {}, symbols);
    ev = std::make_unique<LGraphEvaluator>(lg);
  }
  int id(const std::string& name) {
    auto i = lg.find("S." + name);
    EXPECT_TRUE(i.has_value()) << name;
    return lg.resolve(i.value_or(0));
  }
  void set(const std::string& name, interp::Shape shape, std::vector<double> data) {
    ev->set(id(name), interp::Value::of(interp::Tensor::of(std::move(shape), std::move(data))));
  }
  void expect(const std::string& name, interp::Shape shape, const std::vector<double>& want) {
    const interp::Value* v = ev->value(id(name));
    ASSERT_NE(v, nullptr) << name << ": " << ev->failure()->reason;
    ASSERT_EQ(v->tensor()->shape, shape) << name;
    ASSERT_EQ(v->tensor()->data.size(), want.size()) << name;
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(v->tensor()->data[i], want[i], 1e-9) << name << "[" << i << "]";
  }
};

TEST(GradValues, SoftmaxAndLogSoftmaxBackward) {
  Eval e("x: \"f64[2, 3]\", g: \"f64[2, 3]\"",
         "y: \"f64[2, 3]\" = torch.ops.aten._log_softmax.default(x, 1, False)\n"
         "lb: \"f64[2, 3]\" = torch.ops.aten._log_softmax_backward_data.default(g, y, 1, torch.float64)\n"
         "s: \"f64[2, 3]\" = torch.ops.aten._softmax.default(x, 1, False)\n"
         "sb: \"f64[2, 3]\" = torch.ops.aten._softmax_backward_data.default(g, s, 1, torch.float64)\n"
         "return (lb, sb)");
  e.set("x", {2, 3}, {0.5, -1.0, 2.0, 1.5, 0.25, -0.75});
  e.set("g", {2, 3}, {1.0, -2.0, 0.5, 0.3, 0.7, -1.1});
  e.expect("lb", {2, 3}, {1.08764519607, -1.980443713365, 0.892798517295, 0.371844034115, 0.7205836604, -1.092427694515});
  e.expect("sb", {2, 3}, {0.089421981047, -0.09738497886, 0.007962997813, 0.017010968306, 0.087208365618, -0.104219333923});
}

TEST(GradValues, NllLossWithAnIgnoredTarget) {
  Eval e("lp: \"f64[3, 4]\", t: \"i64[3]\", g: \"f64[]\"",
         "nll = torch.ops.aten.nll_loss_forward.default(lp, t, None, 1, -100)\n"
         "loss: \"f64[]\" = nll[0]\n"
         "tw: \"f64[]\" = nll[1]\n"
         "nb: \"f64[3, 4]\" = torch.ops.aten.nll_loss_backward.default(g, lp, t, None, 1, -100, tw)\n"
         "return (loss, nb)");
  e.set("lp", {3, 4}, {-1.0, -2.0, -0.5, -3.0, -0.2, -1.7, -2.2, -0.9, -1.3, -0.4, -2.8, -1.9});
  e.set("t", {3}, {2, -100, 1});
  e.set("g", {}, {1.5});
  e.expect("loss", {}, {0.45});
  e.expect("tw", {}, {2.0});
  e.expect("nb", {3, 4}, {0.0, 0.0, -0.75, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -0.75, 0.0, 0.0});
}

TEST(GradValues, SiluEmbeddingAndSliceBackward) {
  Eval e("xs: \"f64[4]\", gs: \"f64[4]\", ge: \"f64[1, 3, 2]\", ids: \"i64[1, 3]\", gl: \"f64[2, 2]\"",
         "sib: \"f64[4]\" = torch.ops.aten.silu_backward.default(gs, xs)\n"
         "eb: \"f64[4, 2]\" = torch.ops.aten.embedding_dense_backward.default(ge, ids, 4, -1, False)\n"
         "slb: \"f64[2, 5]\" = torch.ops.aten.slice_backward.default(gl, [2, 5], 1, 1, 3, 1)\n"
         "return (sib, eb, slb)");
  e.set("xs", {4}, {-2.0, -0.5, 0.0, 1.5});
  e.set("gs", {4}, {1.0, 2.0, -1.0, 0.5});
  e.set("ge", {1, 3, 2}, {1, 2, 3, 4, 5, 6});
  e.set("ids", {1, 3}, {3, 0, 3});
  e.set("gl", {2, 2}, {1, 2, 3, 4});
  e.expect("sib", {4}, {-0.090784248785, 0.520077625395, -0.5, 0.52064707715});
  e.expect("eb", {4, 2}, {3.0, 4.0, 0.0, 0.0, 0.0, 0.0, 6.0, 8.0});
  e.expect("slb", {2, 5}, {0.0, 1.0, 2.0, 0.0, 0.0, 0.0, 3.0, 4.0, 0.0, 0.0});
}

// The backward of `x[mask] = 0` (Megatron's vocab-parallel embedding) writes a zeros([]) into the gradient.
TEST(GradValues, ZerosAsTheValueOfAMaskedWrite) {
  Eval e("g: \"f64[1, 3, 2]\", m: \"b8[1, 3]\"",
         "z: \"f64[]\" = torch.ops.aten.zeros.default([], dtype = torch.float64, layout = torch.strided, "
         "device = device(type='cpu'))\n"
         "ip: \"f64[1, 3, 2]\" = torch.ops.aten.index_put.default(g, [m], z)\n"
         "zs: \"f64[2, 3]\" = torch.ops.aten.zeros.default([2, 3], dtype = torch.float64)\n"
         "return (ip, zs)");
  e.set("g", {1, 3, 2}, {1, 2, 3, 4, 5, 6});
  e.set("m", {1, 3}, {0, 1, 0});
  e.expect("ip", {1, 3, 2}, {1, 2, 0, 0, 5, 6});
  e.expect("zs", {2, 3}, {0, 0, 0, 0, 0, 0});
}

// Megatron's cross entropy backward: grad_2d[arange_1d, masked_target_1d] -= softmax_update.
TEST(GradValues, SubtractAtEachRowsTarget) {
  Eval e("x: \"f64[3, 4]\", t: \"i64[3]\", u: \"f64[3]\"",
         "ar: \"i64[3]\" = torch.ops.aten.arange.start(0, 3, device = device(type='cpu'), pin_memory = False)\n"
         "picked: \"f64[3]\" = torch.ops.aten.index.Tensor(x, [ar, t])\n"
         "s: \"f64[3]\" = torch.ops.aten.sub.Tensor(picked, u)\n"
         "ip: \"f64[3, 4]\" = torch.ops.aten.index_put.default(x, [ar, t], s)\n"
         "return (ip,)");
  e.set("x", {3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  e.set("t", {3}, {2, 0, 3});
  e.set("u", {3}, {1.0, 0.0, 0.5});
  e.expect("ip", {3, 4}, {1, 2, 2, 4, 5, 6, 7, 8, 9, 10, 11, 11.5});
}

TEST(GradValues, LayerNormBackward) {
  Eval e("x: \"f64[2, 3, 4]\", w: \"f64[4]\", b: \"f64[4]\", g: \"f64[2, 3, 4]\", m: \"f64[2, 3, 1]\", r: \"f64[2, 3, 1]\"",
         "lnb = torch.ops.aten.native_layer_norm_backward.default(g, x, [4], m, r, w, b, [True, True, True])\n"
         "gi: \"f64[2, 3, 4]\" = lnb[0]\n"
         "gw: \"f64[4]\" = lnb[1]\n"
         "gb: \"f64[4]\" = lnb[2]\n"
         "return (gi, gw, gb)");
  e.set("x", {2, 3, 4}, {-2.31041180023, -0.373250861258, -1.06081667855, 0.999509354781, -0.884025004583, -1.27554693021,
                         -0.623224579866, -0.866441601913, 0.238718058168, 0.733528368527, -1.32188182914, 1.3148113652,
                         -1.48749563565, -0.713575339647, 0.519998663179, -0.952885639703, 0.674857543594, 1.04686537698,
                         0.154295178647, -0.749891522839, -0.723389700498, 0.0863698923823, -1.74640490373, 1.04101245703});
  e.set("w", {4}, {-0.0404210874737, 0.288116826889, -0.00753730796394, -0.91449545248});
  e.set("b", {4}, {-1.08858365269, -0.266596304572, 0.189423460757, -0.219022810988});
  e.set("g", {2, 3, 4}, {-3.14529627312, -0.113731277576, 1.69620248051, -0.665203480538, -0.58722259836, 2.83210416751,
                         0.90399736896, 0.947836532432, 0.131004315866, -1.35731131379, -0.108387631283, 0.315130236894,
                         -0.522570875949, -0.591998564921, -0.891345605994, -0.446543732314, 1.01340773542, 0.854207880574,
                         0.109644986701, 0.70264747462, 0.380840794845, -0.0660275986783, -0.756574666813, 0.368673118576});
  e.set("m", {2, 3, 1}, {-0.686242496314, -0.912309529144, 0.241293990688, -0.658489487955, 0.281531644096, -0.335603063703});
  e.set("r", {2, 3, 1}, {0.83638862388, 4.27906225419, 1.02084678432, 1.35899515161, 1.48229346661, 0.974287826783});
  e.expect("gi", {2, 3, 4}, {0.155348925917, -0.208909868992, -0.110377821578, 0.163938764653, 0.32478383604, 1.12691078301,
                             1.9179233877, -3.36961800675, 0.168744903165, -0.158853369205, -0.033845858908, 0.0239543249483,
                             -0.124183286348, -0.326209313952, 0.00792499466155, 0.442467605639, -0.165764831071,
                             0.00681189129548, 0.247693506059, -0.0887405662832, 0.0315973144559, 0.11684725955,
                             -0.0600173314095, -0.0884272425959});
  e.expect("gw", {4}, {5.23695934925, -4.12757167725, 0.351524367274, -0.807647457226});
  e.expect("gb", {4}, {-2.7298369013, 1.55724329312, 0.953536932086, 1.22254014967});
}

// Normalized over every dim: no leading dims, so the weight and bias gradients are not summed.
TEST(GradValues, LayerNormBackwardOverEveryDim) {
  Eval e("x: \"f64[3, 4]\", w: \"f64[3, 4]\", b: \"f64[3, 4]\", g: \"f64[3, 4]\", m: \"f64[1, 1]\", r: \"f64[1, 1]\"",
         "lnb = torch.ops.aten.native_layer_norm_backward.default(g, x, [3, 4], m, r, w, b, [True, True, True])\n"
         "gi: \"f64[3, 4]\" = lnb[0]\n"
         "gw: \"f64[3, 4]\" = lnb[1]\n"
         "gb: \"f64[3, 4]\" = lnb[2]\n"
         "return (gi, gw, gb)");
  std::vector<double> g = {0.831016277842, -0.247707454252, -0.802940942301, 0.236574676796, 0.285692759626, 0.68981487866,
                           -0.633054033736, 0.879475319408, -0.68417818128, 0.453290801557, 0.291157951893, -0.831716568893};
  e.set("x", {3, 4}, {0.66135217157, 0.266924098293, 0.0616772582373, 0.621317328685, -0.451905964704, -0.166130234536,
                      -1.52276848401, 0.381683902418, -1.02760857583, -0.563052798654, -0.892290508781, -0.0582501790837});
  e.set("w", {3, 4}, {-0.1955095774, -0.965635931168, 0.422415321182, 0.267316997947, -0.421195156755, -0.510699999283,
                      -1.57266521356, -0.12324775762, 3.58698931032, -1.83129013642, 1.59870031488, -1.27700703481});
  e.set("b", {3, 4}, std::vector<double>(12, 0.5));
  e.set("g", {3, 4}, g);
  e.set("m", {1, 1}, {-0.224087665533});
  e.set("r", {1, 1}, {1.52425933026});
  e.expect("gi", {3, 4}, {-0.233990383229, 0.459381617024, -0.37998791768, 0.118287877469, 0.0592201195189, -0.353120549906,
                          1.98042243412, -0.0940377729843, -3.3796947961, -0.99979926197, 1.04272152465, 1.78059710909});
  e.expect("gw", {3, 4}, {1.12157275362, -0.185391507246, -0.349744896264, 0.304854020239, -0.0992080015801,
                          0.0609397329014, 1.25314714366, 0.812066143339, 0.837963815134, -0.23420210602, -0.296548572012,
                          -0.210240762047});
  e.expect("gb", {3, 4}, g);
}

// Forms the lowering does not know stay opaque (no reference semantics), never a guess.
TEST(GradValues, UnhandledFormsStayOpaque) {
  Eval e("lp: \"f64[3, 4]\", t: \"i64[3]\", w: \"f64[4]\", ge: \"f64[3, 2]\", ids: \"i64[3]\"",
         "nll = torch.ops.aten.nll_loss_forward.default(lp, t, w, 1, -100)\n"
         "loss: \"f64[]\" = nll[0]\n"
         "eb: \"f64[4, 2]\" = torch.ops.aten.embedding_dense_backward.default(ge, ids, 4, 0, False)\n"
         "return (loss, eb)");
  e.set("lp", {3, 4}, std::vector<double>(12, -1.0));
  e.set("t", {3}, {0, 1, 2});
  e.set("w", {4}, {1, 1, 1, 1});
  e.set("ge", {3, 2}, std::vector<double>(6, 1.0));
  e.set("ids", {3}, {0, 1, 2});
  EXPECT_EQ(e.ev->value(e.id("loss")), nullptr);  // class weights
  EXPECT_EQ(e.ev->value(e.id("eb")), nullptr);    // a padding index
}

// spmd_types' backward of an all-gather to an invariant: the rank's torch.chunk
// piece (uneven chunks included). Values printed by
// torch.ops.spmd_types.replicate_to_varying on x = arange(10).reshape(2, 5).
TEST(GradValues, SpmdTypesReplicateToVaryingIsTheRanksChunk) {
  Eval e("x: \"f64[2, 5]\"",
         "a: \"f64[2, 2]\" = torch.ops.spmd_types.replicate_to_varying.default(x, 2, 1, 1, False)\n"
         "b: \"f64[2, 1]\" = torch.ops.spmd_types.replicate_to_varying.default(x, 3, 1, 2, False)\n"
         "c: \"f64[2, 3]\" = torch.ops.spmd_types.replicate_to_varying.default(x, 2, -1, 0, False)\n"
         "return (a, b, c)");
  e.set("x", {2, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  e.expect("a", {2, 2}, {3, 4, 8, 9});
  e.expect("b", {2, 1}, {4, 9});
  e.expect("c", {2, 3}, {0, 1, 2, 5, 6, 7});
}

}  // namespace
}  // namespace tangle::replay
