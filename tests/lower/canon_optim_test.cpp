// The canonical forms of canon_optim.cpp: the calls of optimizer steps,
// FSDP padding and torch.func's backward seed, in the elementwise vocabulary.
#include "../fx_text.h"
#include "lower/canon.h"

#include <gtest/gtest.h>

#include "import/fx_importer.h"
#include "ops/ops.h"

namespace tangle {
namespace {

Graph fx(const std::string& params, const std::string& body) {
  return importFxText(testing::fxModuleText(params, body), "test.py");
}

// The term as an s-expression over operand names, scalars as #v.
std::string canon(const Graph& g, const std::string& name) {
  CanonTerm t = canonicalize(g, g.find(name).value());
  std::vector<std::string> done;
  for (const auto& n : t.nodes) {
    std::string s = "(" + eg::symbolName(n.op);
    if (!n.attrs.empty()) {
      s += "[";
      for (size_t i = 0; i < n.attrs.size(); ++i) s += (i ? ", " : "") + n.attrs[i].toString();
      s += "]";
    }
    for (const auto& r : n.children) {
      if (r.kind == CanonTerm::Ref::Kind::Operand) s += " " + g.node(r.operand).name;
      else if (r.kind == CanonTerm::Ref::Kind::Local) s += " " + done[static_cast<size_t>(r.local)];
      else {
        std::string v = std::to_string(r.scalar);
        v.erase(v.find_last_not_of('0') + 1);
        if (!v.empty() && v.back() == '.') v.pop_back();
        s += " #" + v;
      }
    }
    done.push_back(s + ")");
  }
  return done.empty() ? "<empty>" : done.back();
}

TEST(CanonOptim, AdamWCalls) {
  Graph g = fx("p: \"f32[4]\", m: \"f32[4]\", gr: \"f32[4]\", st: \"f32[]\"",
               "l: \"f32[4]\" = torch.ops.aten.lerp.Scalar(m, gr, 0.1)\n"
               "f: \"f32[4]\" = torch.ops.prims.fma.default(gr, 0.5, p)\n"
               "r: \"f32[]\" = torch.ops.aten.reciprocal.default(st)\n"
               "pw: \"f32[]\" = torch.ops.aten.pow.Scalar(0.9, st)\n"
               "cd: \"f32[4]\" = torch.ops.aten.addcdiv.default(p, m, gr, value = -0.01)\n"
               "cm: \"f32[4]\" = torch.ops.aten.addcmul.default(p, m, gr)\n"
               "bad: \"f32[]\" = torch.ops.aten.pow.Scalar(-2.0, st)\n"
               "return (l,)");
  EXPECT_EQ(canon(g, "l"), "(add m (mul #0.1 (sub gr m)))");
  EXPECT_EQ(canon(g, "f"), "(add (mul gr #0.5) p)");
  EXPECT_EQ(canon(g, "r"), "(div #1 st)");
  EXPECT_EQ(canon(g, "pw").substr(0, 16), "(exp (mul st #-0");  // exp(st * log 0.9)
  EXPECT_EQ(canon(g, "cd"), "(add p (mul #-0.01 (div m gr)))");
  EXPECT_EQ(canon(g, "cm"), "(add p (mul m gr))");
  EXPECT_EQ(canon(g, "bad").rfind("(aten.pow.Scalar", 0), 0u);  // a negative base stays opaque
}

TEST(CanonOptim, BackwardSeedIsAConstantNotAFunctionOfTheLoss) {
  Graph g = fx("x: \"f32[2, 3]\", s: \"f32[]\"",
               "o: \"f32[]\" = torch.ops.aten.ones_like.default(s, pin_memory = False)\n"
               "z: \"f32[2, 3]\" = torch.ops.aten.zeros_like.default(x)\n"
               "f: \"f32[2, 3]\" = torch.ops.aten.full_like.default(x, 7)\n"
               "return (o,)");
  EXPECT_EQ(canon(g, "o"), "(const[1.0])");
  // a splat is typed (cast[dt] of the literal): zeros in f32 and in f16 are different tensors
  EXPECT_EQ(canon(g, "z"), "(expand[[2, 3]] (cast[\"f32\"] #0))");
  EXPECT_EQ(canon(g, "f"), "(expand[[2, 3]] (cast[\"f32\"] #7))");
}

TEST(CanonOptim, ConstantPadIsAConcatWithFill) {
  Graph g = fx("x: \"f32[3, 2]\"",
               "p: \"f32[4, 2]\" = torch.ops.aten.constant_pad_nd.default(x, [0, 0, 0, 1], 0.0)\n"
               "q: \"f32[3, 5]\" = torch.ops.aten.constant_pad_nd.default(x, [1, 2])\n"
               "n: \"f32[3, 2]\" = torch.ops.aten.constant_pad_nd.default(x, [0, 0, 0, 0], 0.0)\n"
               "c: \"f32[2, 2]\" = torch.ops.aten.constant_pad_nd.default(x, [0, 0, 0, -1], 0.0)\n"
               "return (p,)");
  EXPECT_EQ(canon(g, "p"), "(concat[0] x (expand[[1, 2]] (cast[\"f32\"] #0)))");
  EXPECT_EQ(canon(g, "q"), "(concat[1] (expand[[3, 1]] (cast[\"f32\"] #0)) x (expand[[3, 2]] (cast[\"f32\"] #0)))");
  EXPECT_EQ(canon(g, "n"), "(reshape[[3, 2]] x)");
  EXPECT_EQ(canon(g, "c").rfind("(aten.constant_pad_nd", 0), 0u);  // cropping stays opaque
}

}  // namespace
}  // namespace tangle
