// Instance builders for the zero-padding lemmas (src/lemmas/zeros.cpp): the
// operands hold pieces that are expand(0) splats, as `zero` statements give.
#include "validate/generate.h"

namespace tangle::validate {

using eg::Attr;

namespace {

std::optional<eg::Id> zeros(Gen& gen, const Shape& s) {
  return gen.node("expand", {Attr::ints(s)}, {gen.constant(0)});
}

// A leaf or zeros of shape s (zeros with probability p).
std::optional<eg::Id> maybeZeros(Gen& gen, const Shape& s, double p) {
  return gen.chance(p) ? zeros(gen, s) : std::optional<eg::Id>(gen.leaf(s));
}

// concat along d of 2-3 pieces, at least one of them zeros when `withZeros`.
std::optional<eg::Id> paddedConcat(Gen& gen, Shape s, int64_t d, bool withZeros) {
  int64_t n = gen.uniform(2, 3), zeroAt = withZeros ? gen.uniform(0, n - 1) : -1;
  std::vector<eg::Id> xs;
  for (int64_t i = 0; i < n; ++i) {
    s[d] = gen.uniform(1, 3);
    auto x = i == zeroAt ? zeros(gen, s) : maybeZeros(gen, s, 0.2);
    if (!x) return std::nullopt;
    xs.push_back(*x);
  }
  return gen.node("concat", {Attr::integer(d)}, xs);
}

}  // namespace

Builder productWithZeros(bool batched, int which) {
  return [batched, which](Gen& gen) -> std::optional<eg::Id> {
    int64_t b = gen.uniform(1, 2), n = gen.size(), k = gen.size(), m = gen.size();
    Shape sa = batched ? Shape{b, n, k} : Shape{n, k}, sb = batched ? Shape{b, k, m} : Shape{k, m};
    std::string op = batched ? "bmm" : "mm";
    int64_t kd = batched ? 2 : 1;
    std::optional<eg::Id> a, c;
    if (which == 0) {  // one operand all zeros
      bool left = gen.chance(0.5);
      a = left ? zeros(gen, sa) : std::optional<eg::Id>(gen.leaf(sa));
      c = left ? std::optional<eg::Id>(gen.leaf(sb)) : zeros(gen, sb);
    } else if (which == 1) {  // rhs split along the contracted dim
      a = gen.leaf(sa);
      c = paddedConcat(gen, sb, kd - 1, gen.chance(0.8));
      if (c) {
        sa[kd] = gen.shapeOf(*c)->at(kd - 1);
        a = gen.leaf(sa);
      }
    } else {  // lhs split along the contracted dim
      a = paddedConcat(gen, sa, kd, gen.chance(0.8));
      if (a) {
        sb[kd - 1] = gen.shapeOf(*a)->at(kd);
        c = gen.leaf(sb);
      }
    }
    if (!a || !c) return std::nullopt;
    return gen.node(op, {}, {*a, *c});
  };
}

std::optional<eg::Id> sumWithZeros(Gen& gen) {
  Shape s = gen.randomShape();
  std::vector<eg::Id> xs;
  for (int64_t i = 0, n = gen.uniform(2, 4); i < n; ++i) {
    auto x = maybeZeros(gen, s, 0.4);
    if (!x) return std::nullopt;
    xs.push_back(*x);
  }
  return gen.node("sum", {}, xs);
}

}  // namespace tangle::validate
