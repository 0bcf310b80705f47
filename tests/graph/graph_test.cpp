#include "graph/graph.h"

#include <gtest/gtest.h>

namespace tangle {
namespace {

Node makeNode(std::string name, std::string op, std::vector<Value> args = {}, int line = 0) {
  Node n;
  n.name = std::move(name);
  n.op = std::move(op);
  n.args = std::move(args);
  n.loc = SourceLoc{"g.py", line};
  return n;
}

TEST(Graph, AddFindAndInputs) {
  Graph g;
  NodeId a = g.add(makeNode("a", "placeholder"));
  NodeId b = g.add(makeNode("b", "placeholder"));
  NodeId c = g.add(makeNode("c", "aten.add.Tensor", {TensorRef{a}, TensorRef{b}}));
  EXPECT_EQ(g.size(), 3u);
  EXPECT_EQ(g.find("c"), c);
  EXPECT_EQ(g.find("zz"), std::nullopt);
  EXPECT_EQ(g.inputs, (std::vector<NodeId>{a, b}));
  EXPECT_EQ(g.node(c).name, "c");
  EXPECT_NO_THROW(g.verify());
}

TEST(Graph, DuplicateNameIsAnInputError) {
  Graph g;
  g.add(makeNode("mm", "placeholder", {}, 3));
  try {
    g.add(makeNode("mm", "aten.mm.default", {}, 7));
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("g.py:7"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'mm'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("line 3"), std::string::npos) << msg;
  }
}

TEST(Graph, OperandsIncludeNestedListsAndKwargs) {
  Graph g;
  NodeId a = g.add(makeNode("a", "placeholder"));
  NodeId b = g.add(makeNode("b", "placeholder"));
  NodeId c = g.add(makeNode("c", "placeholder"));
  Node n = makeNode("cat", "aten.cat.default",
                    {ValueList{TensorRef{b}, ValueList{TensorRef{a}, int64_t{3}}}, int64_t{0}});
  n.kwargs.emplace_back("out", TensorRef{c});
  NodeId cat = g.add(std::move(n));
  EXPECT_EQ(g.operands(cat), (std::vector<NodeId>{b, a, c}));
  EXPECT_TRUE(g.operands(a).empty());
  g.outputs = {TensorRef{cat}, NoneValue{}, ValueList{TensorRef{a}}, int64_t{1}};
  EXPECT_EQ(g.outputNodes(), (std::vector<NodeId>{cat, a}));
}

TEST(Graph, VerifyRejectsForwardReferenceAndCycle) {
  Graph g;
  g.path = "g.py";
  NodeId x = g.add(makeNode("x", "placeholder", {}, 1));
  NodeId y = g.add(makeNode("y", "aten.neg.default", {TensorRef{x}}, 2));
  g.add(makeNode("z", "aten.neg.default", {TensorRef{y}}, 3));
  g.node(y).args[0] = TensorRef{2};  // y now reads z, defined after it
  try {
    g.verify();
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    std::string msg = e.what();
    EXPECT_EQ(msg, "g.py:2: error: node 'y' uses 'z' before it is defined (cycle or forward reference)");
  }
  g.node(y).args[0] = TensorRef{1};  // self loop
  EXPECT_THROW(g.verify(), InputError);
  g.node(y).args[0] = TensorRef{42};  // dangling
  EXPECT_THROW(g.verify(), InputError);
  g.node(y).args[0] = TensorRef{x};
  EXPECT_NO_THROW(g.verify());
  g.outputs = {TensorRef{99}};
  EXPECT_THROW(g.verify(), InputError);
}

}  // namespace
}  // namespace tangle
