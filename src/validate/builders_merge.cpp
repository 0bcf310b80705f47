// Instance builders for the online-softmax merge's ordering rules
// (src/lemmas/sdpa_merge.cpp): their guards apply them only when the second
// atom's e-class sorts before the first's, which the generic generator (that
// builds operands left to right) never produces. Here the later operand's
// leaves are made first.
#include "validate/generate.h"

namespace tangle::validate {

namespace {

struct Pair {
  eg::Id o, u;
};

std::optional<Pair> merged(Gen& gen, Pair a, Pair b) {
  auto d = gen.node("sub", {}, {b.u, a.u});
  auto w = d ? gen.node("sigmoid", {}, {*d}) : std::nullopt;
  auto diff = gen.node("sub", {}, {a.o, b.o});
  auto step = w && diff ? gen.node("mul", {}, {*w, *diff}) : std::nullopt;
  auto o = step ? gen.node("sub", {}, {a.o, *step}) : std::nullopt;
  auto du = gen.node("sub", {}, {a.u, b.u});
  auto ls = du ? gen.node("log_sigmoid", {}, {*du}) : std::nullopt;
  auto l0 = ls ? gen.node("getitem", {eg::Attr::integer(0)}, {*ls}) : std::nullopt;
  auto u = l0 ? gen.node("sub", {}, {a.u, *l0}) : std::nullopt;
  if (!o || !u) return std::nullopt;
  return Pair{*o, *u};
}

}  // namespace

Builder mergeOutOfOrder(bool lse, bool chain) {
  return [lse, chain](Gen& gen) -> std::optional<eg::Id> {
    int64_t B = gen.uniform(1, 2), H = gen.uniform(1, 2), L = gen.uniform(1, 3), E = gen.uniform(1, 3);
    auto pair = [&] { return Pair{gen.leaf({B, H, L, E}), gen.leaf({B, H, L, 1})}; };
    Pair second = pair(), first = pair();  // made first: sorts before
    std::optional<Pair> r;
    if (chain) {
      auto px = merged(gen, pair(), first);
      r = px ? merged(gen, *px, second) : std::nullopt;
    } else {
      r = merged(gen, first, second);
    }
    if (!r) return std::nullopt;
    return lse ? r->u : r->o;
  };
}

}  // namespace tangle::validate
