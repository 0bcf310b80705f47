// Instance builders for the sdpa lemmas (src/lemmas/sdpa.cpp): q, k, v (and
// for the backward dO, out, lse) split into pieces along the batch or the
// heads, each piece keeping a common query/kv head grouping, with a mask that
// is absent, broadcast, or full (whole or split alike).
#include "validate/generate.h"

namespace tangle::validate {

using eg::Attr;

Builder sdpaOfPieces(bool backward, int64_t d) {
  return [backward, d](Gen& gen) -> std::optional<eg::Id> {
    int64_t B = gen.uniform(1, 2), L = gen.uniform(1, 3), S = gen.uniform(1, 3), E = gen.uniform(1, 3);
    int64_t group = gen.uniform(1, 2), kv = gen.uniform(1, 2), n = gen.uniform(2, 3);
    std::vector<int64_t> along;  // batch (d = 0) or kv heads (d = 1) per piece
    for (int64_t j = 0; j < n; ++j) along.push_back(gen.uniform(1, 2));
    int64_t total = 0;
    for (int64_t a : along) total += a;
    int64_t Bt = d == 0 ? total : B, Ht = group * (d == 1 ? total : kv);
    std::vector<eg::Id> gs, qs, ks, vs, os, ls, ms;
    bool splitMask = gen.chance(0.3);
    for (int64_t a : along) {
      int64_t b = d == 0 ? a : B, hk = d == 1 ? a : kv;
      Shape q = {b, group * hk, L, E}, k = {b, hk, S, E};
      qs.push_back(gen.leaf(q));
      ks.push_back(gen.leaf(k));
      vs.push_back(gen.leaf(k));
      gs.push_back(gen.leaf(q));
      os.push_back(gen.leaf(q));
      ls.push_back(gen.leaf({b, group * hk, L}));
      ms.push_back(gen.leaf({b, group * hk, L, S}));
    }
    eg::Id mask;
    if (splitMask) {
      auto m = gen.node("concat", {Attr::integer(d)}, ms);
      if (!m) return std::nullopt;
      mask = *m;
    } else {
      const Shape shapes[] = {{L, S}, {1, 1, L, S}, {Bt, 1, L, S}, {1, Ht, L, S}, {Bt, Ht, L, S}};
      int64_t pick = gen.uniform(0, 5);
      mask = pick == 5 ? gen.constant(0) : gen.leaf(shapes[pick]);
    }
    auto cat = [&](const std::vector<eg::Id>& xs) { return gen.node("concat", {Attr::integer(d)}, xs); };
    eg::AttrList a = {Attr::boolean(gen.chance(0.5)), Attr::real(0.25 * static_cast<double>(gen.uniform(1, 6)))};
    std::optional<eg::Id> r;
    if (backward) {
      auto g = cat(gs), q = cat(qs), k = cat(ks), v = cat(vs), o = cat(os), l = cat(ls);
      if (!g || !q || !k || !v || !o || !l) return std::nullopt;
      r = gen.node("sdpa_backward", a, {*g, *q, *k, *v, *o, *l, mask});
    } else {
      auto q = cat(qs), k = cat(ks), v = cat(vs);
      if (!q || !k || !v) return std::nullopt;
      r = gen.node("sdpa", a, {*q, *k, *v, mask});
    }
    if (!r) return std::nullopt;
    return gen.node("getitem", {Attr::integer(gen.uniform(0, backward ? 2 : 1))}, {*r});
  };
}

// Query rows (keys = false) or key/value blocks (keys = true) split along the
// sequence into 2-4 pieces; the mask absent, broadcast, full, or split alike;
// causal now and then (the lemmas must decline it).
Builder sdpaOfSequenceBlocks(bool keys) {
  return [keys](Gen& gen) -> std::optional<eg::Id> {
    int64_t B = gen.uniform(1, 2), H = gen.uniform(1, 2), E = gen.uniform(1, 3), n = gen.uniform(2, 4);
    std::vector<int64_t> lens;
    int64_t total = 0;
    for (int64_t j = 0; j < n; ++j) total += lens.emplace_back(gen.uniform(1, 3));
    int64_t L = keys ? gen.uniform(1, 3) : total, S = keys ? total : gen.uniform(1, 3);
    auto split = [&](Shape s, int64_t d) -> std::optional<eg::Id> {
      std::vector<eg::Id> ps;
      for (int64_t len : lens) {
        s[d] = len;
        ps.push_back(gen.leaf(s));
      }
      return gen.node("concat", {Attr::integer(d)}, ps);
    };
    auto q = keys ? std::optional<eg::Id>(gen.leaf({B, H, L, E})) : split({B, H, L, E}, 2);
    auto k = keys ? split({B, H, S, E}, 2) : std::optional<eg::Id>(gen.leaf({B, H, S, E}));
    auto v = keys ? split({B, H, S, E}, 2) : std::optional<eg::Id>(gen.leaf({B, H, S, E}));
    if (!q || !k || !v) return std::nullopt;
    std::optional<eg::Id> mask;
    const Shape shapes[] = {{L, S}, {1, 1, L, S}, {B, 1, L, 1}, {1, H, 1, S}, {B, H, L, S}};
    int64_t pick = gen.uniform(0, 6);
    if (pick == 5) mask = gen.constant(0);
    else if (pick == 6) mask = split({B, H, L, S}, keys ? 3 : 2);
    else mask = gen.leaf(shapes[pick]);
    if (!mask) return std::nullopt;
    eg::AttrList a = {Attr::boolean(gen.chance(0.2)), Attr::real(0.25 * static_cast<double>(gen.uniform(1, 6)))};
    auto r = gen.node("sdpa", a, {*q, *k, *v, *mask});
    if (!r) return std::nullopt;
    return gen.node("getitem", {Attr::integer(gen.uniform(0, 1))}, {*r});
  };
}

std::optional<eg::Id> causalSdpaOfBlocks(Gen& gen) {
  int64_t B = gen.uniform(1, 2), H = gen.uniform(1, 2), E = gen.uniform(1, 3), n = gen.uniform(2, 4);
  std::vector<int64_t> lens, qlens;
  for (int64_t j = 0; j < n; ++j) lens.push_back(gen.uniform(1, 3));
  qlens = lens;
  if (gen.chance(0.2)) std::swap(qlens.front(), qlens.back());  // unequal blocks now and then: the lemma declines
  auto cat = [&](const std::vector<int64_t>& ls) -> std::optional<eg::Id> {
    std::vector<eg::Id> ps;
    for (int64_t len : ls) ps.push_back(gen.leaf({B, H, len, E}));
    return gen.node("concat", {Attr::integer(2)}, ps);
  };
  auto q = cat(qlens), k = cat(lens), v = cat(lens);
  if (!q || !k || !v) return std::nullopt;
  int64_t L = 0;
  for (int64_t len : qlens) L += len;
  const Shape shapes[] = {{L, 1}, {1, H, L, 1}, {B, H, 1, 1}};
  int64_t pick = gen.uniform(0, 3);
  eg::Id mask = pick == 3 ? gen.constant(0) : gen.leaf(shapes[pick]);
  eg::AttrList a = {Attr::boolean(gen.chance(0.8)), Attr::real(0.25 * static_cast<double>(gen.uniform(1, 6)))};
  auto r = gen.node("sdpa", a, {*q, *k, *v, mask});
  if (!r) return std::nullopt;
  return gen.node("getitem", {Attr::integer(gen.uniform(0, 1))}, {*r});
}

}  // namespace tangle::validate
