// FSDP2 buffer ops (src/lower/fsdp.cpp) on a hand-written make_fx-style rank graph: one
// parameter w of 3 rows sharded over 2 ranks (padded to 4), all-gathered, used, its gradient
// chunk_cat'ed and reduce-scattered.
#include "../fx_text.h"
#include "lower/fsdp.h"

#include <gtest/gtest.h>

#include "import/fx_importer.h"

namespace tangle {
namespace {

const char* kStep =
    "shard: \"f32[4]\" = self._tensor_constant0\n"
    "empty: \"f32[8]\" = torch.ops.aten.empty.memory_format([8], dtype = torch.float32)\n"
    "copy_in = torch.ops.fsdp.all_gather_copy_in.default([shard], empty, [4], 4, 0)\n"
    "getitem: \"f32[4]\" = copy_in[0]\n"
    "getitem_1: \"f32[8]\" = copy_in[1]\n"
    "ag = torch.ops.c10d._allgather_base_.default(getitem_1, getitem, '0', False)\n"
    "getitem_2: \"f32[8]\" = ag[0]\n"
    "view: \"f32[2, 4]\" = torch.ops.aten.view.default(getitem_2, [2, -1])\n"
    "buf: \"f32[8]\" = self._tensor_constant1\n"
    "view_1: \"f32[2, 4]\" = torch.ops.aten.view.default(buf, [2, -1])\n"
    "split = torch.ops.fsdp.split_with_sizes_copy.default(view, [4], 1, out = [view_1])\n"
    "w: \"f32[3, 2]\" = torch.ops.aten.as_strided.default(buf, [3, 2], [2, 1], 0)\n"
    "g: \"f32[3, 2]\" = torch.ops.aten.mul.Tensor(w, x)\n"
    "empty_1: \"f32[8]\" = torch.ops.aten.empty.memory_format([8], dtype = torch.float32)\n"
    "view_2: \"f32[2, 4]\" = torch.ops.aten.view.default(empty_1, [2, -1])\n"
    "cc = torch.ops.fsdp.chunk_cat.default([g], 0, 2, out = view_2)\n"
    "empty_2: \"f32[4]\" = torch.ops.aten.empty.memory_format([4], dtype = torch.float32)\n"
    "rs = torch.ops.c10d._reduce_scatter_base_.default(empty_2, empty_1, '0', 'avg', False)\n"
    "getitem_4: \"f32[4]\" = rs[0]\n"
    "grad: \"f32[2, 2]\" = torch.ops.aten.as_strided.default(getitem_4, [2, 2], [2, 1], 0)\n"
    "return (grad,)";

Graph lowered(const std::string& body) {
  Graph g = importFxText(testing::fxModuleText("x: \"f32[3, 2]\"", body), "rank.py");
  lowerFsdpBuffers(g);
  return g;
}

std::string opOf(const Graph& g, const std::string& name) {
  auto id = g.find(name);
  return id ? g.node(*id).op : "?";
}

TEST(Fsdp, BufferOpsBecomeFunctional) {
  Graph g = lowered(kStep);
  g.verify();
  for (const Node& n : g.nodes) {
    EXPECT_NE(n.op.rfind("fsdp.", 0), 0u) << n.name;
    EXPECT_NE(n.op.rfind("c10d.", 0), 0u) << n.name;
  }
  EXPECT_EQ(opOf(g, "ag_fsdp"), "_c10d_functional.all_gather_into_tensor.default");
  EXPECT_EQ(opOf(g, "rs_fsdp"), "_c10d_functional.reduce_scatter_tensor.default");
  // w reads the all-gathered piece (slice of the [2, 4] view), not the attribute buf
  const Node& mul = g.node(*g.find("g"));
  const Node& w = g.node(std::get<TensorRef>(mul.args[0].v).node);
  EXPECT_EQ(w.op, "aten.view.default");
  // the gradient of 3 rows is padded to 4 before it is laid out as 2 chunks
  bool padded = false;
  for (const Node& n : g.nodes) padded |= n.op == "aten.constant_pad_nd.default";
  EXPECT_TRUE(padded);
  // the returned gradient is a slice of the reduce-scatter's result
  ASSERT_EQ(g.outputNodes().size(), 1u);
  EXPECT_EQ(g.node(g.outputNodes()[0]).type->shape, (std::vector<Dim>{2, 2}));
}

void expectError(const std::string& body, const std::string& what) {
  try {
    lowered(body);
    ADD_FAILURE() << "expected an error mentioning " << what;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

std::string replaced(std::string s, const std::string& from, const std::string& to) {
  s.replace(s.find(from), from.size(), to);
  return s;
}

TEST(Fsdp, StaleAndUnwrittenBuffersAreBadInput) {
  // the parameter view made before the buffer is filled is stale
  std::string early = replaced(kStep, "w: \"f32[3, 2]\" = torch.ops.aten.as_strided.default(buf, [3, 2], [2, 1], 0)\n", "");
  early = replaced(early, "view_1: ", "w: \"f32[3, 2]\" = torch.ops.aten.as_strided.default(buf, [3, 2], [2, 1], 0)\nview_1: ");
  expectError(early, "stale");
  // the reduce-scatter reads a buffer no chunk_cat filled
  expectError(replaced(kStep, "cc = torch.ops.fsdp.chunk_cat.default([g], 0, 2, out = view_2)\n", ""),
              "read before anything writes it");
  expectError(replaced(kStep, "[g], 0, 2", "[g], 1, 2"), "dim other than 0");
  expectError(replaced(kStep, "'0', 'avg'", "'0', 'premul_sum'"), "not supported");
}

}  // namespace
}  // namespace tangle
