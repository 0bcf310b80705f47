// Instance builders for the ring-backward lemmas (src/lemmas/sdpa_backward_ring.cpp):
// sdpa_backward with dO, q, out, lse split into row blocks and k, v into key
// blocks along the sequence. The mask is absent, broadcast over the keys, or
// (now and then) varies along the keys, which the lemmas must decline; the
// causal builder mostly splits rows and keys alike and now and then not.
#include "validate/generate.h"

namespace tangle::validate {

using eg::Attr;

Builder sdpaBackwardOfBlocks(bool causal) {
  return [causal](Gen& gen) -> std::optional<eg::Id> {
    int64_t B = gen.uniform(1, 2), H = gen.uniform(1, 2), E = gen.uniform(1, 3);
    auto lengths = [&](int64_t n) {
      std::vector<int64_t> ls;
      for (int64_t j = 0; j < n; ++j) ls.push_back(gen.uniform(1, 3));
      return ls;
    };
    std::vector<int64_t> rows = lengths(gen.uniform(causal ? 2 : 1, 3)), keys;
    if (causal) {
      keys = rows;
      if (gen.chance(0.2)) std::swap(keys.front(), keys.back());  // unequal blocks now and then: the lemma declines
    } else {
      keys = lengths(gen.uniform(rows.size() == 1 ? 2 : 1, 3));
    }
    int64_t L = 0;
    for (int64_t len : rows) L += len;
    auto cat = [&](const std::vector<int64_t>& ls, bool lse) -> std::optional<eg::Id> {
      std::vector<eg::Id> ps;
      for (int64_t len : ls) ps.push_back(lse ? gen.leaf({B, H, len}) : gen.leaf({B, H, len, E}));
      return gen.node("concat", {Attr::integer(2)}, ps);
    };
    auto dO = cat(rows, false), q = cat(rows, false), o = cat(rows, false), l = cat(rows, true);
    auto k = cat(keys, false), v = cat(keys, false);
    if (!dO || !q || !o || !l || !k || !v) return std::nullopt;
    int64_t S = 0;
    for (int64_t len : keys) S += len;
    const Shape shapes[] = {{L, 1}, {1, H, L, 1}, {B, H, 1, 1}, {B, 1, L, 1}, {L, S}};  // the last varies by key
    int64_t pick = gen.uniform(0, 5);
    eg::Id mask = pick == 5 ? gen.constant(0) : gen.leaf(shapes[pick]);
    eg::AttrList a = {Attr::boolean(gen.chance(causal ? 0.8 : 0.2)),
                      Attr::real(0.25 * static_cast<double>(gen.uniform(1, 6)))};
    auto r = gen.node("sdpa_backward", a, {*dO, *q, *k, *v, *o, *l, mask});
    if (!r) return std::nullopt;
    return gen.node("getitem", {Attr::integer(gen.uniform(0, 2))}, {*r});
  };
}

}  // namespace tangle::validate
