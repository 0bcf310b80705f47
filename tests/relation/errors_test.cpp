#include <gtest/gtest.h>

#include "relation/relation.h"

namespace tangle {
namespace {

// The InputError message for `text` (parsed, then expanded when nranks > 0).
std::string errorOf(const std::string& text, int nranks = 0) {
  try {
    RelationFile f = parseRelationText(text, "dir/m.rel");
    if (nranks > 0) f.expand(nranks);
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError for:\n" << text;
  return "";
}

// Asserts the message starts with file:line and contains `needle`.
void expectError(const std::string& text, int line, const std::string& needle, int nranks = 0) {
  std::string msg = errorOf(text, nranks);
  std::string where = "dir/m.rel:" + std::to_string(line) + ": error: ";
  EXPECT_EQ(msg.rfind(where, 0), 0u) << "message: " << msg << "\nwanted prefix: " << where;
  EXPECT_NE(msg.find(needle), std::string::npos) << "message: " << msg << "\nwanted: " << needle;
}

// Found by fuzz/relation_fuzz.cpp: deep nesting overflowed the stack.
TEST(RelationErrors, NestingIsBounded) {
  std::string deep = "S.x = ";
  for (int i = 0; i < 100000; ++i) deep += "concat(";
  deep += "D0.x";
  for (int i = 0; i < 100000; ++i) deep += ", dim=0)";
  expectError("\n" + deep + "\n", 2, "expression nested more than 100 levels deep");
}

TEST(RelationErrors, UnknownStatement) {
  expectError("S.a = D0.a\nfrobnicate S.a\n", 2, "unknown statement 'frobnicate'");
  expectError("(S.a)\n", 1, "unknown statement starting with '('");
}

TEST(RelationErrors, BadTensorName) {
  expectError("S.a = X.a\n", 1, "bad tensor name 'X.a'");
  expectError("S.a = D.a\n", 1, "bad tensor name 'D.a'");
  expectError("S.a = Dx.a\n", 1, "bad tensor name 'Dx.a'");
  expectError("S.a = S.\n", 1, "bad tensor name 'S.'");
  expectError("S.a = D0.a$b\n", 1, "bad tensor name 'D0.a$b'");
  expectError("S.a = concat(D0.a, foo, dim=0)\n", 1, "bad tensor name 'foo'");
  expectError("\ninput S.a, Q.b\n", 2, "bad tensor name 'Q.b'");
  expectError("const x = 0\n", 1, "bad tensor name 'x'");
  expectError("S.a = 1.2.3\n", 1, "bad number '1.2.3'");
}

TEST(RelationErrors, LeftSideMustBeSpec) {
  expectError("D0.a = S.a\n", 1, "left side of a relation must be a spec tensor (S.name), got D0.a");
  expectError("D*.a = S.a\n", 1, "got D*.a");
  expectError("output D0.a\n", 1, "output names spec tensors");
}

TEST(RelationErrors, MissingEquals) {
  expectError("S.a D0.a\n", 1, "missing '=' after S.a");
  expectError("expect S.a D0.a\n", 1, "missing '=' in expect");
  expectError("const S.a 0\n", 1, "expected '=' after const S.a");
  expectError("option verbose\n", 1, "missing '=' in option");
  expectError("group g 0 1\n", 1, "expected '=' after group g");
}

TEST(RelationErrors, UnknownOp) {
  expectError("S.a = concat(D0.a, D1.a, dim=0)\nS.b = cat(D0.b, D1.b, dim=0)\n", 2, "unknown op 'cat'");
}

TEST(RelationErrors, BadArguments) {
  expectError("S.a = concat(D0.a, D1.a)\n", 1, "concat needs dim=");
  expectError("S.a = concat(dim=0)\n", 1, "concat needs at least one tensor");
  expectError("S.a = slice(D0.a, dim=0, start=0)\n", 1, "slice needs end=");
  expectError("S.a = slice(D0.a, dim=0, start=0, end=2, stride=1)\n", 1, "unknown argument 'stride' to slice");
  expectError("S.a = slice(D0.a, dim=0, start=0, end=2, step=0)\n", 1, "slice step must be positive");
  expectError("S.a = transpose(D0.a, 0)\n", 1, "transpose takes 3 positional arguments, got 2");
  expectError("S.a = transpose(D0.a, 0, 1, 2)\n", 1, "got 4");
  expectError("S.a = transpose(D0.a, D0.b, 1)\n", 1, "argument 2 of transpose must be an integer");
  expectError("S.a = permute(D0.a, 1, 0)\n", 1, "permute takes 2 positional arguments");
  expectError("S.a = permute(D0.a, [0, 0])\n", 1, "not a permutation");
  expectError("S.a = reshape(D0.a, [-1, -1])\n", 1, "bad reshape shape");
  expectError("S.a = concat(D0.a, D1.a, dim=0, dim=1)\n", 1, "'dim' given twice");
  expectError("S.a = concat(D0.a, dim=D0.b)\n", 1, "dim= must be an integer");
  expectError("S.a = concat(dim=0, D0.a)\n", 1, "positional argument after keyword argument");
  expectError("S.a = sum(D0.a, 3)\n", 1, "argument 2 of sum must be a tensor expression");
  expectError("S.a = 3\n", 1, "must be a tensor expression, got 3");
  expectError("S.a = permute(D0.a, [0, x])\n", 1, "expected an integer in list, got 'x'");
  expectError("S.a = shard(D0.a, dim=0)\n", 1, "names no D* tensor");
  expectError("S.a = D0.a D1.a\n", 1, "unexpected 'D1.a' after D0.a");
  expectError("const S.a = zero\n", 1, "const value must be a number, got 'zero'");
}

TEST(RelationErrors, UnbalancedParens) {
  expectError("S.a = D0.a\nS.b = concat(D0.b,\n  D1.b, dim=0\nS.c = D0.c\n", 2,
              "unclosed '(' (line 4 starts a new statement)");
  expectError("S.b = concat(D0.b,\n  D1.b, dim=0\noutput S.b\n", 1, "line 3 starts a new statement");
  expectError("S.a = D0.a\nS.b = concat(D0.b,\n  D1.b, dim=0\n", 2, "unclosed '(' (never closed");
  expectError("S.b = concat(D0.b, reshape(D1.b, [2, 4), dim=0)\n", 1, "')' closes the '['");
  expectError("S.a = permute(D0.a, [1, 0)\n", 1, "')' closes the '[' opened on line 1");
  expectError("S.a = D0.a)\n", 1, "unmatched ')'");
}

TEST(RelationErrors, StarMisuse) {
  expectError("S.a = concat(D*.a, D0.b, dim=0)\n", 1, "D*.a is only allowed as a whole side");
  expectError("\nS.a = slice(D*.a, dim=0, start=0, end=2)\n", 2, "D*.a is only allowed");
  expectError("expect S.a = transpose(D*.a, 0, 1)\n", 1, "D*.a is only allowed");
}

TEST(RelationErrors, StarMisuseInHandBuiltAstIsCaughtByExpand) {
  RelationFile f;
  f.path = "hand.rel";
  RelationEntry r;
  r.lhs.name = "a";
  r.loc = {"hand.rel", 7};
  r.rhs.kind = RelExpr::Kind::Call;
  r.rhs.op = "transpose";
  r.rhs.loc = r.loc;
  RelExpr t;
  t.tensor = {TensorName::Side::Impl, 0, true, "a"};
  t.loc = r.loc;
  r.rhs.args = {t};
  f.relations.push_back(r);
  try {
    f.expand(2);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("hand.rel:7: error: D*.a"), std::string::npos) << e.what();
  }
}

TEST(RelationErrors, RankOutOfRange) {
  expectError("S.a = D0.a\nS.b = concat(D0.b, D3.b, dim=0)\n", 2,
              "rank 3 named but the implementation has 2 ranks", 2);
  expectError("expect S.a = D1.a\n", 1, "rank 1 named but the implementation has 1 rank (D1.a)", 1);
  expectError("\n\nconst D2.c = 0\n", 3, "rank 2 named", 2);
  expectError("input S.t,\\\ninput D5.t\n", 1, "bad tensor name", 2);  // '\' is no continuation
  expectError("input S.t\ninput D5.t\n", 2, "rank 5 named", 4);
  expectError("group g = 0 1 2\n", 1, "rank 2 named but the implementation has 2 ranks (group g)", 2);
  // In range: no error.
  EXPECT_NO_THROW(parseRelationText("S.b = concat(D0.b, D3.b, dim=0)\n", "m.rel").expand(4));
}

TEST(RelationErrors, DuplicatesAndMissingValues) {
  expectError("spec a.py\nspec b.py\n", 2, "spec given twice (first on line 1)");
  expectError("impl a.py\nimpl b.py\n", 2, "impl given twice");
  expectError("spec\n", 1, "spec needs a path");
  expectError("impl a{rank}.py ranks two\n", 1, "ranks must be a positive integer, got 'two'");
  expectError("impl a{rank}.py ranks 0\n", 1, "ranks must be a positive integer");
  expectError("impl ranks 2\n", 1, "impl needs a path pattern");
  expectError("option k = 1\noption k = 2\n", 2, "option 'k' set twice (first on line 1)");
  expectError("option k =\n", 1, "option 'k' needs a value");
  expectError("group g = 0 0\n", 1, "lists rank 0 twice");
  expectError("group g =\n", 1, "group g lists no ranks");
  expectError("group g = 0\ngroup g = 1\n", 2, "group g declared twice");
  expectError("const S.c = 0\nconst S.c = 1\n", 2, "const S.c declared twice");
}

TEST(RelationErrors, MissingFile) {
  try {
    parseRelationFile("/nonexistent/dir/model.rel");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "/nonexistent/dir/model.rel: error: cannot open relation file '/nonexistent/dir/model.rel'");
    EXPECT_EQ(e.loc().file, "/nonexistent/dir/model.rel");
  }
}

TEST(RelationErrors, GarbageNeverCrashes) {
  // Malformed input raises InputError; nothing else escapes.
  const char* inputs[] = {"=", "S.a =", "S.a = (", "S.a = )", "S.a = concat(", "S.a = [1, 2]",
                          "expect =", "group", "const", "input", "output", "S.a = concat(,)",
                          "S.a = sum()", "\x01\x02\xff", "S.a = D99999999999999999999.a",
                          "S.a = slice(D0.a, dim=99999999999999999999, start=0, end=1)"};
  for (const char* text : inputs)
    EXPECT_THROW(parseRelationText(text, "g.rel").expand(2), InputError) << text;
}

}  // namespace
}  // namespace tangle
