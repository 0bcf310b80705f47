// Instance builder for concat-regroup (src/lemmas/rearrange.cpp): a concat of
// 3-5 pieces whose run [i, j) are the slices tiling an implementation tensor
// y, with y = concat(those slices) known (merged), as after exploring the
// rank's own concat; sometimes the run is out of order in the big concat, or
// the big concat is along another dim (nothing to regroup).
#include "validate/generate.h"

namespace tangle::validate {

std::optional<eg::Id> concatNextToItsRun(Gen& gen) {
  int64_t d = gen.uniform(0, 1), n = gen.uniform(3, 5), other = gen.uniform(1, 3);
  int64_t i = gen.uniform(0, n - 2), j = gen.uniform(i + 2, i == 0 ? n - 1 : n);
  if (j < i + 2) return std::nullopt;
  auto shape = [&](int64_t len) { return d == 0 ? Shape{len, other} : Shape{other, len}; };
  std::vector<int64_t> lens;
  int64_t runLen = 0;
  for (int64_t k = 0; k < n; ++k) {
    lens.push_back(gen.uniform(1, 3));
    if (k >= i && k < j) runLen += lens.back();
  }
  eg::ClassData data;
  data.types.push_back(TensorType{DType::F32, shape(runLen)});
  eg::Id y = gen.graph().leaf("D0.y", Owner::impl(0), data);
  std::vector<eg::Id> xs, run;
  for (int64_t k = 0, off = 0; k < n; ++k) {
    if (k < i || k >= j) {
      xs.push_back(gen.leaf(shape(lens[static_cast<size_t>(k)])));
      continue;
    }
    int64_t end = off + lens[static_cast<size_t>(k)];
    auto s = gen.node("slice", {eg::Attr::integer(d), eg::Attr::dim(off), eg::Attr::dim(end), eg::Attr::integer(1)}, {y});
    if (!s) return std::nullopt;
    xs.push_back(*s);
    run.push_back(*s);
    off = end;
  }
  auto tiled = gen.node("concat", {eg::Attr::integer(d)}, run);
  if (!tiled) return std::nullopt;
  gen.graph().merge(y, *tiled);
  gen.graph().rebuild();
  if (gen.chance(0.15)) std::swap(xs[static_cast<size_t>(i)], xs[static_cast<size_t>(j - 1)]);
  int64_t along = gen.chance(0.1) ? 1 - d : d;
  if (along != d) return gen.node("concat", {eg::Attr::integer(along)}, {*tiled, *tiled});
  return gen.node("concat", {eg::Attr::integer(d)}, xs);
}

}  // namespace tangle::validate

namespace tangle::validate {

// concat-drop-empty: a concat of 2-5 pieces along dim 0 or 1, some of them of size 0 there.
std::optional<eg::Id> concatWithEmptyPieces(Gen& gen) {
  int64_t d = gen.uniform(0, 1), n = gen.uniform(2, 5), other = gen.uniform(1, 3);
  std::vector<eg::Id> xs;
  bool empty = false, full = false;
  for (int64_t k = 0; k < n; ++k) {
    int64_t len = gen.chance(0.4) ? 0 : gen.uniform(1, 3);
    empty = empty || len == 0;
    full = full || len > 0;
    xs.push_back(gen.leaf(d == 0 ? Shape{len, other} : Shape{other, len}));
  }
  if (!empty || !full) return std::nullopt;
  return gen.node("concat", {eg::Attr::integer(d)}, xs);
}

}  // namespace tangle::validate
