// Closed constant tensors related by exact evaluation (src/infer/closed.h,
// by_evaluation.cpp): equal masks built differently are related, a mask off
// by one is not, a tensor reading an input is not closed, and an operator
// that may round is refused.
#include "infer/closed.h"

#include "infer_support.h"

namespace tangle::testing {
namespace {

const std::string kScalars =
    "zero: \"f32[]\" = torch.ops.aten.scalar_tensor.default(0.0, dtype = torch.float32)\n"
    "low: \"f32[]\" = torch.ops.aten.scalar_tensor.default(-3.4028234663852886e+38, dtype = torch.float32)\n";
const std::string kArange = "pos: \"i64[5]\" = torch.ops.aten.arange.default(5, device = device(type='cpu'), pin_memory = False)\n";

// vLLM's stand-in attention: where(kv <= q, 0, min) from one arange; `cmp` le (right) or lt (off by one).
std::string twoAranges(const std::string& cmp) {
  return fx("s: \"f32[5, 5]\"",
            kArange +
                "kv: \"i64[1, 5]\" = torch.ops.aten.unsqueeze.default(pos, 0)\n"
                "q: \"i64[5, 1]\" = torch.ops.aten.unsqueeze.default(pos, 1)\n"
                "c: \"b8[5, 5]\" = torch.ops.aten." + cmp + ".Tensor(kv, q)\n" + kScalars +
                "where: \"f32[5, 5]\" = torch.ops.aten.where.self(c, zero, low)\n"
                "add: \"f32[5, 5]\" = torch.ops.aten.add.Tensor(s, where)\nreturn (add,)");
}

// The same mask built otherwise: q - kv >= 0 with integer arithmetic, [1, 5, 5].
std::string differenceMask() {
  return fx("s: \"f32[1, 5, 5]\"",
            kArange +
                "shift: \"i64[5]\" = torch.ops.aten.add.Tensor(pos, 3)\n"
                "q: \"i64[5, 1]\" = torch.ops.aten.unsqueeze.default(shift, 1)\n"
                "kv: \"i64[1, 5]\" = torch.ops.aten.unsqueeze.default(pos, 0)\n"
                "d: \"i64[5, 5]\" = torch.ops.aten.sub.Tensor(q, kv)\n"
                "c: \"b8[5, 5]\" = torch.ops.aten.ge.Scalar(d, 3)\n"
                "c3: \"b8[1, 5, 5]\" = torch.ops.aten.unsqueeze.default(c, 0)\n" + kScalars +
                "where: \"f32[1, 5, 5]\" = torch.ops.aten.where.self(c3, zero, low)\n"
                "add: \"f32[1, 5, 5]\" = torch.ops.aten.add.Tensor(s, where)\nreturn (add,)");
}

const char* kRelation = "S.s = reshape(D0.s, [1, 5, 5])\n";

std::vector<std::string> evaluated(const InferResult& r) {
  std::vector<std::string> out;
  for (const auto& e : r.evaluated) out.push_back(e.spec + " = " + formatTerm(e.expr));
  return out;
}

TEST(ClosedTensors, EqualMasksBuiltDifferentlyAreRelatedByEvaluation) {
  auto c = makeCheck(differenceMask(), twoAranges("le"), 1, kRelation);
  const InferResult& res = c->infer();
  EXPECT_EQ(res.verdict, Verdict::Refines) << ::testing::PrintToString(res.notEvaluated);
  EXPECT_EQ(evaluated(res), std::vector<std::string>{"S.where = reshape(D0.where, [1, 5, 5])"});
  ASSERT_EQ(res.evaluated.size(), 1u);
  EXPECT_EQ(res.evaluated[0].elements, 25);
  EXPECT_EQ(res.evaluated[0].type, "f32[1, 5, 5]");
  // the mask's own arithmetic is never searched: only the add is
  EXPECT_EQ(res.stats.opsProcessed, 1u);
}

TEST(ClosedTensors, AMaskOffByOneIsNotRelated) {
  auto c = makeCheck(differenceMask(), twoAranges("lt"), 1, kRelation);
  const InferResult& res = c->infer();
  EXPECT_TRUE(res.evaluated.empty()) << ::testing::PrintToString(evaluated(res));
  ASSERT_EQ(res.notEvaluated.size(), 1u);
  EXPECT_NE(res.notEvaluated[0].find("S.where: no implementation tensor"), std::string::npos) << res.notEvaluated[0];
  EXPECT_NE(res.verdict, Verdict::Refines);
}

TEST(ClosedTensors, ATensorReadingAnInputIsNotClosed) {
  auto c = makeCheck(differenceMask(), twoAranges("le"), 1, kRelation);
  closed::ClosedTensors spec(*c->specL, {});
  EXPECT_TRUE(spec.closed(c->specId("S.where")));
  EXPECT_TRUE(spec.closed(c->specId("S.d")));
  EXPECT_FALSE(spec.closed(c->specId("S.s")));
  EXPECT_FALSE(spec.closed(c->specId("S.add")));
  EXPECT_EQ(spec.value(c->specId("S.add")), nullptr);
  const interp::Tensor* d = spec.value(c->specId("S.d"));
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->data[0], 3);   // q 3 - kv 0
  EXPECT_EQ(d->data[4], -1);  // q 3 - kv 4
}

TEST(ClosedTensors, AnOperatorThatMayRoundIsRefused) {
  auto c = makeCheck(
      fx("s: \"f32[5]\"", kArange +
                              "f: \"f32[5]\" = torch.ops.aten._to_copy.default(pos, dtype = torch.float32)\n"
                              "tenth: \"f32[5]\" = torch.ops.aten.mul.Tensor(f, 0.1)\n"
                              "add: \"f32[5]\" = torch.ops.aten.add.Tensor(s, tenth)\nreturn (add,)"),
      std::vector<std::string>{fx("s: \"f32[5]\"", "return (s,)")}, "S.s = D0.s\n");
  closed::ClosedTensors spec(*c->specL, {});
  ASSERT_TRUE(spec.closed(c->specId("S.tenth")));
  EXPECT_EQ(spec.value(c->specId("S.tenth")), nullptr);
  EXPECT_NE(spec.refusal(c->specId("S.tenth")).find("may round"), std::string::npos) << spec.refusal(c->specId("S.tenth"));
  const interp::Tensor* f = spec.value(c->specId("S.f"));  // an exact cast: integers 0..4 in f32
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->data[4], 4);
}

