#include "egraph/pattern.h"

#include <gtest/gtest.h>

#include "test_util.h"

using namespace tangle;
using namespace tangle::eg;
using eg::test::node;
using eg::test::tensorData;

namespace {
std::string parseError(std::string_view text) {
  try {
    Pattern::parse(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(PatternParse, AcceptsTheGrammar) {
  EXPECT_EQ(Pattern::parse("?x").rootOp(), std::nullopt);
  EXPECT_EQ(Pattern::parse("(mm (concat[1] ?a ?b) (concat[0] ?c ?d))").rootOp(), intern("mm"));
  EXPECT_EQ(Pattern::parse("(slice[?dim, ?start, ?end, 1] ?x)").rootOp(), intern("slice"));
  EXPECT_EQ(Pattern::parse("(sum ?xs...)").rootOp(), intern("sum"));
  EXPECT_EQ(Pattern::parse("(tensor[\"D0.x\"])").rootOp(), intern("tensor"));
  EXPECT_EQ(Pattern::parse("(aten.gelu[\"tanh\", 0.5, -2, true, none, [1, 2], [], _] ?x)").rootOp(),
            intern("aten.gelu"));
  EXPECT_EQ(Pattern::parse("  ( f  ?x ?x )  ").text(), "  ( f  ?x ?x )  ");
}

TEST(PatternParse, ErrorsPointAtTheToken) {
  EXPECT_NE(parseError("(f ?x").find("missing ')'"), std::string::npos);
  EXPECT_NE(parseError("(f ?x))").find("column 7"), std::string::npos);
  EXPECT_NE(parseError("(f x)").find("'x'"), std::string::npos);
  EXPECT_NE(parseError("(slice[1 2] ?x)").find("'2'"), std::string::npos);
  EXPECT_NE(parseError("(slice[1, abc] ?x)").find("'abc'"), std::string::npos);
  EXPECT_NE(parseError("(sum ?xs... ?y)").find("last child"), std::string::npos);
  EXPECT_NE(parseError("?xs...").find("list variable"), std::string::npos);
  EXPECT_NE(parseError("(f[?x] ?x)").find("two roles"), std::string::npos);
  EXPECT_NE(parseError("(tensor[\"abc])").find("unterminated"), std::string::npos);
  EXPECT_NE(parseError("").find("end of pattern"), std::string::npos);
  EXPECT_NE(parseError("(f[[1, [2]]] ?x)").find("integer"), std::string::npos);
}

// Found by fuzz/lemma_fuzz.cpp: deep nesting overflowed the stack.
TEST(PatternParse, NestingIsBounded) {
  auto nested = [](int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += "(f ";
    return s + "?x" + std::string(n, ')');
  };
  std::string err = parseError(nested(100000));
  EXPECT_NE(err.find("nested more than 100 levels"), std::string::npos) << err.substr(0, 300);
  EXPECT_LT(err.size(), 400u);  // a long pattern is not copied whole into the message
  EXPECT_EQ(parseError(nested(90)), "");
}

TEST(PatternMatch, RepeatedVariablesBindEqualClasses) {
  EGraph g;
  Id a = g.leaf("a", {}), b = g.leaf("b", {});
  Id aa = g.add(node("add", {a, a}));
  Id ab = g.add(node("add", {a, b}));
  Pattern p = Pattern::parse("(add ?x ?x)");
  auto ms = p.search(g);
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_EQ(ms[0].eclass, aa);
  EXPECT_EQ(ms[0].subst.cls("x"), a);
  EXPECT_TRUE(p.searchClass(g, ab).empty());
  g.merge(a, b);
  g.rebuild();
  EXPECT_EQ(p.searchClass(g, ab).size(), 1u);
  EXPECT_EQ(p.search(g).size(), 1u);  // add(a,a) and add(a,b) are one node now
}

TEST(PatternMatch, NestedPatternsAndBacktracking) {
  EGraph g;
  Id x = g.leaf("x", {}), y = g.leaf("y", {}), z = g.leaf("z", {});
  Id c1 = g.add(node("concat", {x, y}, {Attr::integer(1)}));
  Id c0 = g.add(node("concat", {y, z}, {Attr::integer(0)}));
  Id mm = g.add(node("mm", {c1, c0}));
  // A second concat[1] in the first operand's class exercises backtracking.
  Id other = g.add(node("concat", {z, z}, {Attr::integer(1)}));
  g.merge(other, c1);
  g.rebuild();
  Pattern p = Pattern::parse("(mm (concat[1] ?a ?b) (concat[0] ?b ?d))");
  auto ms = p.search(g);
  ASSERT_EQ(ms.size(), 1u);  // only concat[1](x, y) shares ?b = y
  EXPECT_EQ(ms[0].eclass, g.find(mm));
  EXPECT_EQ(ms[0].subst.cls("a"), x);
  EXPECT_EQ(ms[0].subst.cls("d"), z);
  Pattern q = Pattern::parse("(mm (concat[1] ?a ?b) ?r)");
  EXPECT_EQ(q.search(g).size(), 2u);
  EXPECT_EQ(q.search(g, 1).size(), 1u);  // limit
}

TEST(PatternMatch, AttributeVariablesAndWildcards) {
  EGraph g;
  Id x = g.leaf("x", {});
  auto slice = [&](int64_t dim, int64_t s, int64_t e) {
    return g.add(node("slice", {x}, {Attr::integer(dim), Attr::integer(s), Attr::integer(e), Attr::integer(1)}));
  };
  Id s1 = slice(0, 0, 4);
  slice(1, 2, 2);
  Pattern p = Pattern::parse("(slice[?d, ?s, ?e, 1] ?x)");
  auto ms = p.search(g);
  ASSERT_EQ(ms.size(), 2u);
  // repeated attr variable: start == end
  Pattern eq = Pattern::parse("(slice[_, ?s, ?s, _] ?x)");
  auto me = eq.search(g);
  ASSERT_EQ(me.size(), 1u);
  EXPECT_EQ(me[0].subst.integer("s"), 2);
  EXPECT_THROW(me[0].subst.integer("nope"), std::out_of_range);
  Pattern lit = Pattern::parse("(slice[0, _, 4, 1] ?x)");
  auto ml = lit.search(g);
  ASSERT_EQ(ml.size(), 1u);
  EXPECT_EQ(ml[0].eclass, s1);
  // Attribute count must match exactly.
  EXPECT_TRUE(Pattern::parse("(slice[_, _, _] ?x)").search(g).empty());
  // A pattern without brackets only matches nodes without attributes.
  EXPECT_TRUE(Pattern::parse("(slice ?x)").search(g).empty());
  // Non-integer attr: integer() throws invalid_argument.
  Id t = g.add(node("gelu", {x}, {Attr::str("tanh")}));
  auto mg = Pattern::parse("(gelu[?approx] ?x)").searchClass(g, t);
  ASSERT_EQ(mg.size(), 1u);
  EXPECT_EQ(mg[0].subst.attr("approx"), Attr::str("tanh"));
  EXPECT_THROW(mg[0].subst.integer("approx"), std::invalid_argument);
}

TEST(PatternMatch, ListVariables) {
  EGraph g;
  Id a = g.leaf("a", {}), b = g.leaf("b", {}), c = g.leaf("c", {});
  Id s3 = g.add(node("sum", {a, b, c}));
  Id s1 = g.add(node("sum", {a}));
  auto ms = Pattern::parse("(sum ?xs...)").search(g);
  ASSERT_EQ(ms.size(), 2u);
  EXPECT_EQ(ms[0].subst.list("xs"), (std::vector<Id>{a, b, c}));
  EXPECT_EQ(ms[1].subst.list("xs"), (std::vector<Id>{a}));
  auto rest = Pattern::parse("(sum ?h ?t...)").searchClass(g, s3);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].subst.cls("h"), a);
  EXPECT_EQ(rest[0].subst.list("t"), (std::vector<Id>{b, c}));
  auto empty = Pattern::parse("(sum ?h ?t...)").searchClass(g, s1);
  ASSERT_EQ(empty.size(), 1u);
  EXPECT_TRUE(empty[0].subst.list("t").empty());
  // The same list variable twice must bind equal lists.
  Id p1 = g.add(node("pair", {s3, s3}));
  Id p2 = g.add(node("pair", {s3, s1}));
  Pattern same = Pattern::parse("(pair (sum ?xs...) (sum ?xs...))");
  EXPECT_EQ(same.searchClass(g, p1).size(), 1u);
  EXPECT_TRUE(same.searchClass(g, p2).empty());
}

TEST(PatternInstantiate, BuildsAndReusesNodes) {
  EGraph g;
  Id a = g.leaf("a", {}), b = g.leaf("b", {});
  Id s = g.add(node("sum", {a, b}));
  auto m = Pattern::parse("(sum ?x ?ys...)").searchClass(g, s);
  ASSERT_EQ(m.size(), 1u);
  Pattern rhs = Pattern::parse("(concat[0] (neg ?x) ?ys...)");
  auto id = rhs.instantiate(g, m[0].subst);
  ASSERT_TRUE(id.has_value());
  auto neg = g.lookup(node("neg", {a}));
  ASSERT_TRUE(neg.has_value());
  EXPECT_EQ(g.lookup(node("concat", {*neg, b}, {Attr::integer(0)})), id);
  EXPECT_EQ(rhs.instantiate(g, m[0].subst), id);  // hash-consed
  // Attr variables flow from the subst; unbound variables throw.
  Subst sub;
  sub.classes["x"] = a;
  sub.attrs["d"] = Attr::integer(3);
  auto t = Pattern::parse("(transpose[?d, 0] ?x)").instantiate(g, sub);
  EXPECT_EQ(g.lookup(node("transpose", {a}, {Attr::integer(3), Attr::integer(0)})), t);
  EXPECT_THROW(Pattern::parse("(f ?y)").instantiate(g, sub), std::out_of_range);
  EXPECT_THROW(Pattern::parse("(f[_] ?x)").instantiate(g, sub), std::logic_error);
}

TEST(PatternInstantiate, RefusesIllTypedNodes) {
  EGraph g(eg::test::toyData);
  Subst s;
  s.classes["x"] = g.leaf("x", tensorData({2}));
  s.classes["y"] = g.leaf("y", tensorData({3}));
  size_t before = g.numNodes();
  EXPECT_FALSE(Pattern::parse("(add ?x ?y)").instantiate(g, s).has_value());
  EXPECT_FALSE(Pattern::parse("(f (bad ?x))").instantiate(g, s).has_value());
  EXPECT_EQ(g.numNodes(), before);
  EXPECT_TRUE(Pattern::parse("(add ?x ?x)").instantiate(g, s).has_value());
}

TEST(PatternInstantiate, MustExistOnlyAddsTheRoot) {
  EGraph g;
  Subst s;
  Id x = g.leaf("x", {});
  s.classes["x"] = x;
  Pattern p = Pattern::parse("(f (g ?x) (h ?x))");
  size_t before = g.numNodes();
  EXPECT_FALSE(p.instantiate(g, s, /*mustExist=*/true).has_value());
  EXPECT_EQ(g.numNodes(), before);
  g.add(node("g", {x}));
  EXPECT_FALSE(p.instantiate(g, s, true).has_value());
  g.add(node("h", {x}));
  size_t withSubs = g.numNodes();
  auto root = p.instantiate(g, s, true);
  ASSERT_TRUE(root.has_value());
  EXPECT_EQ(g.numNodes(), withSubs + 1);  // only the root is new
  EXPECT_TRUE(Pattern::parse("(k ?x)").instantiate(g, s, true).has_value());  // a root may always be added
}
