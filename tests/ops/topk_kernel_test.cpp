// The topk kernel (src/interp/topk.cpp) through its op record.
#include "interp/interp.h"
#include "ops/ops.h"

#include <gtest/gtest.h>

namespace tangle::interp {
namespace {

using eg::Attr;

std::optional<Value> topk(int64_t dim, int64_t k, bool largest, Tensor x) {
  eg::ENode n;
  n.op = eg::intern("topk");
  n.attrs = eg::internAttrs({Attr::integer(dim), Attr::integer(k), Attr::boolean(largest)});
  n.children = {0};
  return ops::evaluate(n, {Value::of(std::move(x))});
}

TEST(Topk, LargestAlongTheLastDimSortedWithIndices) {
  auto v = topk(1, 2, true, Tensor::of({2, 4}, {0.1, 0.7, 0.2, 0.9, 3, 1, 2, 0}));
  ASSERT_TRUE(v && v->tuple && v->items.size() == 2);
  EXPECT_EQ(v->items[0], Tensor::of({2, 2}, {0.9, 0.7, 3, 2}));
  EXPECT_EQ(v->items[1], Tensor::of({2, 2}, {3, 1, 0, 2}));
}

TEST(Topk, SmallestAlongDimZeroAndTiesToTheLowerIndex) {
  auto v = topk(0, 2, false, Tensor::of({3, 2}, {5, 1, 2, 1, 2, 0}));
  ASSERT_TRUE(v && v->items.size() == 2);
  EXPECT_EQ(v->items[0], Tensor::of({2, 2}, {2, 0, 2, 1}));
  EXPECT_EQ(v->items[1], Tensor::of({2, 2}, {1, 2, 2, 0}));
}

TEST(Topk, KLargerThanTheDimIsNoValue) { EXPECT_FALSE(topk(1, 3, true, Tensor::of({1, 2}, {1, 2}))); }

}  // namespace
}  // namespace tangle::interp
