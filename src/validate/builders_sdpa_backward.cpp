// Instance builders for the ring-backward lemmas (src/lemmas/sdpa_backward_ring.cpp):
// sdpa_backward with q split into row blocks and k into key blocks along the
// sequence (one block: not a concat at all, as a ring step's operand); dO,
// out, lse and v split alike or now and then whole (the lemma slices them).
// The mask is absent, broadcast over the keys, or (now and then) varies along
// the keys, which the lemmas must decline; the causal builder mostly splits
// rows and keys alike and now and then not. And the backward sums' ordering
// rules (src/lemmas/sdpa_backward_sum.cpp), whose guards want terms whose
// e-classes sort in the opposite order to the one they are added in.
#include <numeric>

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
    // blocks of `ls` (one block: a leaf, no concat); `mayBeWhole`: now and then one leaf of the total length
    auto cat = [&](const std::vector<int64_t>& ls, bool lse, bool mayBeWhole) -> std::optional<eg::Id> {
      std::vector<int64_t> pieces = ls;
      if (mayBeWhole && gen.chance(0.3)) pieces = {std::accumulate(ls.begin(), ls.end(), int64_t{0})};
      std::vector<eg::Id> ps;
      for (int64_t len : pieces) ps.push_back(lse ? gen.leaf({B, H, len}) : gen.leaf({B, H, len, E}));
      return ps.size() == 1 ? std::optional<eg::Id>(ps[0]) : gen.node("concat", {Attr::integer(2)}, ps);
    };
    auto dO = cat(rows, false, true), q = cat(rows, false, false), o = cat(rows, false, true);
    auto l = cat(rows, true, true), k = cat(keys, false, false), v = cat(keys, false, true);
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

namespace {

// getitem[i](sdpa_backward(..)) over fresh leaves, [B, H, L, E] whichever item (rows and keys of one length).
std::optional<eg::Id> backwardTerm(Gen& gen, const Shape& x) {
  Shape lse(x.begin(), x.end() - 1);
  auto r = gen.node("sdpa_backward", {Attr::boolean(gen.chance(0.5)), Attr::real(0.5)},
                    {gen.leaf(x), gen.leaf(x), gen.leaf(x), gen.leaf(x), gen.leaf(x), gen.leaf(lse), gen.constant(0)});
  return r ? gen.node("getitem", {Attr::integer(gen.uniform(0, 2))}, {*r}) : std::nullopt;
}

}  // namespace

Builder backwardSumOutOfOrder(int which) {
  return [which](Gen& gen) -> std::optional<eg::Id> {
    Shape x = {gen.uniform(1, 2), gen.uniform(1, 2), gen.uniform(1, 3), gen.uniform(1, 3)};
    auto second = backwardTerm(gen, x);  // made first: sorts before the term added before it
    auto first = backwardTerm(gen, x);
    auto third = backwardTerm(gen, x);
    if (!second || !first || !third) return std::nullopt;
    if (which == 0) {  // add(x, add(a, b)), x itself a sum now and then
      auto xs = gen.chance(0.5) ? gen.node("add", {}, {*third, *first}) : third;
      auto ab = gen.node("add", {}, {*first, *second});
      return xs && ab ? gen.node("add", {}, {*xs, *ab}) : std::nullopt;
    }
    if (which == 1) {  // add(add(p, x), y), y sorting before x
      auto px = gen.node("add", {}, {*third, *first});
      return px ? gen.node("add", {}, {*px, *second}) : std::nullopt;
    }
    return gen.node("add", {}, {*first, *second});
  };
}

}  // namespace tangle::validate
