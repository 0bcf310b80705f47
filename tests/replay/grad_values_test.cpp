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

}  // namespace
}  // namespace tangle::replay