TEST(ClosedTensors, TheElementCapRefuses) {
  auto c = makeCheck(differenceMask(), twoAranges("le"), 1, kRelation);
  closed::ClosedTensors spec(*c->specL, {}, 16);
  EXPECT_EQ(spec.value(c->specId("S.where")), nullptr);
  EXPECT_NE(spec.refusal(c->specId("S.where")).find("over the cap of 16"), std::string::npos)
      << spec.refusal(c->specId("S.where"));
}

TEST(ClosedTensors, RepresentableValuesPerDtype) {
  EXPECT_TRUE(closed::representable(-3.4028234663852886e+38, DType::F32));
  EXPECT_FALSE(closed::representable(0.1, DType::F32));
  EXPECT_TRUE(closed::representable(16777216, DType::F32));
  EXPECT_FALSE(closed::representable(16777217, DType::F32));
  EXPECT_TRUE(closed::representable(2049 - 1, DType::F16));
  EXPECT_FALSE(closed::representable(2049, DType::F16));
  EXPECT_FALSE(closed::representable(257, DType::BF16));
  EXPECT_FALSE(closed::representable(2, DType::Bool));
  EXPECT_FALSE(closed::representable(128, DType::I8));
  EXPECT_FALSE(closed::representable(0.5, DType::I64));
}

}  // namespace
}  // namespace tangle::testing
