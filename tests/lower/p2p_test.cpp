// Point-to-point pairing (src/lower/p2p.cpp) and in-place functionalization
// (src/lower/inplace.cpp) on hand-written make_fx-style rank graphs.
#include "../fx_text.h"
#include "lower/inplace.h"
#include "lower/lower.h"
#include "lower/storage.h"

#include <gtest/gtest.h>

#include "import/fx_importer.h"
#include "ops/ops.h"

namespace tangle {
namespace {

Graph rank(const std::string& body, const std::string& file) {
  Graph g = importFxText(testing::fxModuleText("x: \"f32[4, 2]\", w: \"f32[2, 2]\"", body), file);
  functionalizeInplace(g);
  return g;
}

std::string resolved(const LGraph& lg, const std::string& name) {
  auto id = lg.find(name);
  EXPECT_TRUE(id.has_value()) << name;
  return id ? lg.node(lg.resolve(*id)).name : "?";
}

// Stage 0 sends mm to rank 1 twice (two microbatches); rank 1 receives into
// its two buffers; every later read of a buffer is the matching sent tensor.
const char* kSender =
    "a: \"f32[4, 2]\" = torch.ops.aten.mm.default(x, w)\n"
    "b: \"f32[4, 2]\" = torch.ops.aten.add.Tensor(a, x)\n"
    "pg = self._torchbind_obj0\n"
    "s0 = torch.ops.c10d.send.default([a], pg, 1, 0)\n"
    "s1 = torch.ops.c10d.send.default([b], pg, 1, 0)\n"
    "return (b,)";
const char* kReceiver =
    "c0: \"f32[4, 2]\" = self._tensor_constant0\n"
    "pg = self._torchbind_obj0\n"
    "r0 = torch.ops.c10d.recv_.default([c0], pg, 0, 0)\n"
    "c1: \"f32[4, 2]\" = self._tensor_constant1\n"
    "r1 = torch.ops.c10d.recv_.default([c1], pg, 0, 0)\n"
    "u0: \"f32[4, 2]\" = self._tensor_constant0\n"
    "u1: \"f32[4, 2]\" = self._tensor_constant1\n"
    "y: \"f32[4, 2]\" = torch.ops.aten.mul.Tensor(u0, u1)\n"
    "return (y,)";

TEST(PointToPoint, ReceivedBuffersAreTheSentTensors) {
  std::vector<Graph> g{rank(kSender, "r0.py"), rank(kReceiver, "r1.py")};
  sym::Context symbols;
  LGraph lg = lowerImpl(g, {}, symbols);
  EXPECT_EQ(resolved(lg, "D1.u0"), "D0.a");
  EXPECT_EQ(resolved(lg, "D1.u1"), "D0.b");
}

TEST(PointToPoint, WrongPeerOrCountOrShapeIsBadInput) {
  sym::Context symbols;
  // rank 0 sends to rank 2, which does not exist
  std::string toTwo = kSender;
  toTwo.replace(toTwo.find("pg, 1, 0)"), 9, "pg, 2, 0)");
  std::vector<Graph> g1{rank(toTwo, "r0.py"), rank(kReceiver, "r1.py")};
  EXPECT_THROW(lowerImpl(g1, {}, symbols), InputError);
  // one send missing: the second receive has no partner (the program would hang)
  std::string once = kSender;
  once.replace(once.find("s1 = "), once.find("return") - once.find("s1 = "), "");
  std::vector<Graph> g2{rank(once, "r0.py"), rank(kReceiver, "r1.py")};
  try {
    lowerImpl(g2, {}, symbols);
    ADD_FAILURE() << "an unmatched receive was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no partner"), std::string::npos) << e.what();
  }
  // another shape on the two sides
  std::string wide = kReceiver;
  wide.replace(wide.find("c1: \"f32[4, 2]\""), 15, "c1: \"f32[2, 4]\"");
  wide.replace(wide.find("u1: \"f32[4, 2]\""), 15, "u1: \"f32[2, 4]\"");
  std::vector<Graph> g3{rank(kSender, "r0.py"), rank(wide, "r1.py")};
  EXPECT_THROW(lowerImpl(g3, {}, symbols), InputError);
}

TEST(Inplace, AccumulationBecomesASumAndStaleReadsAreRefused) {
  Graph ok = rank(
      "a: \"f32[4, 2]\" = torch.ops.aten.mm.default(x, w)\n"
      "d: \"f32[4, 2]\" = torch.ops.aten.detach.default(a)\n"
      "b: \"f32[4, 2]\" = torch.ops.aten.add_.Tensor(d, x)\n"
      "c: \"f32[4, 2]\" = torch.ops.aten.div_.Tensor(b, 2)\n"
      "return (c,)",
      "ok.py");
  EXPECT_EQ(ok.node(*ok.find("b")).op, "tangle.accumulate.default");
  EXPECT_EQ(ok.node(*ok.find("c")).op, "aten.div.Tensor");
  // `a` is read after add_ overwrote its storage (d is a view of it)
  std::string stale =
      "a: \"f32[4, 2]\" = torch.ops.aten.mm.default(x, w)\n"
      "d: \"f32[4, 2]\" = torch.ops.aten.detach.default(a)\n"
      "b: \"f32[4, 2]\" = torch.ops.aten.add_.Tensor(d, x)\n"
      "e: \"f32[4, 2]\" = torch.ops.aten.mul.Tensor(a, x)\n"
      "return (e,)";
  try {
    rank(stale, "stale.py");
    ADD_FAILURE() << "a read of overwritten data was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("overwrote"), std::string::npos) << e.what();
  }
  // a buffer read before the receive into it, and used after: refused too
  std::string early =
      "c0: \"f32[4, 2]\" = self._tensor_constant0\n"
      "pg = self._torchbind_obj0\n"
      "r0 = torch.ops.c10d.recv_.default([c0], pg, 0, 0)\n"
      "y: \"f32[4, 2]\" = torch.ops.aten.mul.Tensor(c0, x)\n"
      "return (y,)";
  EXPECT_THROW(rank(early, "early.py"), InputError);
  // arithmetic into an attribute (through a view of it): refused, naming it
  std::string attr =
      "p: \"f32[4, 2]\" = self.layer.weight\n"
      "v: \"f32[4, 2]\" = torch.ops.aten.detach.default(p)\n"
      "b: \"f32[4, 2]\" = torch.ops.aten.mul_.Tensor(v, x)\n"
      "return (b,)";
  try {
    rank(attr, "attr.py");
    ADD_FAILURE() << "a write into an attribute was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("self.layer.weight"), std::string::npos) << e.what();
  }
}

TEST(Inplace, TheFunctionalizedOpsAreTheArithmeticAndCopyOfATen) {
  for (const char* op : {"aten.add_.Tensor", "aten.add_", "aten.sub_.Tensor", "aten.mul_.Tensor", "aten.div_.Tensor",
                         "aten.copy_.default", "aten.copy_"})
    EXPECT_TRUE(isFunctionalizedInplace(op)) << op;
  for (const char* op : {"aten.add.Tensor", "aten.add_.out", "aten.add_.Tensor.default", "aten.addmm_.default",
                         "aten.copy", "aten._copy_.default", "c10d.recv_.default", "aten.add"})
    EXPECT_FALSE(isFunctionalizedInplace(op)) << op;
}

}  // namespace
}  // namespace tangle
