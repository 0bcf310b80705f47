#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "relation/relation.h"

namespace tangle {
namespace {

using Kind = RelExpr::Kind;

RelationFile parse(const std::string& text) { return parseRelationText(text, "rel/t.rel"); }

// The right side of a one-line relation `S.x = <expr>`.
RelExpr rhs(const std::string& expr) {
  RelationFile f = parse("S.x = " + expr + "\n");
  EXPECT_EQ(f.relations.size(), 1u);
  return f.relations.at(0).rhs;
}

bool sameTensor(const TensorName& a, const TensorName& b) {
  return a.side == b.side && a.rank == b.rank && a.allRanks == b.allRanks && a.name == b.name;
}

bool sameExpr(const RelExpr& a, const RelExpr& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Kind::Tensor: return sameTensor(a.tensor, b.tensor);
    case Kind::Int: return a.i == b.i;
    case Kind::Float: return a.f == b.f;
    case Kind::IntList: return a.ints == b.ints;
    case Kind::Call:
      if (a.op != b.op || a.args.size() != b.args.size() || a.kwargs.size() != b.kwargs.size())
        return false;
      for (size_t k = 0; k < a.args.size(); ++k)
        if (!sameExpr(a.args[k], b.args[k])) return false;
      for (size_t k = 0; k < a.kwargs.size(); ++k)
        if (a.kwargs[k].first != b.kwargs[k].first || !sameExpr(a.kwargs[k].second, b.kwargs[k].second))
          return false;
      return true;
  }
  return false;
}

TEST(RelationParse, TensorNames) {
  RelExpr s = rhs("S.mm_7");
  ASSERT_EQ(s.kind, Kind::Tensor);
  EXPECT_EQ(s.tensor.side, TensorName::Side::Spec);
  EXPECT_EQ(s.tensor.name, "mm_7");

  RelExpr d = rhs("D13.primals_4");
  EXPECT_EQ(d.tensor.side, TensorName::Side::Impl);
  EXPECT_EQ(d.tensor.rank, 13);
  EXPECT_FALSE(d.tensor.allRanks);
  EXPECT_EQ(d.tensor.toString(), "D13.primals_4");

  RelExpr star = rhs("D*.w");
  EXPECT_TRUE(star.tensor.allRanks);
  EXPECT_EQ(star.tensor.toString(), "D*.w");

  // HLO instruction names keep their dots and dashes.
  RelExpr hlo = rhs("D0.p0.1");
  EXPECT_EQ(hlo.tensor.name, "p0.1");
  EXPECT_EQ(rhs("D1.all-reduce.3").tensor.name, "all-reduce.3");
  EXPECT_EQ(parse("S.broadcast.77 = D0.broadcast.77").relations[0].lhs.name, "broadcast.77");
}

TEST(RelationParse, EveryStatementKind) {
  RelationFile f = parse(R"(# a relation file
spec ../graphs/spec.py
impl ../graphs/fw.g0.r{rank}.py ranks 2

S.x = concat(D0.x, D1.x, dim=0)
const S._tensor_constant0 = 0
const D*._tensor_constant0 = 0.5
input S.tangents_21, D*.tangents_21
output S.mm_7, S.div_2
expect S.div_2 = D*.div_2
group 12 = 0 1
group tp = 1, 0
option max_iterations = 30
option lemma_set = default extra
)");
  EXPECT_EQ(f.path, "rel/t.rel");
  EXPECT_EQ(f.specPath, "graphs/spec.py");
  EXPECT_EQ(f.implPattern, "graphs/fw.g0.r{rank}.py");
  EXPECT_EQ(f.implRanks, 2);

  ASSERT_EQ(f.relations.size(), 1u);
  EXPECT_EQ(f.relations[0].lhs.toString(), "S.x");
  EXPECT_EQ(f.relations[0].rhs.toString(), "concat(D0.x, D1.x, dim=0)");
  EXPECT_EQ(f.relations[0].loc.line, 5);
  EXPECT_EQ(f.relations[0].loc.file, "rel/t.rel");

  ASSERT_EQ(f.constants.size(), 2u);
  EXPECT_EQ(f.constants[0].tensor.toString(), "S._tensor_constant0");
  EXPECT_EQ(f.constants[0].value, 0.0);
  EXPECT_EQ(f.constants[1].tensor.toString(), "D*._tensor_constant0");
  EXPECT_EQ(f.constants[1].value, 0.5);
  EXPECT_EQ(f.constants[1].loc.line, 7);

  ASSERT_EQ(f.cutInputs.size(), 2u);
  EXPECT_EQ(f.cutInputs[1].toString(), "D*.tangents_21");
  ASSERT_EQ(f.cutInputLocs.size(), 2u);
  EXPECT_EQ(f.cutInputLocs[0].line, 8);
  ASSERT_EQ(f.outputs.size(), 2u);
  EXPECT_EQ(f.outputs[1].toString(), "S.div_2");
  EXPECT_EQ(f.outputLocs[1].line, 9);

  ASSERT_EQ(f.expectations.size(), 1u);
  EXPECT_EQ(f.expectations[0].lhs.toString(), "S.div_2");
  EXPECT_EQ(f.expectations[0].rhs.toString(), "D*.div_2");
  EXPECT_EQ(f.expectations[0].loc.line, 10);

  EXPECT_EQ(f.groups.at("12"), (std::vector<int>{0, 1}));
  EXPECT_EQ(f.groups.at("tp"), (std::vector<int>{1, 0}));
  EXPECT_EQ(f.groupLocs.at("tp").line, 12);

  EXPECT_EQ(f.options.at("max_iterations"), "30");
  EXPECT_EQ(f.options.at("lemma_set"), "default extra");
  ASSERT_EQ(f.optionLocs.size(), 2u);
  EXPECT_EQ(f.optionLocs.at("lemma_set").line, 14);
}

TEST(RelationParse, PathsResolveAgainstTheFileFolder) {
  EXPECT_EQ(parseRelationText("spec a/s.py", "x.rel").specPath, "a/s.py");
  EXPECT_EQ(parseRelationText("spec /abs/s.py", "d/x.rel").specPath, "/abs/s.py");
  EXPECT_EQ(parseRelationText("spec ./s.py", "/r/d/x.rel").specPath, "/r/d/s.py");
  RelationFile f = parseRelationText("impl tp2/graph.0.hlo", "/r/x.rel");
  EXPECT_EQ(f.implPattern, "/r/tp2/graph.0.hlo");
  EXPECT_EQ(f.implRanks, 0);
}

TEST(RelationParse, AllOps) {
  RelExpr c = rhs("concat(D0.a, D1.a, dim=1)");
  ASSERT_EQ(c.kind, Kind::Call);
  EXPECT_EQ(c.op, "concat");
  ASSERT_EQ(c.args.size(), 2u);
  ASSERT_NE(c.kwarg("dim"), nullptr);
  EXPECT_EQ(c.kwarg("dim")->i, 1);
  EXPECT_EQ(c.kwarg("step"), nullptr);

  RelExpr sl = rhs("slice(D0.y, dim=0, start=0, end=4)");
  EXPECT_EQ(sl.kwarg("end")->i, 4);
  EXPECT_EQ(rhs("slice(D0.y, dim=-1, start=2, end=8, step=2)").kwarg("dim")->i, -1);

  RelExpr t = rhs("transpose(D1.t, 0, 1)");
  ASSERT_EQ(t.args.size(), 3u);
  EXPECT_EQ(t.args[2].kind, Kind::Int);
  EXPECT_EQ(t.args[2].i, 1);

  RelExpr p = rhs("permute(D0.u, [1, 0, 2])");
  ASSERT_EQ(p.args[1].kind, Kind::IntList);
  EXPECT_EQ(p.args[1].ints, (std::vector<int64_t>{1, 0, 2}));

  RelExpr r = rhs("reshape(D0.v, [4, -1])");
  EXPECT_EQ(r.args[1].ints, (std::vector<int64_t>{4, -1}));

  EXPECT_EQ(rhs("shard(D*.a, dim=1)").op, "shard");
  EXPECT_EQ(rhs("sum(D*.p)").op, "sum");
  EXPECT_EQ(rhs("sum(D0.p, D1.p)").args.size(), 2u);
}

TEST(RelationParse, NestedExpressions) {
  RelExpr e = rhs("concat(shard(D*.q0, dim=0), transpose(slice(D0.k, dim=1, start=0, end=2), 0, 1), dim=0)");
  ASSERT_EQ(e.args.size(), 2u);
  EXPECT_EQ(e.args[0].op, "shard");
  EXPECT_EQ(e.args[1].op, "transpose");
  EXPECT_EQ(e.args[1].args[0].op, "slice");
  EXPECT_EQ(e.args[1].args[0].args[0].tensor.toString(), "D0.k");
}

TEST(RelationParse, CommentsBlankLinesAndWhitespace) {
  RelationFile f = parse("\n  # only a comment\n\n\tS.a=D0.a   # trailing comment\n   \nS.b = D1.b#x\n");
  ASSERT_EQ(f.relations.size(), 2u);
  EXPECT_EQ(f.relations[0].loc.line, 4);
  EXPECT_EQ(f.relations[1].loc.line, 6);
  EXPECT_EQ(f.relations[1].rhs.toString(), "D1.b");
  EXPECT_EQ(parse("").relations.size(), 0u);
  EXPECT_EQ(parse("S.c = D0.c\r\n").relations[0].rhs.toString(), "D0.c");  // CRLF
}

TEST(RelationParse, ContinuationLines) {
  RelationFile f = parse(
      "S.q = concat(   # q heads\n"
      "    D0.q,\n"
      "\n"
      "    D1.q,        # second rank\n"
      "    dim=0)\n"
      "S.u = permute(D0.u, [1,\n"
      "                     0])\n"
      "expect S.z = sum(\n"
      "  D*.z)\n");
  ASSERT_EQ(f.relations.size(), 2u);
  EXPECT_EQ(f.relations[0].rhs.toString(), "concat(D0.q, D1.q, dim=0)");
  EXPECT_EQ(f.relations[0].loc.line, 1);
  EXPECT_EQ(f.relations[0].rhs.args[1].loc.line, 4);  // tokens keep their physical line
  EXPECT_EQ(f.relations[1].loc.line, 6);
  EXPECT_EQ(f.relations[1].rhs.args[1].ints, (std::vector<int64_t>{1, 0}));
  ASSERT_EQ(f.expectations.size(), 1u);
  EXPECT_EQ(f.expectations[0].rhs.toString(), "sum(D*.z)");
}

TEST(RelationParse, NumbersInConstants) {
  RelationFile f = parse("const S.a = -2\nconst S.b = 1e-5\nconst S.c = -inf\nconst S.d = .25\n");
  ASSERT_EQ(f.constants.size(), 4u);
  EXPECT_EQ(f.constants[0].value, -2.0);
  EXPECT_EQ(f.constants[1].value, 1e-5);
  EXPECT_TRUE(std::isinf(f.constants[2].value) && f.constants[2].value < 0);
  EXPECT_EQ(f.constants[3].value, 0.25);
}

TEST(RelationParse, ToStringRoundTrips) {
  const char* exprs[] = {
      "S.x",
      "D*.w",
      "D3.p0.1",
      "concat(D0.x, D1.x, dim=0)",
      "shard(D*.a, dim=1)",
      "sum(D*.p)",
      "sum(D0.p, D1.p, D2.p)",
      "slice(D0.y, dim=0, start=0, end=4)",
      "slice(D0.y, dim=2, start=-4, end=9223372036854775807, step=3)",
      "transpose(D1.t, 0, 1)",
      "permute(D0.u, [1, 0, 2])",
      "reshape(D0.v, [4, 8])",
      "reshape(D0.v, [])",
      "concat(shard(D*.q0, dim=0), D0.k, dim=0)",
      "concat(concat(D0.q, D1.q, dim=0), sum(D*.k), reshape(transpose(D0.v, 1, 0), [2, -1]), dim=0)",
  };
  for (const char* text : exprs) {
    RelExpr e = rhs(text);
    EXPECT_EQ(e.toString(), text);
    EXPECT_TRUE(sameExpr(rhs(e.toString()), e)) << text;
  }
  // Non-canonical spelling prints canonically and reparses to the same tree.
  RelExpr messy = rhs("concat( D0.x ,D1.x,dim = 0 , )");
  EXPECT_EQ(messy.toString(), "concat(D0.x, D1.x, dim=0)");
}

TEST(RelationParse, FloatAndIntToString) {
  RelExpr f;
  f.kind = Kind::Float;
  f.f = 1.0;
  EXPECT_EQ(f.toString(), "1.0");
  f.f = 0.1;
  EXPECT_EQ(f.toString(), "0.1");
  f.f = -2.5e-7;
  EXPECT_EQ(f.toString(), "-2.5e-07");
  RelExpr i;
  i.kind = Kind::Int;
  i.i = -3;
  EXPECT_EQ(i.toString(), "-3");
  RelExpr l;
  l.kind = Kind::IntList;
  l.ints = {2, -1};
  EXPECT_EQ(l.toString(), "[2, -1]");
}

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tangle_rel_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    auto p = dir_ / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
  std::filesystem::path dir_;
};

