// The sdpa kernels against ATen's CPU flash attention: the expected values
// were computed with torch 2.13 (float64) from the same inputs, by
// torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(_backward).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "interp/interp.h"
#include "ops/ops.h"

namespace tangle::interp {
namespace {

using eg::Attr;

std::optional<Value> eval(const std::string& op, eg::AttrList attrs, std::vector<Tensor> xs) {
  eg::ENode n;
  n.op = eg::intern(op);
  n.attrs = eg::internAttrs(attrs);
  std::vector<Value> in;
  for (size_t i = 0; i < xs.size(); ++i) {
    n.children.push_back(static_cast<eg::Id>(i));
    in.push_back(Value::of(std::move(xs[i])));
  }
  return ops::evaluate(n, in);
}
Tensor fill(Shape s, const std::function<double(double)>& f) {
  Tensor t = Tensor::filled(s, 0);
  for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = f(static_cast<double>(i));
  return t;
}
void expectNear(const Tensor& t, const std::vector<double>& want) {
  ASSERT_EQ(t.data.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(t.data[i], want[i], 1e-10) << "element " << i;
}

// q [1, 2, 3, 2] against one kv head (grouped-query), k and v [1, 1, 4, 2].
struct Inputs3 {
  Tensor q = fill({1, 2, 3, 2}, [](double i) { return std::sin(0.7 * i); });
  Tensor k = fill({1, 1, 4, 2}, [](double i) { return std::cos(0.3 * i + 1); });
  Tensor v = fill({1, 1, 4, 2}, [](double i) { return 0.1 * i - 0.5; });
  Tensor go = fill({1, 2, 3, 2}, [](double i) { return std::cos(0.5 * i); });
};

TEST(SdpaKernel, MaskedGroupedQueryMatchesATen) {
  Inputs3 x;
  Tensor mask = fill({3, 4}, [](double i) { return 0.05 * i; });
  auto r = eval("sdpa", {Attr::boolean(false), Attr::real(0.7)}, {x.q, x.k, x.v, mask});
  ASSERT_TRUE(r && r->tuple && r->items.size() == 2);
  expectNear(r->items[0], {-0.236703749699, -0.136703749699, -0.335289590999, -0.235289590999, -0.190682603252,
                           -0.0906826032516, -0.0642384965769, 0.0357615034231, -0.135905831803, -0.0359058318025,
                           -0.318766531729, -0.218766531729});
  expectNear(r->items[1], {1.26619571703, 1.405754974, 1.91640240239, 2.17300348015, 1.81186688299, 1.57368501097});
  auto b = eval("sdpa_backward", {Attr::boolean(false), Attr::real(0.7)},
                {x.go, x.q, x.k, x.v, r->items[0], r->items[1], mask});
  ASSERT_TRUE(b && b->tuple && b->items.size() == 3);
  expectNear(b->items[0], {-0.168825963374, -0.14608497632, -0.0450347401053, -0.0403013182355, 0.105235683637,
                           0.0895739039453, 0.108835571713, 0.0863741402712, 0.0684990860844, 0.0569751342283,
                           -0.0779270799471, -0.0692998402297});
  expectNear(b->items[1], {-0.111138884544, -0.221630108717, -0.0417152631047, -0.0623966294967, 0.0125230672668,
                           0.0514883757357, 0.140331080382, 0.232538362478});
  expectNear(b->items[2], {0.46188880077, 0.369386866162, 0.0737922816274, 0.0386217977348, -0.268650556084,
                           -0.252229285048, -0.502848988993, -0.447185943268});
}

TEST(SdpaKernel, CausalMatchesATen) {
  Inputs3 x;
  Tensor none = Tensor::filled({}, 0);
  eg::AttrList a = {Attr::boolean(true), Attr::real(1 / std::sqrt(2.0))};
  auto r = eval("sdpa", a, {x.q, x.k, x.v, none});
  ASSERT_TRUE(r && r->tuple);
  expectNear(r->items[0], {-0.5, -0.4, -0.436159767361, -0.336159767361, -0.300153674467, -0.200153674467, -0.5, -0.4,
                           -0.38770323941, -0.28770323941, -0.380457228877, -0.280457228877});
  expectNear(r->items[1], {0.12185392737, 0.924257138425, 1.16337145693, -0.518817908519, 0.586362565532,
                           1.01927611769});
  auto b = eval("sdpa_backward", a, {x.go, x.q, x.k, x.v, r->items[0], r->items[1], none});
  ASSERT_TRUE(b && b->tuple);
  expectNear(b->items[0], {0, 0, -0.0106945540995, -0.0110942900345, 0.0644980944969, 0.0610628848545, 0, 0,
                           0.0171422393889, 0.017782973825, -0.0439742597722, -0.0424585801544});
  expectNear(b->items[1], {-0.0491722638356, -0.0821010748089, 0.0480262325614, 0.0315639123855, 0.00114603127415,
                           0.0505371624235, 0, 0});
  expectNear(b->items[2], {0.11153482468, 0.0268755587174, -0.253883130947, -0.163838920408, -0.0934701564124,
                           -0.154443202729, 0, 0});
}

TEST(SdpaKernel, FullyMaskedRowGivesZeros) {
  Tensor q = fill({1, 1, 2, 1}, [](double i) { return i + 1; }), k = fill({1, 1, 2, 1}, [](double i) { return i; });
  Tensor mask = Tensor::of({2, 2}, {-INFINITY, -INFINITY, 0, 0});
  auto r = eval("sdpa", {Attr::boolean(false), Attr::real(1)}, {q, k, k, mask});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->items[0].data[0], 0);
  EXPECT_EQ(r->items[1].data[0], 0);
  EXPECT_GT(r->items[1].data[1], 0);
}

TEST(SdpaKernel, SafeSoftmaxZeroesFullyMaskedRows) {
  Tensor x = Tensor::of({2, 2}, {-INFINITY, -INFINITY, 0, std::log(3.0)});
  auto r = eval("safe_softmax", {Attr::integer(1), Attr::boolean(false)}, {x});
  ASSERT_TRUE(r && r->tensor());
  expectNear(*r->tensor(), {0, 0, 0.25, 0.75});
  auto plain = eval("softmax", {Attr::integer(1), Attr::boolean(false)}, {x});
  ASSERT_TRUE(plain && plain->tensor());
  EXPECT_TRUE(std::isnan(plain->tensor()->data[0]));  // what _safe_softmax guards against
}

TEST(SdpaKernel, RefusesMisfits) {
  Inputs3 x;
  Tensor none = Tensor::filled({}, 0);
  eg::AttrList a = {Attr::boolean(false), Attr::real(1)};
  auto wave = [](double i) { return std::sin(i); };
  EXPECT_FALSE(eval("sdpa", a, {x.q, x.k, x.v}));                                 // no mask operand
  EXPECT_FALSE(eval("sdpa", a, {x.q, fill({1, 3, 4, 2}, wave), x.v, none}));        // 3 kv heads for 2 query heads
  EXPECT_FALSE(eval("sdpa", a, {x.q, x.k, x.v, fill({2, 4}, wave)}));               // mask rows != L
  EXPECT_FALSE(eval("sdpa", {Attr::boolean(false)}, {x.q, x.k, x.v, none}));      // no scale
}

}  // namespace
}  // namespace tangle::interp
