// ATen's CPU scaled-dot-product attention calls -> sdpa / sdpa_backward.
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

// The term's root op and its attributes and operand names (scalars as #v).
std::string root(const Graph& g, const std::string& name) {
  CanonTerm t = canonicalize(g, *g.find(name));
  if (t.nodes.empty()) return "<none>";
  const auto& n = t.nodes.back();
  std::string s = eg::symbolName(n.op) + "[";
  for (size_t i = 0; i < n.attrs.size(); ++i) s += (i ? ", " : "") + n.attrs[i].toString();
  s += "]";
  for (const auto& r : n.children)
    s += r.kind == CanonTerm::Ref::Kind::Operand ? " " + g.node(r.operand).name
                                                 : " #" + std::to_string(static_cast<int>(r.scalar));
  return s;
}

const char* kParams =
    "q: \"f32[1, 4, 8, 16]\", k: \"f32[1, 2, 8, 16]\", v: \"f32[1, 2, 8, 16]\", m: \"f32[1, 1, 8, 8]\", "
    "o: \"f32[1, 4, 8, 16]\", l: \"f32[1, 4, 8]\", g: \"f32[1, 4, 8, 16]\", b: \"b8[8, 8]\"";

TEST(CanonSdpa, ForwardWithMaskScaleAndDefaults) {
  Graph gr = fx(kParams,
                "a = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(q, k, v, attn_mask = m, scale = 0.5)\n"
                "c = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(q, k, v, 0.0, True)\n"
                "n = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(q, k, v, attn_mask = b)\n"
                "return (a,)");
  EXPECT_EQ(root(gr, "a"), "sdpa[false, 0.5] q k v m");
  EXPECT_EQ(root(gr, "c"), "sdpa[true, 0.25] q k v #0");  // scale 1/sqrt(16), no mask
  EXPECT_EQ(root(gr, "n").rfind("aten._scaled_dot_product_flash_attention_for_cpu", 0), 0u);  // bool mask: opaque
}

TEST(CanonSdpa, Backward) {
  Graph gr = fx(kParams,
                "d = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward.default("
                "g, q, k, v, o, l, 0.0, False, attn_mask = m, scale = 0.25)\n"
                "return (d,)");
  EXPECT_EQ(root(gr, "d"), "sdpa_backward[false, 0.25] g q k v o l m");
}

TEST(CanonSdpa, MathPathSafeSoftmax) {
  Graph gr = fx(kParams,
                "s: \"f32[1, 1, 8, 8]\" = torch.ops.aten._safe_softmax.default(m, -1)\n"
                "return (s,)");
  EXPECT_EQ(root(gr, "s"), "safe_softmax[3, false] m");
}

TEST(CanonSdpa, DropoutIsRefused) {
  Graph gr = fx(kParams,
                "a = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(q, k, v, 0.1)\n"
                "return (a,)");
  try {
    canonicalize(gr, *gr.find("a"));
    ADD_FAILURE() << "dropout was accepted";
  } catch (const InputError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("test.py:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("dropout_p must be 0"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace tangle
