// The mask-construction kernels (src/interp/mask_ops.cpp) through their op records,
// on the values transformers' masking_utils builds.
#include "interp/interp.h"
#include "ops/ops.h"

#include <gtest/gtest.h>

namespace tangle::interp {
namespace {

using eg::Attr;

std::optional<Value> eval(const char* op, eg::AttrList attrs, std::vector<Tensor> xs) {
  eg::ENode n;
  n.op = eg::intern(op);
  n.attrs = eg::internAttrs(std::move(attrs));
  Inputs in;
  for (auto& x : xs) {
    n.children.push_back(0);
    in.push_back(Value::of(std::move(x)));
  }
  return ops::evaluate(n, in);
}

TEST(MaskOps, Arange) {
  auto a = eval("arange", {Attr::integer(0), Attr::integer(5), Attr::integer(1)}, {});
  ASSERT_TRUE(a);
  EXPECT_EQ(a->items[0], Tensor::of({5}, {0, 1, 2, 3, 4}));
  auto b = eval("arange", {Attr::integer(5), Attr::integer(0), Attr::integer(-2)}, {});
  ASSERT_TRUE(b);
  EXPECT_EQ(b->items[0], Tensor::of({3}, {5, 3, 1}));
  auto e = eval("arange", {Attr::integer(3), Attr::integer(1), Attr::integer(1)}, {});
  ASSERT_TRUE(e);
  EXPECT_EQ(e->items[0].shape, Shape{0});
  EXPECT_FALSE(eval("arange", {Attr::integer(0), Attr::integer(3), Attr::integer(0)}, {}));
}

TEST(MaskOps, CumsumAlongEitherDim) {
  auto last = eval("cumsum", {Attr::integer(1)}, {Tensor::of({2, 3}, {1, 0, 1, 0, 1, 1})});
  ASSERT_TRUE(last);
  EXPECT_EQ(last->items[0], Tensor::of({2, 3}, {1, 1, 2, 0, 1, 2}));
  auto first = eval("cumsum", {Attr::integer(0)}, {Tensor::of({2, 3}, {1, 2, 3, 4, 5, 6})});
  ASSERT_TRUE(first);
  EXPECT_EQ(first->items[0], Tensor::of({2, 3}, {1, 2, 3, 5, 7, 9}));
  EXPECT_FALSE(eval("cumsum", {Attr::integer(2)}, {Tensor::of({2, 3}, {1, 2, 3, 4, 5, 6})}));
}

TEST(MaskOps, IndexWithBroadcastIndices) {
  // x[b, q] with b [1, 1] and q [3, 1]: rows of the single batch, as masking_utils indexes cumsum.
  Tensor x = Tensor::of({1, 3}, {10, 20, 30});
  auto v = eval("index_nd", {}, {x, Tensor::of({1, 1}, {0}), Tensor::of({3, 1}, {2, 0, 1})});
  ASSERT_TRUE(v);
  EXPECT_EQ(v->items[0], Tensor::of({3, 1}, {30, 10, 20}));
  // One index on a 2-D x keeps the trailing dim.
  auto rows = eval("index_nd", {}, {Tensor::of({2, 2}, {1, 2, 3, 4}), Tensor::of({3}, {1, 1, 0})});
  ASSERT_TRUE(rows);
  EXPECT_EQ(rows->items[0], Tensor::of({3, 2}, {3, 4, 3, 4, 1, 2}));
  EXPECT_FALSE(eval("index_nd", {}, {x, Tensor::of({1}, {0}), Tensor::of({1}, {3})}));  // out of range
  EXPECT_FALSE(eval("index_nd", {}, {x, Tensor::of({2}, {0, 0}), Tensor::of({3}, {0, 1, 2})}));  // no broadcast
}

}  // namespace
}  // namespace tangle::interp
