// Instance builders for the GQA lemmas (src/lemmas/gqa.cpp).
#include "validate/generate.h"

namespace tangle::validate {

using eg::Attr;

// concat[d](a_i) merged with concat[d](slice(x, d, ..)) where x = concat[d](a_i):
// the same value split into the same (or, sometimes, other) sizes.
std::optional<eg::Id> concatEqualPieces(Gen& gen) {
  Shape base = gen.randomShape();
  int64_t d = gen.uniform(0, static_cast<int64_t>(base.size()) - 1), n = gen.uniform(2, 3);
  std::vector<eg::Id> as;
  std::vector<int64_t> sizes;
  for (int64_t i = 0; i < n; ++i) {
    Shape s = base;
    s[d] = gen.uniform(1, 3);
    sizes.push_back(s[d]);
    as.push_back(gen.leaf(s));
  }
  auto x = gen.node("concat", {Attr::integer(d)}, as);
  if (!x) return std::nullopt;
  if (gen.chance(0.3)) std::swap(sizes.front(), sizes.back());  // maybe another split
  std::vector<eg::Id> bs;
  int64_t off = 0;
  for (int64_t s : sizes) {
    auto b = gen.node("slice", {Attr::integer(d), Attr::dim(off), Attr::dim(off + s), Attr::integer(1)}, {*x});
    if (!b) return std::nullopt;
    bs.push_back(*b);
    off += s;
  }
  auto y = gen.node("concat", {Attr::integer(d)}, bs);
  if (!y) return std::nullopt;
  gen.graph().merge(*x, *y);
  gen.graph().rebuild();
  return gen.graph().find(*x);
}

// getitem(sdpa(concat[1](q_j), k, v, m)): Hkv kv heads of G query heads each,
// the query heads split into blocks inside a group or covering whole groups;
// k/v whole or split per kv head; the mask absent, broadcast or full.
std::optional<eg::Id> sdpaOfSubgroups(Gen& gen) {
  int64_t B = gen.uniform(1, 2), L = gen.uniform(1, 3), S = gen.uniform(1, 3), E = gen.uniform(1, 2);
  int64_t hk = gen.uniform(1, 3), G = gen.uniform(2, 4), hq = hk * G;
  std::vector<int64_t> blocks;
  for (int64_t kv = 0; kv < hk;) {
    if (kv + 1 < hk && gen.chance(0.2)) {  // whole groups
      blocks.push_back(2 * G);
      kv += 2;
      continue;
    }
    for (int64_t left = G; left > 0;) {
      int64_t b = gen.uniform(1, left);
      blocks.push_back(b);
      left -= b;
    }
    ++kv;
  }
  std::vector<eg::Id> qs;
  for (int64_t b : blocks) qs.push_back(gen.leaf({B, b, L, E}));
  auto kvTensor = [&]() -> std::optional<eg::Id> {
    if (hk == 1 || gen.chance(0.5)) return gen.leaf({B, hk, S, E});
    std::vector<eg::Id> ps;
    for (int64_t i = 0; i < hk; ++i) ps.push_back(gen.leaf({B, 1, S, E}));
    return gen.node("concat", {Attr::integer(1)}, ps);
  };
  auto q = gen.node("concat", {Attr::integer(1)}, qs);
  auto k = kvTensor(), v = kvTensor();
  if (!q || !k || !v) return std::nullopt;
  const Shape shapes[] = {{L, S}, {1, 1, L, S}, {B, 1, L, S}, {1, hq, L, S}, {B, hq, L, S}};
  int64_t pick = gen.uniform(0, 5);
  eg::Id mask = pick == 5 ? gen.constant(0) : gen.leaf(shapes[pick]);
  eg::AttrList a = {Attr::boolean(gen.chance(0.5)), Attr::real(0.25 * static_cast<double>(gen.uniform(1, 6)))};
  auto r = gen.node("sdpa", a, {*q, *k, *v, mask});
  if (!r) return std::nullopt;
  return gen.node("getitem", {Attr::integer(gen.uniform(0, 1))}, {*r});
}

}  // namespace tangle::validate