TEST_F(TempDir, ParseFileAndImplPaths) {
  std::string path = write("cfg/model.rel",
                           "spec ../g/spec.py\nimpl ../g/fw.r{rank}.py ranks 2\nS.a = D*.a\n");
  RelationFile f = parseRelationFile(path);
  EXPECT_EQ(f.path, path);
  EXPECT_EQ(f.specPath, (dir_ / "g/spec.py").string());
  EXPECT_EQ(f.implPaths(),
            (std::vector<std::string>{(dir_ / "g/fw.r0.py").string(), (dir_ / "g/fw.r1.py").string()}));
  EXPECT_EQ(f.relations.at(0).loc.file, path);
}

TEST_F(TempDir, ImplPathsWithoutRankCount) {
  write("g/fw.r0.py", "");
  write("g/fw.r1.py", "");
  write("g/fw.r2.py", "");
  write("g/fw.r4.py", "");  // not reached: rank 3 is missing
  RelationFile f = parseRelationText("impl g/fw.r{rank}.py", (dir_ / "x.rel").string());
  EXPECT_EQ(f.implPaths().size(), 3u);
  EXPECT_EQ(f.implPaths()[2], (dir_ / "g/fw.r2.py").string());

  // One SPMD program for every rank.
  RelationFile spmd = parseRelationText("impl tp2/graph.0.hlo ranks 2", "/r/x.rel");
  EXPECT_EQ(spmd.implPaths(), (std::vector<std::string>{"/r/tp2/graph.0.hlo", "/r/tp2/graph.0.hlo"}));
  EXPECT_EQ(parseRelationText("impl tp2/graph.0.hlo", "/r/x.rel").implPaths().size(), 1u);
  EXPECT_TRUE(parseRelationText("S.a = D0.a", "/r/x.rel").implPaths().empty());
}

