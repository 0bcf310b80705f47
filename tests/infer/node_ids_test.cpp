// The flat per-node records operator reuse compares (src/infer/node_ids.cpp):
// type and definition ids equal exactly when the data and the definitions
// (up to their operands) are, and user-operator hashes equal for the same
// multiset of users' operators.
#include "infer_support.h"

namespace tangle::testing {
namespace {

std::unique_ptr<Check> idsGraph() {
  std::string body =
      "a: \"f32[4, 8]\" = torch.ops.aten.mul.Tensor(x, 2.0)\n"
      "b: \"f32[4, 8]\" = torch.ops.aten.mul.Tensor(y, 2.0)\n"      // a's shape, other operand
      "c: \"f32[4, 8]\" = torch.ops.aten.mul.Tensor(x, 3.0)\n"      // another scalar
      "d: \"f32[4, 8]\" = torch.ops.aten.mul.Tensor(x, -0.0)\n"     // scalars compare bitwise
      "e: \"f32[4, 8]\" = torch.ops.aten.mul.Tensor(x, 0.0)\n"
      "f: \"f32[8, 4]\" = torch.ops.aten.permute.default(a, [1, 0])\n"
      "g: \"f32[8, 4]\" = torch.ops.aten.permute.default(b, [1, 0])\n"
      "h: \"f32[2, 16]\" = torch.ops.aten.view.default(a, [2, 16])\n"  // a's users: permute and view
      "i: \"f32[2, 16]\" = torch.ops.aten.view.default(b, [2, 16])\n"
      "j: \"f16[4, 8]\" = torch.ops.aten._to_copy.default(c, dtype=torch.float16)\n"
      "k: \"f32[8, 4]\" = torch.ops.aten.permute.default(c, [1, 0])\n"  // c's users: two permutes
      "l: \"f32[8, 4]\" = torch.ops.aten.permute.default(c, [1, 0])\n"
      "return (f, g, h, i, j, k, l, d, e)";
  std::string g = fx("x: \"f32[4, 8]\", y: \"f32[4, 8]\"", body);
  return makeCheck(g, g, 1, "S.x = D0.x\nS.y = D0.y\n");
}

TEST(NodeIds, TypeIdsAreEqualExactlyWhenTheTypesAre) {
  auto c = idsGraph();
  InferState st(c->problem(), lemmas::allLemmas(), {});
  auto id = [&](const char* n) { return st.implFlat[c->implId(n)].data; };
  EXPECT_EQ(id("D0.a"), id("D0.b"));
  EXPECT_EQ(id("D0.a"), id("D0.x"));
  EXPECT_EQ(id("D0.f"), id("D0.g"));
  EXPECT_NE(id("D0.a"), id("D0.f"));   // other shape
  EXPECT_NE(id("D0.a"), id("D0.j"));   // other dtype
  EXPECT_NE(id("D0.f"), id("D0.h"));
  for (size_t i = 0; i < c->implL->nodes.size(); ++i)
    for (size_t k = 0; k < c->implL->nodes.size(); ++k)
      EXPECT_EQ(st.implFlat.nodes[i].data == st.implFlat.nodes[k].data, c->implL->nodes[i].data == c->implL->nodes[k].data);
  auto sid = [&](const char* n) { return st.specDataId[static_cast<size_t>(c->specId(n))]; };
  EXPECT_EQ(sid("S.a"), sid("S.b"));
  EXPECT_NE(sid("S.a"), sid("S.j"));
}

TEST(NodeIds, DefinitionIdsIgnoreOnlyWhichTensorsTheOperandsAre) {
  auto c = idsGraph();
  InferState st(c->problem(), lemmas::allLemmas(), {});
  auto id = [&](const char* n) { return st.implFlat[c->implId(n)].def; };
  EXPECT_EQ(id("D0.a"), id("D0.b"));  // mul(_, 2.0) on x and on y
  EXPECT_EQ(id("D0.f"), id("D0.g"));
  EXPECT_NE(id("D0.a"), id("D0.c"));  // 2.0 against 3.0
  EXPECT_NE(id("D0.d"), id("D0.e"));  // -0.0 against 0.0
  EXPECT_NE(id("D0.f"), id("D0.h"));  // permute against view
  EXPECT_EQ(id("D0.x"), id("D0.y"));  // inputs: no definition
  EXPECT_NE(id("D0.x"), id("D0.a"));
  // The operand references, in order and alias-resolved.
  auto refs = st.implFlat.refsOf(c->implId("D0.b"));
  ASSERT_EQ(refs.size(), 1u);
  EXPECT_EQ(refs[0], c->implId("D0.y"));
  EXPECT_TRUE(st.implFlat.refsOf(c->implId("D0.x")).empty());
  // The users, as the lowered graph lists them.
  auto users = st.implFlat.usersOf(c->implId("D0.c"));
  EXPECT_EQ(std::vector<int>(users.begin(), users.end()), c->implL->users[static_cast<size_t>(c->implId("D0.c"))]);
  EXPECT_EQ(users.size(), 3u);
}

TEST(NodeIds, UserOperatorHashesCompareTheMultisetOfUsersOperators) {
  auto c = idsGraph();
  InferState st(c->problem(), lemmas::allLemmas(), {});
  auto users = [&](const char* n) { return st.implFlat.userOps[static_cast<size_t>(c->implId(n))]; };
  EXPECT_EQ(users("D0.a"), users("D0.b"));  // {permute[1, 0], view[2, 16]} each
  EXPECT_NE(users("D0.a"), users("D0.c"));  // {cast, permute, permute}
  EXPECT_NE(users("D0.f"), users("D0.a"));  // none
  EXPECT_EQ(users("D0.f"), users("D0.g"));
}

}  // namespace
}  // namespace tangle::testing
