#include "ops/ops.h"

#include <gtest/gtest.h>

#include "egraph/pattern.h"
#include "ops/shape.h"

namespace tangle::ops {
namespace {

class OpsTest : public ::testing::Test {
 protected:
  eg::EGraph g{inferData};
  eg::Subst vars;

  eg::Id leaf(const std::string& name, std::vector<Dim> shape, DType dt = DType::F32) {
    eg::ClassData d;
    d.types.push_back(TensorType{dt, std::move(shape)});
    eg::Id id = g.leaf("S." + name, d);
    vars.classes[name] = id;
    return id;
  }
  eg::Id constant(const std::string& name, double v) {
    eg::ENode n;
    n.op = syms().constant;
    n.attrs = eg::internAttrs({eg::Attr::real(v)});
    eg::Id id = g.add(n);
    vars.classes[name] = id;
    return id;
  }
  // The type of a term, or nullopt when it is ill-typed.
  std::optional<TensorType> typeOf(const std::string& text) {
    auto id = eg::Pattern::parse(text).instantiate(g, vars);
    if (!id) return std::nullopt;
    const TensorType* t = g.data(*id).tensor();
    if (!t) return std::nullopt;
    return *t;
  }
  std::optional<eg::ClassData> dataOf(const std::string& text) {
    auto id = eg::Pattern::parse(text).instantiate(g, vars);
    if (!id) return std::nullopt;
    return g.data(*id);
  }
  static TensorType T(std::vector<Dim> s, DType dt = DType::F32) { return TensorType{dt, std::move(s)}; }
};

TEST_F(OpsTest, SliceClampsAndChecksBounds) {
  leaf("x", {8, 6});
  EXPECT_EQ(typeOf("(slice[0, 2, 6, 1] ?x)"), T({4, 6}));
  EXPECT_EQ(typeOf("(slice[1, 0, 5, 2] ?x)"), T({8, 3}));
  EXPECT_EQ(typeOf("(slice[1, 3, 3, 1] ?x)"), T({8, 0}));
  EXPECT_FALSE(typeOf("(slice[0, 2, 9, 1] ?x)"));   // end past the size
  EXPECT_FALSE(typeOf("(slice[2, 0, 1, 1] ?x)"));   // no such dim
  EXPECT_FALSE(typeOf("(slice[0, 5, 4, 1] ?x)"));   // end < start
  EXPECT_FALSE(typeOf("(slice[0, 0, 4, 0] ?x)"));   // step 0
}

TEST_F(OpsTest, ConcatAddsAlongDimAndChecksOthers) {
  leaf("a", {2, 3});
  leaf("b", {5, 3});
  leaf("c", {2, 4});
  leaf("h", {2, 3}, DType::F16);
  EXPECT_EQ(typeOf("(concat[0] ?a ?b ?a)"), T({9, 3}));
  EXPECT_EQ(typeOf("(concat[1] ?a ?c)"), T({2, 7}));
  EXPECT_EQ(typeOf("(concat[0] ?a)"), T({2, 3}));
  EXPECT_FALSE(typeOf("(concat[1] ?a ?b)"));
  EXPECT_FALSE(typeOf("(concat[2] ?a ?a)"));
  EXPECT_FALSE(typeOf("(concat[0] ?a ?h)"));  // dtype mismatch
}

TEST_F(OpsTest, TransposePermuteReshape) {
  leaf("x", {2, 3, 4});
  EXPECT_EQ(typeOf("(transpose[0, 2] ?x)"), T({4, 3, 2}));
  EXPECT_FALSE(typeOf("(transpose[0, 3] ?x)"));
  EXPECT_EQ(typeOf("(permute[[2, 0, 1]] ?x)"), T({4, 2, 3}));
  EXPECT_FALSE(typeOf("(permute[[2, 0, 0]] ?x)"));
  EXPECT_FALSE(typeOf("(permute[[1, 0]] ?x)"));
  EXPECT_EQ(typeOf("(reshape[[6, 4]] ?x)"), T({6, 4}));
  EXPECT_EQ(typeOf("(reshape[[24]] ?x)"), T({24}));
  EXPECT_FALSE(typeOf("(reshape[[5, 5]] ?x)"));
}

TEST_F(OpsTest, ReshapeWithSymbolicDims) {
  leaf("x", {-1, 4});  // s0 x 4
  EXPECT_EQ(typeOf("(reshape[[-1, 2, 2]] ?x)"), T({-1, 2, 2}));
  EXPECT_FALSE(typeOf("(reshape[[-2, 4]] ?x)"));  // another symbol
}

TEST_F(OpsTest, SumNeedsEqualTypes) {
  leaf("a", {2, 3});
  leaf("b", {2, 3});
  leaf("c", {3, 2});
  EXPECT_EQ(typeOf("(sum ?a ?b ?a)"), T({2, 3}));
  EXPECT_EQ(typeOf("(sum ?a)"), T({2, 3}));
  EXPECT_FALSE(typeOf("(sum ?a ?c)"));
}

TEST_F(OpsTest, ElementwiseBroadcastingAndDtypes) {
  leaf("a", {4, 1, 3});
  leaf("b", {5, 1});
  leaf("h", {5, 3}, DType::F16);
  leaf("i", {5, 3}, DType::I64);
  constant("k", 0.5);
  constant("two", 2);
  EXPECT_EQ(typeOf("(add ?a ?b)"), T({4, 5, 3}));
  EXPECT_EQ(typeOf("(mul ?h ?k)"), T({5, 3}, DType::F16));  // const does not promote
  EXPECT_EQ(typeOf("(sub ?k ?h)"), T({5, 3}, DType::F16));
  EXPECT_EQ(typeOf("(add ?h ?b)"), T({5, 3}, DType::F32));  // tensors promote
  EXPECT_EQ(typeOf("(mul ?i ?two)"), T({5, 3}, DType::I64));
  EXPECT_EQ(typeOf("(mul ?i ?k)"), T({5, 3}, DType::F32));  // float scalar on an int tensor
  EXPECT_EQ(typeOf("(div ?i ?two)"), T({5, 3}, DType::F32));
  leaf("c", {4, 2});
  EXPECT_FALSE(typeOf("(add ?a ?c)"));  // 3 vs 2
  auto folded = dataOf("(mul ?k ?two)");
  ASSERT_TRUE(folded);
  EXPECT_EQ(folded->constant, 1.0);
}

TEST_F(OpsTest, UnaryAndCast) {
  leaf("x", {2, 3}, DType::F16);
  EXPECT_EQ(typeOf("(gelu[\"tanh\"] ?x)"), T({2, 3}, DType::F16));
  EXPECT_EQ(typeOf("(exp ?x)"), T({2, 3}, DType::F16));
  EXPECT_EQ(typeOf("(cast[\"f32\"] ?x)"), T({2, 3}, DType::F32));
  EXPECT_FALSE(typeOf("(cast[\"nonsense\"] ?x)"));
  EXPECT_EQ(typeOf("(pow_scalar[2.0] ?x)"), T({2, 3}, DType::F16));
}

TEST_F(OpsTest, MatrixProducts) {
  leaf("a", {4, 3});
  leaf("b", {3, 5});
  leaf("p", {2, 4, 3});
  leaf("q", {2, 3, 5});
  leaf("r", {7, 1, 4, 3});
  leaf("v", {3});
  EXPECT_EQ(typeOf("(mm ?a ?b)"), T({4, 5}));
  EXPECT_FALSE(typeOf("(mm ?b ?a)"));
  EXPECT_FALSE(typeOf("(mm ?b ?b)"));
  EXPECT_EQ(typeOf("(bmm ?p ?q)"), T({2, 4, 5}));
  EXPECT_FALSE(typeOf("(bmm ?p ?p)"));
  EXPECT_EQ(typeOf("(matmul ?r ?q)"), T({7, 2, 4, 5}));
  EXPECT_EQ(typeOf("(matmul ?a ?v)"), T({4}));
  EXPECT_EQ(typeOf("(matmul ?v ?b)"), T({5}));
  EXPECT_EQ(typeOf("(matmul ?v ?v)"), T({}));
}

TEST_F(OpsTest, ReductionsSoftmaxLayerNorm) {
  leaf("x", {2, 3, 4}, DType::F16);
  leaf("w", {4});
  leaf("b", {4});
  leaf("i", {2, 3}, DType::I32);
  EXPECT_EQ(typeOf("(sum_dim[[1], false] ?x)"), T({2, 4}, DType::F16));
  EXPECT_EQ(typeOf("(sum_dim[[0, 2], true] ?x)"), T({1, 3, 1}, DType::F16));
  EXPECT_EQ(typeOf("(sum_dim[[], false] ?x)"), T({}, DType::F16));
  EXPECT_EQ(typeOf("(sum_dim[[1], false] ?i)"), T({2}, DType::I64));
  EXPECT_EQ(typeOf("(amax[[2], false] ?x)"), T({2, 3}, DType::F16));
  EXPECT_FALSE(typeOf("(mean_dim[[3], false] ?x)"));
  EXPECT_EQ(typeOf("(softmax[2, false] ?x)"), T({2, 3, 4}, DType::F16));
  EXPECT_EQ(typeOf("(softmax[2, true] ?x)"), T({2, 3, 4}, DType::F32));
  EXPECT_FALSE(typeOf("(softmax[3, false] ?x)"));

  auto ln = dataOf("(native_layer_norm[[4], 1e-5] ?x ?w ?b)");
  ASSERT_TRUE(ln);
  ASSERT_TRUE(ln->tuple);
  ASSERT_EQ(ln->types.size(), 3u);
  EXPECT_EQ(ln->types[0], T({2, 3, 4}, DType::F16));
  EXPECT_EQ(ln->types[1], T({2, 3, 1}, DType::F32));
  EXPECT_EQ(ln->types[2], T({2, 3, 1}, DType::F32));
  EXPECT_EQ(typeOf("(getitem[1] (native_layer_norm[[3, 4], 1e-5] ?x (reshape[[3, 4]] (concat[0] ?w ?w ?w)) "
                   "(reshape[[3, 4]] (concat[0] ?b ?b ?b))))"),
            T({2, 1, 1}, DType::F32));
  EXPECT_FALSE(typeOf("(getitem[3] (native_layer_norm[[4], 1e-5] ?x ?w ?b))"));
  EXPECT_FALSE(dataOf("(native_layer_norm[[3], 1e-5] ?x ?w ?b)"));  // not the trailing dims
  auto apex = dataOf("(apex_layer_norm[[4], 1e-5] ?x ?w ?b)");
  ASSERT_TRUE(apex);
  ASSERT_EQ(apex->types.size(), 3u);
  EXPECT_EQ(apex->types[0], T({2, 3, 4}, DType::F16));
  EXPECT_EQ(apex->types[2], T({6}, DType::F32));
  constant("one", 1);
  constant("zero", 0);
  EXPECT_TRUE(dataOf("(native_layer_norm[[4], 1e-5] ?x ?one ?zero)"));  // None weight and bias
}

TEST_F(OpsTest, SplitAndExpand) {
  leaf("x", {6, 2});
  leaf("y", {1, 3});
  auto sp = dataOf("(split[0, [1, 2, 3]] ?x)");
  ASSERT_TRUE(sp);
  EXPECT_TRUE(sp->tuple);
  EXPECT_EQ(typeOf("(getitem[2] (split[0, [1, 2, 3]] ?x))"), T({3, 2}));
  EXPECT_FALSE(dataOf("(split[0, [1, 2]] ?x)"));
  EXPECT_EQ(typeOf("(expand[[4, 5, 3]] ?y)"), T({4, 5, 3}));
  EXPECT_FALSE(typeOf("(expand[[4, 2, 4]] ?y)"));
}

TEST_F(OpsTest, ConstLeaf) {
  auto c = dataOf("(const[2.5])");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->constant, 2.5);
  ASSERT_TRUE(c->tensor());
  EXPECT_TRUE(c->tensor()->shape.empty());
}

TEST_F(OpsTest, UntypedChildIsRefused) {
  eg::ENode opaque;
  opaque.op = eg::intern("aten.native_dropout.default");
  eg::Id o = g.add(opaque);
  vars.classes["o"] = o;
  EXPECT_TRUE(g.data(o).types.empty());
  EXPECT_FALSE(typeOf("(exp ?o)"));
}

TEST_F(OpsTest, CleanNodes) {
  eg::Id d = g.leaf("D12.x", Owner::impl(12), {});
  eg::Id s = g.leaf("S.x", Owner::spec(), {});
  EXPECT_TRUE(isCleanNode(g.eclass(d).nodes[0]));
  EXPECT_FALSE(isCleanNode(g.eclass(s).nodes[0]));
  EXPECT_EQ(tensorOwner(g.eclass(d).nodes[0]), Owner::impl(12));
  // The owner decides, not the name: a spec tensor named like a rank's is not clean.
  eg::Id named = g.leaf("D3.y", Owner::spec(), {});
  EXPECT_FALSE(isCleanNode(g.eclass(named).nodes[0]));
  eg::ENode c;
  c.op = syms().constant;
  c.attrs = eg::internAttrs({eg::Attr::real(0)});
  EXPECT_FALSE(isCleanNode(c));
  for (eg::Symbol sym : {syms().slice, syms().concat, syms().transpose, syms().permute, syms().reshape, syms().sum}) {
    eg::ENode n;
    n.op = sym;
    EXPECT_TRUE(isCleanNode(n)) << eg::symbolName(sym);
  }
  eg::ENode mm;
  mm.op = eg::intern("mm");
  EXPECT_FALSE(isCleanNode(mm));
  eg::ENode dn;
  dn.op = syms().tensor;
  dn.attrs = eg::internAttrs({eg::Attr::str("Dx.y")});
  EXPECT_FALSE(isCleanNode(dn));
  EXPECT_NE(find(syms().slice), nullptr);
  EXPECT_EQ(find(eg::intern("aten.foo.default")), nullptr);
}

TEST(ShapeTest, Helpers) {
  sym::Context symbols;
  EXPECT_EQ(broadcastShapes(symbols, {3, 1}, {4}), (Shape{3, 4}));
  EXPECT_FALSE(broadcastShapes(symbols, {3}, {4}));
  EXPECT_EQ(promote(DType::F16, DType::BF16), DType::F32);
  EXPECT_EQ(promote(DType::I64, DType::F16), DType::F16);
  EXPECT_EQ(reducedDims({-1, 0}, 3), (std::vector<int64_t>{0, 2}));
  EXPECT_FALSE(reducedDims({3}, 3));
  EXPECT_TRUE(sameNumel(symbols, {2, 6}, {3, 4}));
  EXPECT_FALSE(sameNumel(symbols, {2, -1}, {2, -2}));
}

}  // namespace
}  // namespace tangle::ops