TEST(RelationParse, RealisticGptRelations) {
  // The gpt N=2 L=1 relations of the artifact README, as a user would write them.
  RelationFile f = parse(R"(
spec ../gpt/paral1_layer1/fw.g0.r0.py
impl ../gpt/paral2_layer1/fw.g0.r{rank}.py ranks 2
S.primals_1 = shard(D*.primals_1, dim=0)   # vocab-parallel embedding
S.primals_2 = D*.primals_2
S.primals_3 = D*.primals_3
S.primals_4 = shard(D*.primals_4, dim=0)
S.primals_6 = shard(D*.primals_6, dim=1)
S.empty = shard(D*.empty, dim=0)
const S._tensor_constant0 = 0
const D*._tensor_constant0 = 0
expect S.div_2 = D*.div_2
)");
  EXPECT_EQ(f.relations.size(), 6u);
  RelationFile e = f.expand(2);
  EXPECT_EQ(e.relations.size(), 8u);  // two replicated tensors give two relations each
  EXPECT_EQ(e.constants.size(), 3u);
  EXPECT_EQ(e.expectations.size(), 2u);
}

TEST(RelationParse, AssumeStatements) {
  RelationFile f = parse("assume S.s0 == 2*D*.s0\nassume D0.s1 >= 4\nassume S.s0 % 2 = 0\n");
  ASSERT_EQ(f.assumptions.size(), 3u);
  EXPECT_EQ(f.assumptions[0].lhs, "S.s0");
  EXPECT_EQ(f.assumptions[0].op, "==");
  EXPECT_EQ(f.assumptions[0].rhs, "2*D*.s0");
  EXPECT_EQ(f.assumptions[1].op, ">=");
  EXPECT_EQ(f.assumptions[2].op, "==");  // `=` reads as equality
  EXPECT_EQ(f.assumptions[2].loc.line, 3);
  RelationFile x = f.expand(2);
  ASSERT_EQ(x.assumptions.size(), 4u);  // the D* one per rank
  EXPECT_EQ(x.assumptions[0].rhs, "2*D0.s0");
  EXPECT_EQ(x.assumptions[1].rhs, "2*D1.s0");
  EXPECT_EQ(x.assumptions[2].lhs, "D0.s1");
  EXPECT_THROW(parse("assume S.s0\n"), InputError);
}

}  // namespace
}  // namespace tangle
