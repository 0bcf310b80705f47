// ATen call -> canonical vocabulary, on small FX graphs (read by the FX
// importer) and on every real dump of the artifact.
#include "../fx_text.h"
#include "lower/canon.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "import/fx_importer.h"
#include "import/hlo_importer.h"
#include "ops/ops.h"

namespace tangle {
namespace {

// An FX dump with the given forward() parameters and body lines.
Graph fx(const std::string& params, const std::string& body) {
  std::string text = testing::fxModuleText(params, body);
  return importFxText(text, "test.py");
}

NodeId id(const Graph& g, const std::string& name) {
  auto i = g.find(name);
  EXPECT_TRUE(i.has_value()) << name;
  return i.value_or(0);
}

// Renders a CanonTerm as an s-expression over operand names, e.g.
// (add (mm x w) b), scalars as #v.
std::string show(const Graph& g, const CanonTerm& t) {
  if (t.aliasOf) return "=" + g.node(*t.aliasOf).name;
  std::vector<std::string> done;
  for (const auto& n : t.nodes) {
    std::string s = "(" + eg::symbolName(n.op);
    if (!n.attrs.empty()) {
      s += "[";
      for (size_t i = 0; i < n.attrs.size(); ++i) s += (i ? ", " : "") + n.attrs[i].toString();
      s += "]";
    }
    for (const auto& r : n.children) {
      switch (r.kind) {
        case CanonTerm::Ref::Kind::Operand: s += " " + g.node(r.operand).name; break;
        case CanonTerm::Ref::Kind::Local: s += " " + done[static_cast<size_t>(r.local)]; break;
        case CanonTerm::Ref::Kind::Scalar: {
          std::string v = std::to_string(r.scalar);
          v.erase(v.find_last_not_of('0') + 1);
          if (!v.empty() && v.back() == '.') v.pop_back();
          s += " #" + v;
          break;
        }
      }
    }
    done.push_back(s + ")");
  }
  return done.empty() ? "<empty>" : done.back();
}

std::string canon(const Graph& g, const std::string& name) { return show(g, canonicalize(g, id(g, name))); }

TEST(Canon, MatrixProducts) {
  Graph g = fx("x: \"f32[4, 3]\", w: \"f32[3, 5]\", b: \"f32[5]\", p: \"f32[2, 4, 3]\", q: \"f32[2, 3, 5]\"",
               "mm: \"f32[4, 5]\" = torch.ops.aten.mm.default(x, w)\n"
               "bmm: \"f32[2, 4, 5]\" = torch.ops.aten.bmm.default(p, q)\n"
               "mt: \"f32[2, 4, 5]\" = torch.ops.aten.matmul.default(p, w)\n"
               "addmm: \"f32[4, 5]\" = torch.ops.aten.addmm.default(b, x, w)\n"
               "addmm2: \"f32[4, 5]\" = torch.ops.aten.addmm.default(b, x, w, beta = 2, alpha = 0.5)\n"
               "bad: \"f32[2, 4, 5]\" = torch.ops.aten.baddbmm.default(bmm, p, q, beta = 0.0, alpha = 0.25)\n"
               "bad2: \"f32[2, 4, 5]\" = torch.ops.aten.baddbmm.default(bmm, p, q)\n"
               "return (mm,)");
  EXPECT_EQ(canon(g, "mm"), "(mm x w)");
  EXPECT_EQ(canon(g, "bmm"), "(bmm p q)");
  EXPECT_EQ(canon(g, "mt"), "(matmul p w)");
  EXPECT_EQ(canon(g, "addmm"), "(add (mm x w) b)");
  EXPECT_EQ(canon(g, "addmm2"), "(add (mul (mm x w) #0.5) (mul b #2))");
  EXPECT_EQ(canon(g, "bad"), "(mul (bmm p q) #0.25)");
  EXPECT_EQ(canon(g, "bad2"), "(add (bmm p q) bmm)");
}

TEST(Canon, Transposes) {
  Graph g = fx("x: \"f32[4, 3]\", v: \"f32[3]\", y: \"f32[2, 3, 4]\"",
               "t: \"f32[3, 4]\" = torch.ops.aten.t.default(x)\n"
               "t1: \"f32[3]\" = torch.ops.aten.t.default(v)\n"
               "tr: \"f32[2, 4, 3]\" = torch.ops.aten.transpose.int(y, -1, 1)\n"
               "tr0: \"f32[2, 3, 4]\" = torch.ops.aten.transpose.int(y, 2, -1)\n"
               "p: \"f32[4, 2, 3]\" = torch.ops.aten.permute.default(y, [-1, 0, 1])\n"
               "pid: \"f32[2, 3, 4]\" = torch.ops.aten.permute.default(y, [0, 1, 2])\n"
               "return (t,)");
  EXPECT_EQ(canon(g, "t"), "(transpose[0, 1] x)");
  EXPECT_EQ(canon(g, "t1"), "=v");
  EXPECT_EQ(canon(g, "tr"), "(transpose[1, 2] y)");
  EXPECT_EQ(canon(g, "tr0"), "=y");
  EXPECT_EQ(canon(g, "p"), "(permute[[2, 0, 1]] y)");
  EXPECT_EQ(canon(g, "pid"), "=y");
}

TEST(Canon, ViewsBecomeReshapes) {
  Graph g = fx("x: \"f32[4, 6]\"",
               "view: \"f32[2, 2, 6]\" = torch.ops.aten.view.default(x, [-1, 2, 6])\n"
               "r: \"f32[24]\" = torch.ops.aten.reshape.default(x, [24])\n"
               "u: \"f32[4, 1, 6]\" = torch.ops.aten.unsqueeze.default(x, 1)\n"
               "s: \"f32[4, 6]\" = torch.ops.aten.squeeze.dim(u, 1)\n"
               "f: \"f32[24]\" = torch.ops.aten.flatten.using_ints(x)\n"
               "uv: \"f32[6, 4]\" = torch.ops.aten._unsafe_view.default(x, [6, 4])\n"
               "same: \"f32[4, 6]\" = torch.ops.aten.view.default(x, [4, 6])\n"
               "return (view,)");
  EXPECT_EQ(canon(g, "view"), "(reshape[[2, 2, 6]] x)");
  EXPECT_EQ(canon(g, "r"), "(reshape[[24]] x)");
  EXPECT_EQ(canon(g, "u"), "(reshape[[4, 1, 6]] x)");
  EXPECT_EQ(canon(g, "s"), "(reshape[[4, 6]] u)");
  EXPECT_EQ(canon(g, "f"), "(reshape[[24]] x)");
  EXPECT_EQ(canon(g, "uv"), "(reshape[[6, 4]] x)");
  EXPECT_EQ(canon(g, "same"), "=x");
}

TEST(Canon, SlicesAreNormalized) {
  Graph g = fx("x: \"f32[8, 6]\"",
               "a: \"f32[8, 4]\" = torch.ops.aten.slice.Tensor(x, 1, 2, 9223372036854775807)\n"
               "b: \"f32[2, 6]\" = torch.ops.aten.slice.Tensor(x, 0, -2)\n"
               "c: \"f32[3, 6]\" = torch.ops.aten.slice.Tensor(x, 0, 1, -4)\n"
               "d: \"f32[8, 6]\" = torch.ops.aten.slice.Tensor(x, 0, 0, 9223372036854775807)\n"
               "e: \"f32[8, 3]\" = torch.ops.aten.slice.Tensor(x, -1, 0, 6, 2)\n"
               "f: \"f32[8, 6]\" = torch.ops.aten.slice.Tensor(x)\n"
               "return (a,)");
  EXPECT_EQ(canon(g, "a"), "(slice[1, 2, 6, 1] x)");
  EXPECT_EQ(canon(g, "b"), "(slice[0, 6, 8, 1] x)");
  EXPECT_EQ(canon(g, "c"), "(slice[0, 1, 4, 1] x)");
  EXPECT_EQ(canon(g, "d"), "=x");
  EXPECT_EQ(canon(g, "e"), "(slice[1, 0, 6, 2] x)");
  EXPECT_EQ(canon(g, "f"), "=x");
}

TEST(Canon, CatAndSplit) {
  Graph g = fx("x: \"f32[2, 3]\", y: \"f32[2, 5]\"",
               "cat: \"f32[2, 8]\" = torch.ops.aten.cat.default([x, y], -1)\n"
               "cat0: \"f32[4, 3]\" = torch.ops.aten.cat.default([x, x])\n"
               "one: \"f32[2, 3]\" = torch.ops.aten.cat.default([x], 1)\n"
               "sp = torch.ops.aten.split_with_sizes.default(cat, [3, 5], 1)\n"
               "s2 = torch.ops.aten.split.Tensor(y, 2, -1)\n"
               "return (cat,)");
  EXPECT_EQ(canon(g, "cat"), "(concat[1] x y)");
  EXPECT_EQ(canon(g, "cat0"), "(concat[0] x x)");
  EXPECT_EQ(canon(g, "one"), "=x");
  EXPECT_EQ(canon(g, "sp"), "(split[1, [3, 5]] cat)");
  EXPECT_EQ(canon(g, "s2"), "(split[1, [2, 2, 1]] y)");
}

TEST(Canon, Arithmetic) {
  Graph g = fx("x: \"f32[4]\", y: \"f32[4]\"",
               "a: \"f32[4]\" = torch.ops.aten.add.Tensor(x, y)\n"
               "a2: \"f32[4]\" = torch.ops.aten.add.Tensor(x, y, alpha = 2)\n"
               "s: \"f32[4]\" = torch.ops.aten.sub.Tensor(x, 1.5)\n"
               "s2: \"f32[4]\" = torch.ops.aten.sub.Tensor(x, 3, alpha = 2)\n"
               "m: \"f32[4]\" = torch.ops.aten.mul.Scalar(x, 0.5)\n"
               "d: \"f32[4]\" = torch.ops.aten.div.Tensor(x, y)\n"
               "dm: \"f32[4]\" = torch.ops.aten.div.Tensor_mode(x, y, rounding_mode = 'floor')\n"
               "r: \"f32[4]\" = torch.ops.aten.rsub.Scalar(x, 1.0)\n"
               "r2: \"f32[4]\" = torch.ops.aten.rsub.Tensor(x, y, alpha = 3)\n"
               "return (a,)");
  EXPECT_EQ(canon(g, "a"), "(add x y)");
  EXPECT_EQ(canon(g, "a2"), "(add x (mul y #2))");
  EXPECT_EQ(canon(g, "s"), "(sub x #1.5)");
  EXPECT_EQ(canon(g, "s2"), "(sub x #6)");
  EXPECT_EQ(canon(g, "m"), "(mul x #0.5)");
  EXPECT_EQ(canon(g, "d"), "(div x y)");
  EXPECT_EQ(canon(g, "dm"), "(aten.div.Tensor_mode[\"<tensor>\", \"<tensor>\", \"rounding_mode=\", \"floor\"] x y)");
  EXPECT_EQ(canon(g, "r"), "(sub #1 x)");
  EXPECT_EQ(canon(g, "r2"), "(sub y (mul x #3))");
}

TEST(Canon, UnaryNormsReductions) {
  Graph g = fx("x: \"f16[2, 3, 8]\", w: \"f16[8]\", b: \"f16[8]\"",
               "g0: \"f16[2, 3, 8]\" = torch.ops.aten.gelu.default(x)\n"
               "g1: \"f16[2, 3, 8]\" = torch.ops.aten.gelu.default(x, approximate = 'tanh')\n"
               "e: \"f16[2, 3, 8]\" = torch.ops.aten.exp.default(x)\n"
               "rs: \"f16[2, 3, 8]\" = torch.ops.aten.rsqrt.default(x)\n"
               "pw: \"f16[2, 3, 8]\" = torch.ops.aten.pow.Tensor_Scalar(x, 2)\n"
               "ln = torch.ops.aten.native_layer_norm.default(x, [8], w, b, 1e-05)\n"
               "ln2 = torch.ops.aten.native_layer_norm.default(x, [8], None, None, 1e-05)\n"
               "ap = torch.ops.apex.fused_layer_norm_affine_fwd.default(x, w, b, [8], 1e-05)\n"
               "sm: \"f32[2, 3, 8]\" = torch.ops.aten._softmax.default(x, -1, True)\n"
               "sd: \"f16[2, 8]\" = torch.ops.aten.sum.dim_IntList(x, [-2])\n"
               "sk: \"f16[2, 1, 1]\" = torch.ops.aten.sum.dim_IntList(x, [2, 1], True)\n"
               "sa: \"f16[]\" = torch.ops.aten.sum.default(x)\n"
               "mn: \"f16[]\" = torch.ops.aten.mean.default(x)\n"
               "ex: \"f16[4, 2, 3, 8]\" = torch.ops.aten.expand.default(x, [4, -1, -1, -1])\n"
               "return (g0,)");
  EXPECT_EQ(canon(g, "g0"), "(gelu[\"none\"] x)");
  EXPECT_EQ(canon(g, "g1"), "(gelu[\"tanh\"] x)");
  EXPECT_EQ(canon(g, "e"), "(exp x)");
  EXPECT_EQ(canon(g, "rs"), "(rsqrt x)");
  EXPECT_EQ(canon(g, "pw"), "(pow_scalar[2.0] x)");
  EXPECT_EQ(canon(g, "ln"), "(native_layer_norm[[8], 1e-05] x w b)");
  EXPECT_EQ(canon(g, "ln2"), "(native_layer_norm[[8], 1e-05] x #1 #0)");
  EXPECT_EQ(canon(g, "ap"), "(apex_layer_norm[[8], 1e-05] x w b)");
  EXPECT_EQ(canon(g, "sm"), "(softmax[2, true] x)");
  EXPECT_EQ(canon(g, "sd"), "(sum_dim[[1], false] x)");
  EXPECT_EQ(canon(g, "sk"), "(sum_dim[[1, 2], true] x)");
  EXPECT_EQ(canon(g, "sa"), "(sum_dim[[0, 1, 2], false] x)");
  EXPECT_EQ(canon(g, "mn"), "(mean_dim[[0, 1, 2], false] x)");
  EXPECT_EQ(canon(g, "ex"), "(expand[[4, 2, 3, 8]] x)");
}

TEST(Canon, IdentitiesAndCasts) {
  Graph g = fx("x: \"f32[4]\", h: \"f16[4]\"",
               "c: \"f32[4]\" = torch.ops.aten.clone.default(x)\n"
               "d: \"f32[4]\" = torch.ops.aten.detach.default(c)\n"
               "al: \"f32[4]\" = torch.ops.aten.alias.default(x)\n"
               "l: \"f32[4]\" = torch.ops.tg.log_tensor.default(x, 'tokens')\n"
               "t1: \"f32[4]\" = torch.ops.aten._to_copy.default(x, dtype = torch.float32, layout = torch.strided, device = device(type='cuda', index=0))\n"
               "t2: \"f16[4]\" = torch.ops.aten._to_copy.default(x, dtype = torch.float16)\n"
               "t3: \"f32[4]\" = torch.ops.aten._to_copy.default(x, device = device(type='cuda', index=1))\n"
               "cp: \"f32[4]\" = torch.ops.aten.copy.default(x, c)\n"
               "cp2: \"f32[4]\" = torch.ops.aten.copy.default(x, h)\n"
               "return (c,)");
  EXPECT_EQ(canon(g, "c"), "=x");
  EXPECT_EQ(canon(g, "d"), "=c");
  EXPECT_EQ(canon(g, "al"), "=x");
  EXPECT_EQ(canon(g, "l"), "=x");
  EXPECT_EQ(canon(g, "t1"), "=x");
  EXPECT_EQ(canon(g, "t2"), "(cast[\"f16\"] x)");
  EXPECT_EQ(canon(g, "t3"), "=x");
  EXPECT_EQ(canon(g, "cp"), "=c");
  EXPECT_EQ(canon(g, "cp2"), "(cast[\"f32\"] h)");
}

TEST(Canon, OpaqueKeepsArgumentsAndTensorPositions) {
  Graph g = fx("x: \"f32[4]\", y: \"f32[4]\"",
               "d: \"f32[4]\" = torch.ops.aten.leaky_relu.default(x, 0.1, True)\n"
               "m1: \"f32[4]\" = torch.ops.aten.maximum.default(x, y)\n"
               "w1: \"f32[4]\" = torch.ops.aten.where.self(x, y, 2)\n"
               "w2: \"f32[4]\" = torch.ops.aten.where.self(x, 2, y)\n"
               "return (m1,)");
  EXPECT_EQ(canon(g, "d"), "(aten.leaky_relu.default[\"<tensor>\", 0.1, true] x)");
  EXPECT_EQ(canon(g, "m1"), "(aten.maximum.default[\"<tensor>\", \"<tensor>\"] x y)");
  EXPECT_NE(canon(g, "w1"), canon(g, "w2"));
}

TEST(Canon, MaskingIndexingAndDropout) {
  Graph g = fx("w: \"f32[10, 3]\", ids: \"i64[2, 5]\", x: \"f32[2, 5, 3]\", l: \"f32[4, 10]\", t: \"i64[4]\", z: \"i64[]\"",
               "lt: \"b8[2, 5]\" = torch.ops.aten.lt.Scalar(ids, 0)\n"
               "ge: \"b8[2, 5]\" = torch.ops.aten.ge.Scalar(ids, 10)\n"
               "m: \"b8[2, 5]\" = torch.ops.aten.bitwise_or.Tensor(lt, ge)\n"
               "e: \"f32[2, 5, 3]\" = torch.ops.aten.index.Tensor(w, [ids])\n"
               "p: \"f32[2, 5, 3]\" = torch.ops.aten.index_put.default(x, [m], z)\n"
               "f: \"f32[2, 5, 3]\" = torch.ops.aten.masked_fill.Scalar(x, m, -1.0)\n"
               "a: \"i64[4]\" = torch.ops.aten.arange.start(0, 4)\n"
               "gr: \"f32[4]\" = torch.ops.aten.index.Tensor(l, [a, t])\n"
               "d = torch.ops.aten.native_dropout.default(x, 0.1, True)\n"
               "mx = torch.ops.aten.max.dim(l, -1)\n"
               "return (e,)");
  EXPECT_EQ(canon(g, "lt"), "(lt ids #0)");
  EXPECT_EQ(canon(g, "m"), "(or lt ge)");
  EXPECT_EQ(canon(g, "e"), "(index_rows w ids)");
  EXPECT_EQ(canon(g, "p"), "(where (reshape[[2, 5, 1]] m) z x)");
  EXPECT_EQ(canon(g, "f"), "(where m #-1 x)");
  EXPECT_EQ(canon(g, "gr"), "(gather_rows l t)");
  EXPECT_EQ(canon(g, "d"), "(dropout[0.1, true] x)");
  EXPECT_EQ(canon(g, "mx"), "(max_dim[1, false] l)");
}

// The backward of a routed expert (switch MLP): relu's threshold_backward, x[idx]'s new_zeros, and
// zeros of a data-dependent (unbacked) size, whose shape comes from the annotation.
TEST(Canon, ZeroPaddingHasTheGradientsDtype) {
  // slice_backward's zeros are a splat typed like its gradient: an f16 and an
  // f32 gradient padded alike read two different zero tensors (a bare
  // expand(0) would be one e-class for both dtypes).
  Graph g = fx("a: \"f16[2, 3]\", b: \"f32[2, 3]\", c: \"bf16[3, 3]\"",
               "sa: \"f16[4, 3]\" = torch.ops.aten.slice_backward.default(a, [4, 3], 0, 2, 4, 1)\n"
               "sb: \"f32[4, 3]\" = torch.ops.aten.slice_backward.default(b, [4, 3], 0, 2, 4, 1)\n"
               "sc: \"bf16[3, 2, 3]\" = torch.ops.aten.select_backward.default(c, [3, 2, 3], 1, 0)\n"
               "return (sa, sb, sc)");
  EXPECT_EQ(canon(g, "sa"), "(concat[0] (expand[[2, 3]] (cast[\"f16\"] #0)) a)");
  EXPECT_EQ(canon(g, "sb"), "(concat[0] (expand[[2, 3]] (cast[\"f32\"] #0)) b)");
  EXPECT_EQ(canon(g, "sc"), "(concat[1] (reshape[[3, 1, 3]] c) (expand[[3, 1, 3]] (cast[\"bf16\"] #0)))");
}

TEST(Canon, RoutedBackwardOps) {
  Graph g = fx("x: \"f32[4, 3]\", g: \"f32[4, 3]\", idx: \"i64[u0, 1]\"",
               "tb: \"f32[4, 3]\" = torch.ops.aten.threshold_backward.default(g, x, 0)\n"
               "nz: \"f32[4, 3]\" = torch.ops.aten.new_zeros.default(g, [4, 3], dtype = torch.float32)\n"
               "n: \"Sym(u0)\" = torch.ops.aten.sym_size.int(idx, 0)\n"
               "z: \"f32[u0, 1, 3]\" = torch.ops.aten.zeros.default([n, 1, 3], dtype = torch.float32)\n"
               "bad: \"f32[u0, 2, 3]\" = torch.ops.aten.zeros.default([n, 1, 3], dtype = torch.float32)\n"
               "return (tb,)");
  EXPECT_EQ(canon(g, "tb"), "(where (le x #0) #0 g)");
  EXPECT_EQ(canon(g, "nz"), "(expand[[4, 3]] (cast[\"f32\"] #0))");
  std::string z = canon(g, "z");
  EXPECT_EQ(z.rfind("(expand[[", 0), 0u) << z;
  EXPECT_NE(z.find(", 1, 3]] (cast[\"f32\"] #0))"), std::string::npos) << z;
  // an annotation that disagrees with the list's concrete sizes is not trusted: the call stays opaque
  EXPECT_EQ(canon(g, "bad").rfind("(aten.zeros.default", 0), 0u) << canon(g, "bad");
}

// torchtitan's vocab-parallel embedding clamps the shifted ids; its attention uses _safe_softmax.
TEST(Canon, ClampAndSafeSoftmax) {
  Graph g = fx("ids: \"i64[2, 5]\", x: \"f32[2, 5]\"",
               "c: \"i64[2, 5]\" = torch.ops.aten.clamp.default(ids, 0, 63)\n"
               "lo: \"i64[2, 5]\" = torch.ops.aten.clamp.default(ids, 2)\n"
               "bad: \"i64[2, 5]\" = torch.ops.aten.clamp.default(ids, 5, 1)\n"
               "s: \"f32[2, 5]\" = torch.ops.aten._safe_softmax.default(x, -1)\n"
               "return (c,)");
  EXPECT_EQ(canon(g, "c"), "(where (lt ids #0) #0 (where (gt ids #63) #63 ids))");
  EXPECT_EQ(canon(g, "lo"), "(where (lt ids #2) #2 ids)");
  EXPECT_EQ(canon(g, "bad").rfind("(aten.clamp.default", 0), 0u);  // lo > hi: ATen gives hi everywhere
  EXPECT_EQ(canon(g, "s"), "(safe_softmax[1, false] x)");
}

// A complex tensor is its real view [..., 2]: views keep the annotation's shape, a complex
// product is (ac - bd, ad + bc) on the last dim, any other op on it stays opaque.
TEST(Canon, ComplexTensorsAsRealViews) {
  Graph g = fx("q: \"f32[1, 8, 2, 16]\", c: \"c64[8, 8]\"",
               "v: \"f32[1, 8, 2, 8, 2]\" = torch.ops.aten.view.default(q, [1, 8, 2, 8, 2])\n"
               "z: \"c64[1, 8, 2, 8]\" = torch.ops.aten.view_as_complex.default(v)\n"
               "s: \"c64[4, 8]\" = torch.ops.aten.slice.Tensor(c, 0, 0, 4)\n"
               "neg: \"c64[8, 4]\" = torch.ops.aten.slice.Tensor(c, -1, 0, 4)\n"
               "r: \"c64[1, 8, 1, 8]\" = torch.ops.aten.view.default(c, [1, 8, 1, 8])\n"
               "m: \"c64[1, 8, 2, 8]\" = torch.ops.aten.mul.Tensor(z, r)\n"
               "t: \"c64[1, 8, 2, 8]\" = torch.ops.aten.add.Tensor(z, r)\n"
               "o: \"f32[1, 8, 2, 8, 2]\" = torch.ops.aten.view_as_real.default(m)\n"
               "return (o,)");
  EXPECT_TRUE(g.node(id(g, "c")).complexView);
  ASSERT_TRUE(g.node(id(g, "c")).type);
  EXPECT_EQ(toString(*g.node(id(g, "c")).type), "f32[8, 8, 2]");
  EXPECT_FALSE(g.node(id(g, "v")).complexView);
  EXPECT_EQ(canon(g, "z"), "=v");
  EXPECT_EQ(canon(g, "o"), "=m");
  EXPECT_EQ(canon(g, "s"), "(slice[0, 0, 4, 1] c)");
  EXPECT_EQ(canon(g, "neg").rfind("(aten.slice.Tensor", 0), 0u);  // -1 would count the trailing 2
  EXPECT_EQ(canon(g, "r"), "(reshape[[1, 8, 1, 8, 2]] c)");
  EXPECT_EQ(canon(g, "m"),
            "(concat[4] (sub (mul (slice[4, 0, 1, 1] z) (slice[4, 0, 1, 1] r)) (mul (slice[4, 1, 2, 1] z) "
            "(slice[4, 1, 2, 1] r))) (add (mul (slice[4, 0, 1, 1] z) (slice[4, 1, 2, 1] r)) (mul (slice[4, 1, 2, 1] z) "
            "(slice[4, 0, 1, 1] r))))");
  EXPECT_EQ(canon(g, "t").rfind("(aten.add.Tensor", 0), 0u);  // not lowered: opaque
}

TEST(Canon, SliceScatterIsAConcatAroundTheSource) {
  Graph g = fx("x: \"f32[4, 10]\", s: \"f32[4, 3]\", f: \"f32[4, 10]\"",
               "mid: \"f32[4, 10]\" = torch.ops.aten.slice_scatter.default(x, s, 1, 2, 5)\n"
               "head: \"f32[4, 10]\" = torch.ops.aten.slice_scatter.default(x, s, 1, 0, 3)\n"
               "full: \"f32[4, 10]\" = torch.ops.aten.slice_scatter.default(x, f, 1, 0, 9223372036854775807)\n"
               "return (mid,)");
  EXPECT_EQ(canon(g, "mid"), "(concat[1] (slice[1, 0, 2, 1] x) s (slice[1, 5, 10, 1] x))");
  EXPECT_EQ(canon(g, "head"), "(concat[1] s (slice[1, 3, 10, 1] x))");
  auto full = canonicalize(g, id(g, "full"));
  ASSERT_TRUE(full.aliasOf.has_value());
  EXPECT_EQ(*full.aliasOf, id(g, "f"));
}

TEST(Canon, MalformedKnownOpsAreInputErrors) {
  Graph g = fx("x: \"f32[4, 3]\"",
               "t: \"f32[3, 4]\" = torch.ops.aten.transpose.int(x, 'a', 1)\n"
               "s: \"f32[3, 4]\" = torch.ops.aten.slice.Tensor(x, 5, 0, 1)\n"
               "m: \"f32[4, 4]\" = torch.ops.aten.mm.default(x, 3)\n"
               "return (t,)");
  for (const char* name : {"t", "s", "m"}) {
    try {
      canonicalize(g, id(g, name));
      ADD_FAILURE() << name << " did not throw";
    } catch (const InputError& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find("test.py:"), std::string::npos) << msg;
      EXPECT_NE(msg.find(std::string("'") + name + "'"), std::string::npos) << msg;
    }
  }
}

// canon is total on the real dumps: never throws on a call node, and every
// known-op result is a well-formed term.
TEST(Canon, TotalOnRealDumps) {
  namespace fs = std::filesystem;
  fs::path root = fs::path(TANGLE_SOURCE_DIR) / "../shared/data/entangle-artifact";
  if (!fs::exists(root)) GTEST_SKIP() << "artifact data not found at " << root;
  size_t files = 0, calls = 0, known = 0;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.path().extension() != ".py") continue;
    std::string rel = fs::relative(entry.path(), root).string();
    if (rel.rfind("gpt", 0) != 0 && rel.rfind("qwen2", 0) != 0 && rel.rfind("bug_", 0) != 0) continue;
    Graph g = importFxFile(entry.path().string());
    ++files;
    for (NodeId i = 0; i < static_cast<NodeId>(g.size()); ++i) {
      const Node& n = g.node(i);
      if (n.op == "placeholder" || n.op == "output" || n.op == "getitem" || n.op == "get_attr") continue;
      ++calls;
      CanonTerm t;
      ASSERT_NO_THROW(t = canonicalize(g, i)) << rel << ": " << n.name;
      ASSERT_TRUE(t.aliasOf || !t.nodes.empty()) << rel << ": " << n.name;
      if (t.aliasOf || ops::find(t.nodes.back().op)) ++known;
    }
  }
  EXPECT_GT(files, 0u);
  std::printf("canon: %zu files, %zu calls, %zu to the vocabulary\n", files, calls, known);
  EXPECT_GT(known, calls / 2) << "most calls should map to the canonical vocabulary";
}