namespace tangle::ops {
namespace {

// Inference e-graphs install identityChild: an identity node is its child's class, never a self-loop.
TEST(IdentityChild, OnlyPlainIdentitiesFoldIntoTheirChild) {
  eg::EGraph g{inferData};
  g.setIdentityFn(identityChild);
  eg::ClassData d;
  d.types.push_back(TensorType{DType::F32, {4, 6}});
  eg::Id x = g.leaf("S.x", d);
  eg::Id y = g.leaf("S.y", d);
  eg::Subst vars;
  vars.classes["x"] = x;
  vars.classes["y"] = y;
  auto add = [&](const char* text) { return eg::Pattern::parse(text).instantiate(g, vars); };
  size_t before = g.numNodes();
  EXPECT_EQ(add("(reshape[[4, 6]] ?x)"), x);
  EXPECT_EQ(add("(transpose[1, 1] ?x)"), x);
  EXPECT_EQ(add("(permute[[0, 1]] ?x)"), x);
  EXPECT_EQ(add("(concat[1] ?x)"), x);
  EXPECT_EQ(g.numNodes(), before);
  // Not identities (or not well-formed ones): added as nodes of their own.
  for (const char* t : {"(reshape[[6, 4]] ?x)", "(reshape[[24]] ?x)", "(transpose[0, 1] ?x)", "(permute[[1, 0]] ?x)",
                        "(concat[0] ?x ?y)"}) {
    auto id = add(t);
    ASSERT_TRUE(id) << t;
    EXPECT_NE(*id, x) << t;
  }
  EXPECT_FALSE(add("(transpose[2, 2] ?x)")) << "no dim 2: ill-typed, not the identity";
  EXPECT_FALSE(add("(concat[2] ?x)")) << "no dim 2: ill-typed, not the identity";
  // Without the hook the node is added (and would need reshape-same-shape to join x's class).
  eg::EGraph plain{inferData};
  eg::Id px = plain.leaf("S.x", d);
  vars.classes["x"] = px;
  auto r = eg::Pattern::parse("(reshape[[4, 6]] ?x)").instantiate(plain, vars);
  ASSERT_TRUE(r);
  EXPECT_NE(*r, px);
}

}  // namespace
}  // namespace tangle::ops
