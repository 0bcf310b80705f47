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

Graph lowered(const std::string& body, const char* params = "x: \"f32[3, 2]\"") {
  Graph g = importFxText(testing::fxModuleText(params, body), "rank.py");
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

void expectError(const std::string& body, const std::string& what, const char* params = "x: \"f32[3, 2]\"") {
  try {
    lowered(body, params);
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
  // a conversion to or from a non-float dtype in a buffer op is not a cast tangle treats as exact
  std::string toInt = replaced(kStep, "g: \"f32[3, 2]\" = torch.ops.aten.mul.Tensor(w, x)\n",
                               "g0: \"f32[3, 2]\" = torch.ops.aten.mul.Tensor(w, x)\n"
                               "g: \"i64[3, 2]\" = torch.ops.aten._to_copy.default(g0, dtype = torch.int64)\n");
  expectError(toInt, "writes a i64 value into the f32 buffer 'empty_1': only a conversion between float dtypes");
}

// Mixed precision (MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=f32)): the bf16 gradient
// chunk_cat'ed into the f32 reduce-scatter buffer is a cast of the chunked value.
TEST(Fsdp, FloatConversionInABufferOpIsACast) {
  std::string mixed = replaced(kStep, "g: \"f32[3, 2]\" = torch.ops.aten.mul.Tensor(w, x)\n",
                               "g0: \"f32[3, 2]\" = torch.ops.aten.mul.Tensor(w, x)\n"
                               "g: \"bf16[3, 2]\" = torch.ops.aten._to_copy.default(g0, dtype = torch.bfloat16)\n");
  Graph g = lowered(mixed);
  g.verify();
  const Node* cast = nullptr;
  for (const Node& n : g.nodes)
    if (n.op == "aten._to_copy.default" && n.type && n.type->dtype == DType::F32) cast = &n;
  ASSERT_NE(cast, nullptr);
  EXPECT_EQ(g.node(std::get<TensorRef>(cast->args[0].v).node).op, "aten.cat.default");  // the chunked rows
  ASSERT_NE(cast->kwarg("dtype"), nullptr);
  EXPECT_EQ(std::get<DType>(cast->kwarg("dtype")->v), DType::F32);
}

// Mixed precision all-gather: FSDP splits a fresh bf16 buffer into one piece per parameter and
// copies (casts) each f32 shard into its piece (_foreach_copy_); the copy-in reads the pieces.
const char* kCastIn =
    "shard: \"f32[4]\" = self._tensor_constant0\n"
    "empty: \"bf16[4]\" = torch.ops.aten.empty.memory_format([4], dtype = torch.bfloat16)\n"
    "pieces = torch.ops.aten.split_with_sizes.default(empty, [4])\n"
    "piece: \"bf16[4]\" = pieces[0]\n"
    "fc = torch.ops.aten._foreach_copy_.default([piece], [shard])\n"
    "empty_1: \"bf16[8]\" = torch.ops.aten.empty.memory_format([8], dtype = torch.bfloat16)\n"
    "copy_in = torch.ops.fsdp.all_gather_copy_in.default([piece], empty_1, [4], 4, 0)\n"
    "getitem: \"bf16[4]\" = copy_in[0]\n"
    "getitem_1: \"bf16[8]\" = copy_in[1]\n"
    "ag = torch.ops.c10d._allgather_base_.default(getitem_1, getitem, '0', False)\n"
    "getitem_2: \"bf16[8]\" = ag[0]\n"
    "w: \"bf16[3, 2]\" = torch.ops.aten.as_strided.default(getitem_2, [3, 2], [2, 1], 0)\n"
    "return (w,)";

TEST(Fsdp, ShardsCastIntoPiecesOfAFreshBuffer) {
  Graph g = lowered(kCastIn);
  g.verify();
  bool castShard = false;
  for (const Node& n : g.nodes)
    castShard |= n.op == "aten._to_copy.default" && n.type && n.type->dtype == DType::BF16 &&
                 g.node(std::get<TensorRef>(n.args[0].v).node).name == "shard";
  EXPECT_TRUE(castShard);
  // the piece read before the copy fills it is refused, and so is a read of the whole buffer
  expectError(replaced(kCastIn, "fc = torch.ops.aten._foreach_copy_.default([piece], [shard])\n", ""),
              "read before anything writes it");
  expectError(replaced(kCastIn, "[piece], empty_1", "[empty], empty_1"), "read before anything writes it");
  // an integer shard copied into a float piece is not an exact cast
  expectError(replaced(kCastIn, "shard: \"f32[4]\"", "shard: \"i64[4]\""), "only a conversion between float dtypes");
}

// A Shard(1) parameter w [2, 4] over 2 ranks (local [2, 2]): FSDP all-gathers into a temporary
// (empty_like of the buffer), then lays the ranks' chunks out along dim 1 with cat.out into the
// parameter's all-gather buffer; the gradient is chunked on dim 1 and stacked on dim 0 (functional).
const char* kShard1 =
    "shard: \"f32[2, 2]\" = self._tensor_constant0\n"
    "flat: \"f32[4]\" = torch.ops.aten.view.default(shard, [4])\n"
    "empty: \"f32[8]\" = torch.ops.aten.empty.memory_format([8], dtype = torch.float32)\n"
    "copy_in = torch.ops.fsdp.all_gather_copy_in.default([flat], empty, [4], 4, 0)\n"
    "getitem: \"f32[4]\" = copy_in[0]\n"
    "getitem_1: \"f32[8]\" = copy_in[1]\n"
    "ag = torch.ops.c10d._allgather_base_.default(getitem_1, getitem, '0', False)\n"
    "getitem_2: \"f32[8]\" = ag[0]\n"
    "view: \"f32[2, 4]\" = torch.ops.aten.view.default(getitem_2, [2, -1])\n"
    "buf: \"f32[8]\" = self._tensor_constant1\n"
    "tmp: \"f32[8]\" = torch.ops.aten.empty_like.default(buf, pin_memory = False)\n"
    "view_1: \"f32[2, 4]\" = torch.ops.aten.view.default(tmp, [2, -1])\n"
    "split = torch.ops.fsdp.split_with_sizes_copy.default(view, [4], 1, out = [view_1])\n"
    "view_2: \"f32[4, 2]\" = torch.ops.aten.view.default(tmp, [4, 2])\n"
    "chunks = torch.ops.aten.split.Tensor(view_2, 2)\n"
    "c0: \"f32[2, 2]\" = chunks[0]\n"
    "c1: \"f32[2, 2]\" = chunks[1]\n"
    "buf_1: \"f32[8]\" = self._tensor_constant1\n"
    "view_3: \"f32[2, 4]\" = torch.ops.aten.view.default(buf_1, [2, 4])\n"
    "cat = torch.ops.aten.cat.out([c0, c1], 1, out = view_3)\n"
    "buf_2: \"f32[8]\" = self._tensor_constant1\n"
    "w: \"f32[2, 4]\" = torch.ops.aten.as_strided.default(buf_2, [2, 4], [4, 1], 0)\n"
    "g: \"f32[2, 4]\" = torch.ops.aten.mul.Tensor(w, x)\n"
    "gs = torch.ops.aten.split.Tensor(g, 2, 1)\n"
    "g0: \"f32[2, 2]\" = gs[0]\n"
    "g1: \"f32[2, 2]\" = gs[1]\n"
    "stacked: \"f32[4, 2]\" = torch.ops.aten.cat.default([g0, g1])\n"
    "empty_1: \"f32[8]\" = torch.ops.aten.empty.memory_format([8], dtype = torch.float32)\n"
    "view_4: \"f32[2, 4]\" = torch.ops.aten.view.default(empty_1, [2, -1])\n"
    "cc = torch.ops.fsdp.chunk_cat.default([stacked], 0, 2, out = view_4)\n"
    "empty_2: \"f32[4]\" = torch.ops.aten.empty.memory_format([4], dtype = torch.float32)\n"
    "rs = torch.ops.c10d._reduce_scatter_base_.default(empty_2, empty_1, '0', 'avg', False)\n"
    "getitem_4: \"f32[4]\" = rs[0]\n"
    "grad: \"f32[2, 2]\" = torch.ops.aten.as_strided.default(getitem_4, [2, 2], [2, 1], 0)\n"
    "return (grad,)";

const char* kShard1Params = "x: \"f32[2, 4]\"";

TEST(Fsdp, Shard1CopyOutIsACatAlongDim1) {
  Graph g = lowered(kShard1, kShard1Params);
  g.verify();
  for (const Node& n : g.nodes) {
    EXPECT_NE(n.op, "aten.cat.out") << n.name;
    EXPECT_NE(n.op, "aten.empty_like.default") << n.name;  // a fresh empty: its operand is not read
  }
  // w reads the cat along dim 1 of the two all-gathered chunks (through a view of the buffer)
  NodeId w = std::get<TensorRef>(g.node(*g.find("g")).args[0].v).node;
  while (g.node(w).op == "aten.view.default" || g.node(w).op == "aten.slice.Tensor")
    w = std::get<TensorRef>(g.node(w).args[0].v).node;
  EXPECT_EQ(g.node(w).op, "aten.cat.default");
  EXPECT_EQ(std::get<int64_t>(g.node(w).args[1].v), 1);
}

void expectShard1Error(const std::string& body, const std::string& what) { expectError(body, what, kShard1Params); }

TEST(Fsdp, Shard1BadCopyOutsAreBadInput) {
  // the chunks laid out along dim 0 do not have the shape of the [2, 4] buffer view
  expectShard1Error(replaced(kShard1, "[c0, c1], 1, out", "[c0, c1], 0, out"), "out= is not one buffer");
  // the parameter's view made before the copy-out fills its buffer
  std::string stale = replaced(kShard1, "w: \"f32[2, 4]\" = torch.ops.aten.as_strided.default(buf_2, [2, 4], [4, 1], 0)\n", "");
  stale = replaced(stale, "cat = torch", "w: \"f32[2, 4]\" = torch.ops.aten.as_strided.default(buf_2, [2, 4], [4, 1], 0)\ncat = torch");
  stale = replaced(stale, "buf_2: \"f32[8]\" = self._tensor_constant1\n", "");
  stale = replaced(stale, "w: \"f32[2, 4]\" = torch.ops.aten.as_strided",
                   "buf_2: \"f32[8]\" = self._tensor_constant1\nw: \"f32[2, 4]\" = torch.ops.aten.as_strided");
  expectShard1Error(stale, "stale");
}

// A relation's `expect` names the returned gradient as the dump does: the node that replaces each
// as_strided view keeps its name (a view of the slice, or the slice itself when already flat).
TEST(Fsdp, ReturnedViewsKeepTheirNames) {
  Graph g = lowered(kStep);
  ASSERT_EQ(g.outputNodes().size(), 1u);
  EXPECT_EQ(g.node(g.outputNodes()[0]).name, "grad");
  EXPECT_EQ(opOf(g, "grad"), "aten.view.default");
  EXPECT_EQ(opOf(g, "w"), "aten.view.default");
  Graph flat = lowered(replaced(kStep, "grad: \"f32[2, 2]\" = torch.ops.aten.as_strided.default(getitem_4, [2, 2], [2, 1], 0)",
                                "grad: \"f32[4]\" = torch.ops.aten.as_strided.default(getitem_4, [4], [1], 0)"));
  EXPECT_EQ(opOf(flat, "grad"), "aten.slice.Tensor");
}

}  // namespace
}  // namespace tangle