// XLA HLO instructions (src/lower/canon_hlo.cpp).
TEST(Canon, HloInstructions) {
  Graph g = importHloText(R"(HloModule m
%add.r (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
%max.r (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %m = f32[] maximum(%a, %b)
}
ENTRY %e (x: f32[6,4], w: f32[6,5], q: f32[3,2,4,8], k: f32[3,2,4,8], v: f32[2], h: f32[6,3,2], g: f32[6]) -> f32[4,5] {
  %x = f32[6,4]{1,0} parameter(0)
  %w = f32[6,5]{1,0} parameter(1)
  %q = f32[3,2,4,8]{3,2,1,0} parameter(2)
  %k = f32[3,2,4,8]{3,2,1,0} parameter(3)
  %v = f32[2]{0} parameter(4)
  %h = f32[6,3,2]{2,1,0} parameter(5)
  %g = f32[6]{0} parameter(6)
  %dot.1 = f32[4,5]{1,0} dot(%x, %w), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  %dot.2 = f32[2,4,3,3]{3,2,1,0} dot(%q, %k), lhs_batch_dims={1,2}, lhs_contracting_dims={3}, rhs_batch_dims={1,2}, rhs_contracting_dims={3}
  %bc.1 = f32[3,2,5]{2,1,0} broadcast(%v), dimensions={1}
  %c.1 = f32[] constant(8)
  %bc.2 = f32[4,5]{1,0} broadcast(%c.1), dimensions={}
  %ninf = f32[] constant(-inf)
  %zero = f32[] constant(0)
  %red.1 = f32[2,4,3]{2,1,0} reduce(%dot.2, %ninf), dimensions={3}, to_apply=%max.r
  %red.2 = f32[2,4,3]{2,1,0} reduce(%dot.2, %zero), dimensions={3}, to_apply=%add.r
  %sl.1 = f32[6,2]{1,0} slice(%x), slice={[0:6], [1:3]}
  %tr.1 = f32[4,6]{1,0} transpose(%x), dimensions={1,0}
  %cmp.1 = pred[4,5]{1,0} compare(%dot.1, %bc.2), direction=GE
  %sel.1 = f32[4,5]{1,0} select(%cmp.1, %dot.1, %bc.2)
  %t.1 = f32[6]{0} custom-call(%g), custom_call_target="AwsNeuronTransferWithStaticRing"
  %eps = f32[] constant(1e-05)
  %rms.1 = f16[6,3,2]{2,1,0} custom-call(%h, %t.1, %eps), custom_call_target="AwsNeuronRmsNorm", backend_config="0"
  %cv.1 = f16[4,5]{1,0} convert(%sel.1)
  %arr = f32[32]{0} constant({...})
  ROOT %out = (f32[4,5], f32[2,4,3], f32[2,4,3]) tuple(%sel.1, %red.1, %red.2)
}
)",
                          "t.hlo");
  EXPECT_EQ(canon(g, "dot.1"), "(mm (transpose[0, 1] x) w)");  // contracted dim 0 moved inside
  EXPECT_EQ(canon(g, "dot.2"), "(matmul (permute[[1, 2, 0, 3]] q) (permute[[1, 2, 3, 0]] k))");
  EXPECT_EQ(canon(g, "bc.1"), "(expand[[3, 2, 5]] (reshape[[1, 2, 1]] v))");
  EXPECT_EQ(canon(g, "bc.2"), "(expand[[4, 5]] (reshape[[1, 1]] c.1))");
  EXPECT_EQ(canon(g, "red.1"), "(amax[[3], false] dot.2)");
  EXPECT_EQ(canon(g, "red.2"), "(sum_dim[[3], false] dot.2)");
  EXPECT_EQ(canon(g, "sl.1"), "(slice[1, 1, 3, 1] x)");
  EXPECT_EQ(canon(g, "tr.1"), "(transpose[0, 1] x)");
  EXPECT_EQ(canon(g, "cmp.1"), "(ge dot.1 bc.2)");
  EXPECT_EQ(canon(g, "sel.1"), "(where cmp.1 dot.1 bc.2)");
  EXPECT_EQ(canon(g, "t.1"), "=g");  // a copy between memories
  EXPECT_EQ(canon(g, "rms.1"),
            "(cast[\"f16\"] (permute[[2, 0, 1]] (rms_norm[1e-05] (permute[[1, 2, 0]] h) t.1)))");
  EXPECT_EQ(canon(g, "cv.1"), "(cast[\"f16\"] sel.1)");
  EXPECT_EQ(canon(g, "c.1"), "(const[8.0])");
}

}  // namespace
}  // namespace tangle
