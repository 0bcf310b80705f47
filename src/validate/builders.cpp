// Hand-written instance builders for the lemmas the generic generator of
// generate.cpp cannot reach on its own (left-hand sides whose guard needs a
// specific structure between several operands).
#include <map>

#include "validate/generate.h"

namespace tangle::validate {

namespace {

using eg::Attr;

// where(m, 0, reshape[T](gather_rows(concat[1](x_r), reshape[[N]](where(m, 0, t - a))))),
// m = t < a | t >= b, b - a = the concat's width; t integral around [a, b).
std::optional<eg::Id> vocabParallelGather(Gen& gen) {
  Shape t = gen.chance(0.5) ? Shape{gen.size()} : Shape{gen.size(), gen.size()};
  int64_t n = 1;
  for (int64_t d : t) n *= d;
  std::vector<eg::Id> xs;
  int64_t width = 0;
  for (int64_t i = 0, k = gen.uniform(2, 3); i < k; ++i) {
    int64_t v = gen.size();
    width += v;
    xs.push_back(gen.leaf({n, v}));
  }
  int64_t a = gen.uniform(0, 3), b = a + width;
  eg::Id target = gen.intLeaf(t, a - 2, b + 2);
  eg::Id ca = gen.constant(static_cast<double>(a)), cb = gen.constant(static_cast<double>(b)), zero = gen.constant(0);
  auto lt = gen.node("lt", {}, {target, ca});
  auto ge = gen.node("ge", {}, {target, cb});
  auto m = lt && ge ? gen.node("or", {}, {*lt, *ge}) : std::nullopt;
  auto shifted = gen.node("sub", {}, {target, ca});
  auto local = m && shifted ? gen.node("where", {}, {*m, zero, *shifted}) : std::nullopt;
  auto flat = local ? gen.node("reshape", {Attr::ints({n})}, {*local}) : std::nullopt;
  auto cat = gen.node("concat", {Attr::integer(1)}, xs);
  auto picked = flat && cat ? gen.node("gather_rows", {}, {*cat, *flat}) : std::nullopt;
  auto shaped = picked ? gen.node("reshape", {Attr::ints(t)}, {*picked}) : std::nullopt;
  return shaped ? gen.node("where", {}, {*m, zero, *shaped}) : std::nullopt;
}

const std::map<std::string, Builder>& builders() {
  static const std::map<std::string, Builder> m = {
      {"vocab-parallel-gather", vocabParallelGather},
  };
  return m;
}

}  // namespace

const Builder* builderFor(const std::string& lemma) {
  auto it = builders().find(lemma);
  return it == builders().end() ? nullptr : &it->second;
}

}  // namespace tangle::validate
