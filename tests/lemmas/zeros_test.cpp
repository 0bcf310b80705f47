// Splats of one constant in different dtypes (src/lemmas/zeros.cpp,
// ops::addSplat): zeros in f16 and zeros in f32 are different tensors, so the
// lemmas that build a splat must build it in the matched class's dtype. A
// splat built over the bare, dtype-less constant was one class for every
// dtype: the f16 zeros and the f32 zeros of one shape merged through it (a
// type conflict, and the check inconclusive: FSDP2's float16 step with empty
// shards).
#include "lemma_fixture.h"

namespace tangle::lemmas::testing {
namespace {

using ZeroSplats = LemmaTest;

struct DtypePair {
  DType a, b;
};
const DtypePair kPairs[] = {{DType::F16, DType::F32}, {DType::BF16, DType::F32}, {DType::F16, DType::BF16},
                            {DType::I64, DType::F32}, {DType::I32, DType::I64}};

std::string typed(DType dt, const std::string& inner) {
  return std::string("(cast[\"") + dtypeName(dt) + "\"] " + inner + ")";
}

TEST_F(ZeroSplats, ARearrangedSplatKeepsItsDtype) {
  // x (dtype a) and y (dtype b) are splats of v; their reshapes get the
  // canonical splat of their own dtype (splat-reshape), never one shared class.
  for (double v : {0.0, 1.0}) {
    for (const DtypePair& p : kPairs) {
      SCOPED_TRACE(std::string(dtypeName(p.a)) + " vs " + dtypeName(p.b) + ", value " + std::to_string(v));
      g = eg::EGraph{ops::inferData, &symbols};
      vars = {};
      eg::Id x = leaf("x", {8}, p.a), y = leaf("y", {8}, p.b);
      constant("v", v);
      g.merge(x, term("(expand[[8]] " + typed(p.a, "?v") + ")"));
      g.merge(y, term("(expand[[8]] " + typed(p.b, "?v") + ")"));
      g.rebuild();
      eg::Id rx = term("(reshape[[2, 4]] ?x)"), ry = term("(reshape[[2, 4]] ?y)");
      auto r = run({"splat-reshape"});
      EXPECT_EQ(r.firings["splat-reshape"], 2u);
      EXPECT_NE(g.find(rx), g.find(ry));
      EXPECT_EQ(type(rx)->dtype, p.a);
      EXPECT_EQ(type(ry)->dtype, p.b);
      EXPECT_TRUE(equiv(rx, "(expand[[2, 4]] " + typed(p.a, "?v") + ")"));
      EXPECT_TRUE(equiv(ry, "(expand[[2, 4]] " + typed(p.b, "?v") + ")"));
    }
  }
}

TEST_F(ZeroSplats, AProductOfZerosIsZerosOfTheProductsDtype) {
  // mm-zeros: one product in f16 and one in f32 of one shape, each with a zero operand.
  leaf("a16", {4, 8}, DType::F16);
  leaf("a32", {4, 8}, DType::F32);
  eg::Id z16 = leaf("z16", {8, 2}, DType::F16), z32 = leaf("z32", {8, 2}, DType::F32);
  constant("zero", 0);
  g.merge(z16, term("(expand[[8, 2]] " + typed(DType::F16, "?zero") + ")"));
  g.merge(z32, term("(expand[[8, 2]] " + typed(DType::F32, "?zero") + ")"));
  g.rebuild();
  eg::Id p16 = term("(mm ?a16 ?z16)"), p32 = term("(mm ?a32 ?z32)");
  auto r = run({"mm-zeros"});
  EXPECT_EQ(r.firings["mm-zeros"], 2u);
  EXPECT_NE(g.find(p16), g.find(p32));
  EXPECT_EQ(type(p16)->dtype, DType::F16);
  EXPECT_EQ(type(p32)->dtype, DType::F32);
  EXPECT_TRUE(g.data(p16).constant == 0.0 && g.data(p32).constant == 0.0);
}

TEST_F(ZeroSplats, DisjointPiecesFillTheGapWithZerosOfTheirDtype) {
  // add-disjoint-pieces: [x16; 0] + [0; 0] in f16 and the same in f32 leave a
  // run of zeros each: of its own dtype.
  for (DType dt : {DType::F16, DType::F32}) {
    std::string s = dtypeName(dt);
    leaf("x" + s, {2, 4}, dt);
    leaf("z" + s, {2, 4}, dt);
    leaf("w" + s, {2, 4}, dt);
  }
  constant("zero", 0);
  for (DType dt : {DType::F16, DType::F32}) {
    std::string s = dtypeName(dt);
    g.merge(vars.classes["z" + s], term("(expand[[2, 4]] " + typed(dt, "?zero") + ")"));
    g.merge(vars.classes["w" + s], term("(expand[[2, 4]] " + typed(dt, "?zero") + ")"));
  }
  g.rebuild();
  eg::Id s16 = term("(add (concat[0] ?xf16 ?zf16 ?wf16) (concat[0] ?zf16 ?wf16 ?zf16))");
  eg::Id s32 = term("(add (concat[0] ?xf32 ?zf32 ?wf32) (concat[0] ?zf32 ?wf32 ?zf32))");
  auto r = run({"add-disjoint-pieces"});
  EXPECT_EQ(r.firings["add-disjoint-pieces"], 2u);
  EXPECT_NE(g.find(s16), g.find(s32));
  EXPECT_TRUE(equiv(s16, "(concat[0] ?xf16 (expand[[4, 4]] " + typed(DType::F16, "?zero") + "))"));
  EXPECT_TRUE(equiv(s32, "(concat[0] ?xf32 (expand[[4, 4]] " + typed(DType::F32, "?zero") + "))"));
}

TEST_F(ZeroSplats, ASplatCutAlongABlockSplitKeepsItsDtype) {
  // concat-interchange cuts a splat among the blocks like its neighbours
  // (splatPieces): pieces of the splat's own dtype.
  for (DType dt : {DType::F16, DType::F32}) {
    std::string s = dtypeName(dt);
    leaf("a" + s, {2, 2}, dt);
    leaf("b" + s, {2, 2}, dt);
    leaf("z" + s, {2, 4}, dt);
  }
  constant("zero", 0);
  for (DType dt : {DType::F16, DType::F32})
    g.merge(vars.classes[std::string("z") + dtypeName(dt)],
            term("(expand[[2, 4]] " + typed(dt, "?zero") + ")"));
  g.rebuild();
  eg::Id c16 = term("(concat[0] (concat[1] ?af16 ?bf16) ?zf16)");
  eg::Id c32 = term("(concat[0] (concat[1] ?af32 ?bf32) ?zf32)");
  auto r = run({"concat-interchange"});
  EXPECT_GE(r.firings["concat-interchange"], 2u);
  EXPECT_NE(g.find(c16), g.find(c32));
  EXPECT_EQ(type(c16)->dtype, DType::F16);
  EXPECT_TRUE(equiv(c16, "(concat[1] (concat[0] ?af16 (expand[[2, 2]] " + typed(DType::F16, "?zero") +
                             ")) (concat[0] ?bf16 (expand[[2, 2]] " + typed(DType::F16, "?zero") + ")))"));
}

}  // namespace
}  // namespace tangle::lemmas::testing
