// The reference kernels, evaluated through their op records.
#include "interp/interp.h"
#include "ops/ops.h"

#include <gtest/gtest.h>

#include <cmath>

namespace tangle::interp {
namespace {

using ops::evaluate;
using ops::gatherOf;

using eg::Attr;

// Evaluates op[attrs] over tensors (children ids are placeholders).
std::optional<Value> eval(const std::string& op, eg::AttrList attrs, std::vector<Tensor> xs) {
  eg::ENode n;
  n.op = eg::intern(op);
  n.attrs = eg::internAttrs(attrs);
  std::vector<Value> in;
  for (size_t i = 0; i < xs.size(); ++i) {
    n.children.push_back(static_cast<eg::Id>(i));
    in.push_back(Value::of(std::move(xs[i])));
  }
  return evaluate(n, in);
}
Tensor evalT(const std::string& op, eg::AttrList attrs, std::vector<Tensor> xs) {
  auto v = eval(op, std::move(attrs), std::move(xs));
  EXPECT_TRUE(v && v->tensor()) << op;
  return v && v->tensor() ? *v->tensor() : Tensor{};
}
Tensor iota(Shape s, double from = 0) {
  Tensor t = Tensor::filled(s, 0);
  for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = from + static_cast<double>(i);
  return t;
}
void expectNear(const Tensor& t, const Shape& shape, const std::vector<double>& want, double tol = 1e-9) {
  ASSERT_EQ(t.shape, shape);
  ASSERT_EQ(t.data.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(t.data[i], want[i], tol) << "element " << i;
}
Attr I(int64_t v) { return Attr::integer(v); }
Attr L(std::vector<int64_t> v) { return Attr::ints(std::move(v)); }

TEST(Interp, Slice) {
  // x = [[0 1 2 3], [4 5 6 7]]
  EXPECT_EQ(evalT("slice", {I(1), I(1), I(3), I(1)}, {iota({2, 4})}), Tensor::of({2, 2}, {1, 2, 5, 6}));
  EXPECT_EQ(evalT("slice", {I(1), I(0), I(4), I(2)}, {iota({2, 4})}), Tensor::of({2, 2}, {0, 2, 4, 6}));
  EXPECT_EQ(evalT("slice", {I(0), I(1), I(2), I(1)}, {iota({2, 4})}), Tensor::of({1, 4}, {4, 5, 6, 7}));
  EXPECT_EQ(evalT("slice", {I(1), I(2), I(2), I(1)}, {iota({2, 4})}).shape, (Shape{2, 0}));
  EXPECT_FALSE(eval("slice", {I(2), I(0), I(1), I(1)}, {iota({2, 4})}));  // no dim 2
  EXPECT_FALSE(eval("slice", {I(0), I(0), I(1), I(0)}, {iota({2, 4})}));  // step 0
}

TEST(Interp, Concat) {
  EXPECT_EQ(evalT("concat", {I(0)}, {iota({1, 2}), iota({2, 2}, 10)}), Tensor::of({3, 2}, {0, 1, 10, 11, 12, 13}));
  EXPECT_EQ(evalT("concat", {I(1)}, {iota({2, 1}), iota({2, 2}, 10)}), Tensor::of({2, 3}, {0, 10, 11, 1, 12, 13}));
  EXPECT_FALSE(eval("concat", {I(1)}, {iota({2, 1}), iota({3, 2})}));
}

TEST(Interp, TransposePermuteReshapeExpand) {
  EXPECT_EQ(evalT("transpose", {I(0), I(1)}, {iota({2, 3})}), Tensor::of({3, 2}, {0, 3, 1, 4, 2, 5}));
  // permute [2, 0, 1] of [2, 1, 3]: out[i,j,k] = x[j,k,i]
  EXPECT_EQ(evalT("permute", {L({2, 0, 1})}, {iota({2, 1, 3})}), Tensor::of({3, 2, 1}, {0, 3, 1, 4, 2, 5}));
  EXPECT_FALSE(eval("permute", {L({0, 0})}, {iota({2, 2})}));
  EXPECT_EQ(evalT("reshape", {L({3, 2})}, {iota({2, 3})}), Tensor::of({3, 2}, {0, 1, 2, 3, 4, 5}));
  EXPECT_FALSE(eval("reshape", {L({4})}, {iota({2, 3})}));
  EXPECT_EQ(evalT("expand", {L({2, 2, 3})}, {iota({2, 1, 3})}),
            Tensor::of({2, 2, 3}, {0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}));
  EXPECT_EQ(evalT("expand", {L({2, 3})}, {iota({3})}), Tensor::of({2, 3}, {0, 1, 2, 0, 1, 2}));
  EXPECT_FALSE(eval("expand", {L({2, 4})}, {iota({3})}));
}

TEST(Interp, SumRmaxRmin) {
  EXPECT_EQ(evalT("sum", {}, {iota({2}), iota({2}, 5), Tensor::of({2}, {1, 1})}), Tensor::of({2}, {6, 8}));
  EXPECT_EQ(evalT("rmax", {}, {Tensor::of({2}, {1, 5}), Tensor::of({2}, {3, 2})}), Tensor::of({2}, {3, 5}));
  EXPECT_EQ(evalT("rmin", {}, {Tensor::of({2}, {1, 5}), Tensor::of({2}, {3, 2})}), Tensor::of({2}, {1, 2}));
  EXPECT_FALSE(eval("sum", {}, {iota({2}), iota({3})}));
}

TEST(Interp, SplitGetitem) {
  eg::ENode split;
  split.op = eg::intern("split");
  split.attrs = eg::internAttrs({I(1), L({1, 2})});
  split.children = {0};
  auto t = evaluate(split, {Value::of(iota({2, 3}))});
  ASSERT_TRUE(t && t->tuple);
  ASSERT_EQ(t->items.size(), 2u);
  EXPECT_EQ(t->items[0], Tensor::of({2, 1}, {0, 3}));
  EXPECT_EQ(t->items[1], Tensor::of({2, 2}, {1, 2, 4, 5}));
  eg::ENode get;
  get.op = eg::intern("getitem");
  get.attrs = eg::internAttrs({I(1)});
  get.children = {0};
  auto g = evaluate(get, {*t});
  ASSERT_TRUE(g && g->tensor());
  EXPECT_EQ(*g->tensor(), t->items[1]);
  get.attrs = eg::internAttrs({I(2)});
  EXPECT_FALSE(evaluate(get, {*t}));
  split.attrs = eg::internAttrs({I(1), L({1, 1})});  // sizes do not add up
  EXPECT_FALSE(evaluate(split, {Value::of(iota({2, 3}))}));
}

TEST(Interp, ConstAndBinaryBroadcast) {
  eg::ENode c;
  c.op = eg::intern("const");
  c.attrs = eg::internAttrs({Attr::real(2.5)});
  auto v = evaluate(c, {});
  ASSERT_TRUE(v && v->tensor());
  EXPECT_EQ(*v->tensor(), Tensor::scalar(2.5));
  // [2,1] + [3] -> [2,3]
  EXPECT_EQ(evalT("add", {}, {Tensor::of({2, 1}, {10, 20}), iota({3})}), Tensor::of({2, 3}, {10, 11, 12, 20, 21, 22}));
  EXPECT_EQ(evalT("sub", {}, {iota({2}), Tensor::scalar(1)}), Tensor::of({2}, {-1, 0}));
  EXPECT_EQ(evalT("mul", {}, {iota({2, 2}), Tensor::of({2}, {2, 3})}), Tensor::of({2, 2}, {0, 3, 4, 9}));
  EXPECT_EQ(evalT("div", {}, {Tensor::of({2}, {1, 3}), Tensor::of({2}, {2, 2})}), Tensor::of({2}, {0.5, 1.5}));
  EXPECT_FALSE(eval("add", {}, {iota({2}), iota({3})}));
}

TEST(Interp, Unary) {
  Tensor x = Tensor::of({3}, {-1, 0, 2});
  expectNear(evalT("neg", {}, {x}), {3}, {1, 0, -2});
  expectNear(evalT("exp", {}, {x}), {3}, {std::exp(-1.0), 1, std::exp(2.0)});
  expectNear(evalT("log", {}, {Tensor::of({2}, {1, std::exp(1.0)})}), {2}, {0, 1});
  expectNear(evalT("relu", {}, {x}), {3}, {0, 0, 2});
  expectNear(evalT("tanh", {}, {x}), {3}, {std::tanh(-1.0), 0, std::tanh(2.0)});
  expectNear(evalT("sigmoid", {}, {x}), {3}, {1 / (1 + std::exp(1.0)), 0.5, 1 / (1 + std::exp(-2.0))});
  expectNear(evalT("silu", {}, {x}), {3}, {-1 / (1 + std::exp(1.0)), 0, 2 / (1 + std::exp(-2.0))});
  expectNear(evalT("rsqrt", {}, {Tensor::of({2}, {4, 0.25})}), {2}, {0.5, 2});
  expectNear(evalT("sqrt", {}, {Tensor::of({2}, {4, 0.25})}), {2}, {2, 0.5});
  expectNear(evalT("pow_scalar", {Attr::real(3)}, {x}), {3}, {-1, 0, 8});
  // gelu(1) = 0.5 (1 + erf(1/sqrt 2)) = 0.8413447460685429; tanh approximation 0.8411919906082768
  expectNear(evalT("gelu", {Attr::str("none")}, {Tensor::of({1}, {1})}), {1}, {0.8413447460685429}, 1e-12);
  expectNear(evalT("gelu", {Attr::str("tanh")}, {Tensor::of({1}, {1})}), {1}, {0.8411919906082768}, 1e-12);
  EXPECT_FALSE(eval("gelu", {Attr::str("fast")}, {x}));
  expectNear(evalT("cast", {Attr::str("i64")}, {Tensor::of({2}, {-1.5, 2.7})}), {2}, {-1, 2});
  expectNear(evalT("cast", {Attr::str("bool")}, {Tensor::of({2}, {0, -3})}), {2}, {0, 1});
  expectNear(evalT("cast", {Attr::str("f16")}, {Tensor::of({1}, {0.1})}), {1}, {0.1});
  EXPECT_FALSE(eval("cast", {Attr::str("nope")}, {x}));
}

TEST(Interp, Products) {
  Tensor a = iota({2, 3}), b = iota({3, 2});  // [[0 1 2][3 4 5]] x [[0 1][2 3][4 5]]
  EXPECT_EQ(evalT("mm", {}, {a, b}), Tensor::of({2, 2}, {10, 13, 28, 40}));
  EXPECT_FALSE(eval("mm", {}, {a, a}));
  Tensor ba = iota({2, 1, 2}), bb = iota({2, 2, 1});  // batches [[0 1]]x[[0][1]] and [[2 3]]x[[2][3]]
  EXPECT_EQ(evalT("bmm", {}, {ba, bb}), Tensor::of({2, 1, 1}, {1, 13}));
  // matmul: batch broadcast [2,1,2] x [2,1] -> [2,1,1]; vector cases.
  EXPECT_EQ(evalT("matmul", {}, {ba, Tensor::of({2, 1}, {1, 1})}), Tensor::of({2, 1, 1}, {1, 5}));
  EXPECT_EQ(evalT("matmul", {}, {Tensor::of({3}, {1, 1, 1}), b}), Tensor::of({2}, {6, 9}));
  EXPECT_EQ(evalT("matmul", {}, {a, Tensor::of({3}, {1, 0, 1})}), Tensor::of({2}, {2, 8}));
  EXPECT_EQ(evalT("matmul", {}, {Tensor::of({2}, {1, 2}), Tensor::of({2}, {3, 4})}), Tensor::scalar(11));
  EXPECT_FALSE(eval("matmul", {}, {a, a}));
}

TEST(Interp, Reductions) {
  Tensor x = iota({2, 3});
  EXPECT_EQ(evalT("sum_dim", {L({1}), Attr::boolean(false)}, {x}), Tensor::of({2}, {3, 12}));
  EXPECT_EQ(evalT("sum_dim", {L({0}), Attr::boolean(true)}, {x}), Tensor::of({1, 3}, {3, 5, 7}));
  EXPECT_EQ(evalT("sum_dim", {L({}), Attr::boolean(false)}, {x}), Tensor::scalar(15));
  EXPECT_EQ(evalT("mean_dim", {L({-1}), Attr::boolean(false)}, {x}), Tensor::of({2}, {1, 4}));
  EXPECT_EQ(evalT("amax", {L({0, 1}), Attr::boolean(true)}, {Tensor::of({2, 2}, {1, 7, -3, 2})}),
            Tensor::of({1, 1}, {7}));
  EXPECT_FALSE(eval("sum_dim", {L({2}), Attr::boolean(false)}, {x}));
}

TEST(Interp, Softmax) {
  double e = std::exp(1.0);
  Tensor s = evalT("softmax", {I(1), Attr::boolean(false)}, {Tensor::of({2, 2}, {0, 1, 5, 5})});
  expectNear(s, {2, 2}, {1 / (1 + e), e / (1 + e), 0.5, 0.5});
  Tensor s0 = evalT("softmax", {I(0), Attr::boolean(false)}, {Tensor::of({2, 1}, {0, 1})});
  expectNear(s0, {2, 1}, {1 / (1 + e), e / (1 + e)});
}

TEST(Interp, LayerNorms) {
  // Rows [1 3] and [0 0]: mean 2, var 1 -> rstd 1/sqrt(1+eps); mean 0, var 0 -> rstd 1/sqrt(eps).
  double eps = 1e-5;
  eg::ENode ln;
  ln.op = eg::intern("native_layer_norm");
  ln.attrs = eg::internAttrs({L({2}), Attr::real(eps)});
  ln.children = {0, 1, 2};
  Tensor x = Tensor::of({2, 2}, {1, 3, 0, 0});
  auto v = evaluate(ln, {Value::of(x), Value::of(Tensor::of({2}, {2, 1})), Value::of(Tensor::of({2}, {0, 10}))});
  ASSERT_TRUE(v && v->tuple && v->items.size() == 3);
  double r = 1 / std::sqrt(1 + eps);
  expectNear(v->items[0], {2, 2}, {-2 * r, 10 + r, 0, 10});
  expectNear(v->items[1], {2, 1}, {2, 0});
  expectNear(v->items[2], {2, 1}, {r, 1 / std::sqrt(eps)}, 1e-6);
  ln.op = eg::intern("apex_layer_norm");  // statistics flattened; 0-d weight and bias
  auto a = evaluate(ln, {Value::of(x), Value::of(Tensor::scalar(1)), Value::of(Tensor::scalar(0))});
  ASSERT_TRUE(a && a->items.size() == 3);
  expectNear(a->items[0], {2, 2}, {-r, r, 0, 0});
  expectNear(a->items[1], {2}, {2, 0});
  // Weight of the wrong shape.
  EXPECT_FALSE(evaluate(ln, {Value::of(x), Value::of(Tensor::of({3}, {1, 1, 1})), Value::of(Tensor::scalar(0))}));
}

TEST(Interp, WhereAndCompare) {
  // where([[1],[0]], [10, 20], 0-d 7) -> [[10, 20], [7, 7]]
  EXPECT_EQ(evalT("where", {}, {Tensor::of({2, 1}, {1, 0}), Tensor::of({2}, {10, 20}), Tensor::scalar(7)}),
            Tensor::of({2, 2}, {10, 20, 7, 7}));
  Tensor x = Tensor::of({3}, {1, 2, 3});
  EXPECT_EQ(evalT("lt", {}, {x, Tensor::scalar(2)}), Tensor::of({3}, {1, 0, 0}));
  EXPECT_EQ(evalT("le", {}, {x, Tensor::scalar(2)}), Tensor::of({3}, {1, 1, 0}));
  EXPECT_EQ(evalT("gt", {}, {x, Tensor::scalar(2)}), Tensor::of({3}, {0, 0, 1}));
  EXPECT_EQ(evalT("ge", {}, {x, Tensor::scalar(2)}), Tensor::of({3}, {0, 1, 1}));
  EXPECT_EQ(evalT("eq", {}, {x, Tensor::scalar(2)}), Tensor::of({3}, {0, 1, 0}));
  EXPECT_EQ(evalT("ne", {}, {x, Tensor::scalar(2)}), Tensor::of({3}, {1, 0, 1}));
  EXPECT_EQ(evalT("or", {}, {Tensor::of({2}, {0, 0}), Tensor::of({2}, {0, 1})}), Tensor::of({2}, {0, 1}));
  EXPECT_EQ(evalT("and", {}, {Tensor::of({2}, {1, 1}), Tensor::of({2}, {0, 1})}), Tensor::of({2}, {0, 1}));
}

TEST(Interp, Lookups) {
  Tensor w = iota({3, 2});  // rows [0 1] [2 3] [4 5]
  EXPECT_EQ(evalT("index_rows", {}, {w, Tensor::of({2}, {2, 0})}), Tensor::of({2, 2}, {4, 5, 0, 1}));
  EXPECT_FALSE(eval("index_rows", {}, {w, Tensor::of({1}, {3})}));    // out of range
  EXPECT_FALSE(eval("index_rows", {}, {w, Tensor::of({1}, {0.5})}));  // not an index
  EXPECT_EQ(evalT("gather_rows", {}, {w, Tensor::of({3}, {1, 0, 1})}), Tensor::of({3}, {1, 2, 5}));
  EXPECT_FALSE(eval("gather_rows", {}, {w, Tensor::of({2}, {0, 0})}));
}

TEST(Interp, MaxDimAndDropout) {
  auto v = eval("max_dim", {I(1), Attr::boolean(false)}, {Tensor::of({2, 3}, {1, 5, 5, 7, 0, 2})});
  ASSERT_TRUE(v && v->tuple && v->items.size() == 2);
  EXPECT_EQ(v->items[0], Tensor::of({2}, {5, 7}));
  EXPECT_EQ(v->items[1], Tensor::of({2}, {1, 0}));  // first maximum
  // Dropout: a deterministic function of each value; kept elements scaled by 1/(1-p).
  Tensor x = Tensor::of({4}, {0.1, -0.7, 1.3, 2.9});
  auto d = eval("dropout", {Attr::real(0.5), Attr::boolean(true)}, {x});
  ASSERT_TRUE(d && d->items.size() == 2);
  for (size_t i = 0; i < 4; ++i) {
    double m = d->items[1].data[i];
    EXPECT_TRUE(m == 0 || m == 1);
    EXPECT_DOUBLE_EQ(d->items[0].data[i], m * x.data[i] * 2);
  }
  auto again = eval("dropout", {Attr::real(0.5), Attr::boolean(true)}, {Tensor::of({1}, {1.3})});
  EXPECT_EQ(again->items[1].data[0], d->items[1].data[2]);  // same value, same mask
  auto eval0 = eval("dropout", {Attr::real(0.5), Attr::boolean(false)}, {x});
  EXPECT_EQ(eval0->items[0], x);
}

// Backward ops against central differences of their forward ops.
TEST(Interp, GeluBackwardIsTheDerivative) {
  for (const char* approx : {"none", "tanh"}) {
    Tensor x = Tensor::of({3}, {-1.3, 0.2, 2.1});
    Tensor g = evalT("gelu_backward", {Attr::str(approx)}, {Tensor::of({1}, {2}), x});
    double h = 1e-6;
    for (size_t i = 0; i < 3; ++i) {
      Tensor up = evalT("gelu", {Attr::str(approx)}, {Tensor::of({1}, {x.data[i] + h})});
      Tensor down = evalT("gelu", {Attr::str(approx)}, {Tensor::of({1}, {x.data[i] - h})});
      EXPECT_NEAR(g.data[i], 2 * (up.data[0] - down.data[0]) / (2 * h), 1e-7) << approx << " " << i;
    }
  }
}

TEST(Interp, ApexLayerNormBackwardIsTheGradient) {
  // L(x, w, b) = sum(grad * layer_norm(x, w, b)); check dx, dw, db against central differences.
  Tensor x = Tensor::of({2, 3}, {0.3, -1.2, 2.0, 0.7, 0.1, -0.4}), w = Tensor::of({3}, {1.5, -0.5, 2.0}),
         b = Tensor::of({3}, {0.1, 0.2, 0.3}), grad = Tensor::of({2, 3}, {1.0, -2.0, 0.5, 0.3, 0.9, -1.1});
  eg::AttrList a = {L({3}), Attr::real(1e-5)};
  auto forward = [&](const Tensor& xx, const Tensor& ww, const Tensor& bb) {
    eg::ENode ln;
    ln.op = eg::intern("apex_layer_norm");
    ln.attrs = eg::internAttrs(a);
    ln.children = {0, 1, 2};
    return *evaluate(ln, {Value::of(xx), Value::of(ww), Value::of(bb)});
  };
  auto loss = [&](const Tensor& xx, const Tensor& ww, const Tensor& bb) {
    Tensor y = forward(xx, ww, bb).items[0];
    double l = 0;
    for (size_t i = 0; i < y.data.size(); ++i) l += grad.data[i] * y.data[i];
    return l;
  };
  Value stats = forward(x, w, b);
  eg::ENode bwd;
  bwd.op = eg::intern("apex_layer_norm_bwd");
  bwd.attrs = eg::internAttrs(a);
  bwd.children = {0, 1, 2, 3, 4, 5};
  auto d = evaluate(bwd, {Value::of(grad), Value::of(stats.items[1]), Value::of(stats.items[2]), Value::of(x),
                          Value::of(w), Value::of(b)});
  ASSERT_TRUE(d && d->items.size() == 3);
  double h = 1e-6;
  auto numeric = [&](Tensor& t, size_t i) {
    double keep = t.data[i];
    t.data[i] = keep + h;
    double up = loss(x, w, b);
    t.data[i] = keep - h;
    double down = loss(x, w, b);
    t.data[i] = keep;
    return (up - down) / (2 * h);
  };
  for (size_t i = 0; i < 6; ++i) EXPECT_NEAR(d->items[0].data[i], numeric(x, i), 1e-5) << "dx " << i;
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(d->items[1].data[i], numeric(w, i), 1e-5) << "dw " << i;
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(d->items[2].data[i], numeric(b, i), 1e-5) << "db " << i;
}

TEST(Interp, UnknownOpsAndLeaves) {
  EXPECT_FALSE(eval("tensor", {Attr::str("S.x")}, {}));
  EXPECT_FALSE(eval("aten.native_dropout.default", {}, {iota({2})}));
  EXPECT_FALSE(ops::hasKernel(eg::intern("aten.native_dropout.default")));
  EXPECT_TRUE(ops::hasKernel(eg::intern("softmax")));
}

TEST(Interp, GatherOffsets) {
  eg::ENode n;
  n.op = eg::intern("concat");
  n.attrs = eg::internAttrs({I(1)});
  n.children = {0, 1};
  auto g = gatherOf(n, {{2, 1}, {2, 2}});
  ASSERT_TRUE(g);
  EXPECT_EQ(g->shape, (Shape{2, 3}));
  EXPECT_EQ(g->child, (std::vector<uint32_t>{0, 1, 1, 0, 1, 1}));
  EXPECT_EQ(g->offset, (std::vector<int64_t>{0, 0, 1, 1, 2, 3}));
}

}  // namespace
}  // namespace tangle::interp
