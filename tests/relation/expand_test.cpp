#include <gtest/gtest.h>

#include "relation/relation.h"

namespace tangle {
namespace {

RelationFile expanded(const std::string& text, int n) {
  return parseRelationText(text, "m.rel").expand(n);
}

std::vector<std::string> relationStrings(const RelationFile& f) {
  std::vector<std::string> out;
  for (const auto& r : f.relations) out.push_back(r.lhs.toString() + " = " + r.rhs.toString());
  return out;
}

using Strings = std::vector<std::string>;

TEST(RelationExpand, ReplicateRepeatsPerRank) {
  EXPECT_EQ(relationStrings(expanded("S.w = D*.w", 1)), (Strings{"S.w = D0.w"}));
  EXPECT_EQ(relationStrings(expanded("S.w = D*.w", 2)), (Strings{"S.w = D0.w", "S.w = D1.w"}));
  EXPECT_EQ(relationStrings(expanded("S.w = D*.w", 4)),
            (Strings{"S.w = D0.w", "S.w = D1.w", "S.w = D2.w", "S.w = D3.w"}));
}

TEST(RelationExpand, ShardBecomesConcat) {
  EXPECT_EQ(relationStrings(expanded("S.a = shard(D*.a, dim=1)", 1)),
            (Strings{"S.a = concat(D0.a, dim=1)"}));
  EXPECT_EQ(relationStrings(expanded("S.a = shard(D*.a, dim=1)", 2)),
            (Strings{"S.a = concat(D0.a, D1.a, dim=1)"}));
  EXPECT_EQ(relationStrings(expanded("S.a = shard(D*.a, dim=0)", 4)),
            (Strings{"S.a = concat(D0.a, D1.a, D2.a, D3.a, dim=0)"}));
  // The sharded expression may be more than a bare tensor.
  EXPECT_EQ(relationStrings(expanded("S.a = shard(transpose(D*.a, 0, 1), dim=0)", 2)),
            (Strings{"S.a = concat(transpose(D0.a, 0, 1), transpose(D1.a, 0, 1), dim=0)"}));
}

TEST(RelationExpand, SumOverRanks) {
  EXPECT_EQ(relationStrings(expanded("S.p = sum(D*.p)", 1)), (Strings{"S.p = sum(D0.p)"}));
  EXPECT_EQ(relationStrings(expanded("S.p = sum(D*.p)", 4)),
            (Strings{"S.p = sum(D0.p, D1.p, D2.p, D3.p)"}));
  EXPECT_EQ(relationStrings(expanded("S.p = sum(D0.p, D1.q)", 2)), (Strings{"S.p = sum(D0.p, D1.q)"}));
}

TEST(RelationExpand, NestedAndMixed) {
  EXPECT_EQ(relationStrings(expanded("S.q = concat(shard(D*.q0, dim=0), D0.k, dim=0)", 2)),
            (Strings{"S.q = concat(concat(D0.q0, D1.q0, dim=0), D0.k, dim=0)"}));
  // Explicit ranks pass through unchanged.
  EXPECT_EQ(relationStrings(expanded("S.y = slice(D1.y, dim=0, start=0, end=4)", 2)),
            (Strings{"S.y = slice(D1.y, dim=0, start=0, end=4)"}));
}

TEST(RelationExpand, KeepsSourceLocations) {
  RelationFile f = expanded("\n\nS.w = D*.w\nS.a = shard(D*.a,\n  dim=0)\n", 2);
  ASSERT_EQ(f.relations.size(), 3u);
  EXPECT_EQ(f.relations[0].loc.line, 3);
  EXPECT_EQ(f.relations[1].loc.line, 3);
  EXPECT_EQ(f.relations[0].rhs.loc.line, 3);
  EXPECT_EQ(f.relations[2].loc.line, 4);
  EXPECT_EQ(f.relations[2].rhs.args[1].loc.line, 4);
  EXPECT_EQ(f.relations[2].loc.file, "m.rel");
}

TEST(RelationExpand, ExpectationsConstantsInputs) {
  RelationFile f = expanded(
      "expect S.div_2 = D*.div_2\n"
      "expect S.s = sum(D*.s)\n"
      "const S.c = 0\nconst D*.c = 0.5\nconst D1.k = 2\n"
      "input S.t, D*.t\n"
      "output S.o\n"
      "group g = 0 1\n"
      "option x = 1\n",
      2);
  ASSERT_EQ(f.expectations.size(), 3u);
  EXPECT_EQ(f.expectations[0].rhs.toString(), "D0.div_2");
  EXPECT_EQ(f.expectations[1].rhs.toString(), "D1.div_2");
  EXPECT_EQ(f.expectations[1].lhs.toString(), "S.div_2");
  EXPECT_EQ(f.expectations[2].rhs.toString(), "sum(D0.s, D1.s)");
  EXPECT_EQ(f.expectations[1].loc.line, 1);

  ASSERT_EQ(f.constants.size(), 4u);
  EXPECT_EQ(f.constants[1].tensor.toString(), "D0.c");
  EXPECT_EQ(f.constants[2].tensor.toString(), "D1.c");
  EXPECT_EQ(f.constants[2].value, 0.5);
  EXPECT_EQ(f.constants[3].tensor.toString(), "D1.k");

  ASSERT_EQ(f.cutInputs.size(), 3u);
  EXPECT_EQ(f.cutInputs[0].toString(), "S.t");
  EXPECT_EQ(f.cutInputs[2].toString(), "D1.t");
  ASSERT_EQ(f.cutInputLocs.size(), 3u);
  EXPECT_EQ(f.cutInputLocs[2].line, 6);

  EXPECT_EQ(f.outputs.size(), 1u);
  EXPECT_EQ(f.groups.at("g"), (std::vector<int>{0, 1}));
  EXPECT_EQ(f.options.at("x"), "1");
}

TEST(RelationExpand, PerRankExpectationBindsBothSides) {
  RelationFile f = expanded("expect D*.a = concat(D*.b, D*.c, dim=0)", 2);
  ASSERT_EQ(f.expectations.size(), 2u);
  EXPECT_EQ(f.expectations[1].lhs.toString(), "D1.a");
  EXPECT_EQ(f.expectations[1].rhs.toString(), "concat(D1.b, D1.c, dim=0)");
}

TEST(RelationExpand, NoWildcardLeftAfterExpansion) {
  RelationFile f = expanded(
      "S.a = D*.a\nS.b = shard(D*.b, dim=0)\nS.c = sum(D*.c)\nexpect S.d = D*.d\n"
      "const D*.e = 0\ninput D*.f\n",
      4);
  for (const auto& r : f.relations) EXPECT_EQ(r.rhs.toString().find('*'), std::string::npos);
  for (const auto& x : f.expectations) EXPECT_EQ(x.rhs.toString().find('*'), std::string::npos);
  for (const auto& c : f.constants) EXPECT_FALSE(c.tensor.allRanks);
  for (const auto& t : f.cutInputs) EXPECT_FALSE(t.allRanks);
  EXPECT_EQ(f.relations.size(), 6u);
}

}  // namespace
}  // namespace tangle
