// Instance builders for the lemmas of src/lemmas/arange.cpp whose left-hand
// side the generic generator does not build: aranges (no operands, bounds as
// attributes), scalar constants of chosen values, and reshapes that add
// leading unit dims. Near misses are built too (the guards must refuse them).
#include "validate/generate.h"

namespace tangle::validate {

using eg::Attr;

namespace {

std::optional<eg::Id> range(Gen& gen, int64_t a, int64_t b, int64_t s) {
  return gen.node("arange", {Attr::integer(a), Attr::integer(b), Attr::integer(s)}, {});
}

}  // namespace

// arange(a, b, s) next to a longer arange(A, B, s') (sometimes misaligned or of another step).
std::optional<eg::Id> arangeSubrange(Gen& gen) {
  int64_t s = gen.uniform(1, 3), big0 = gen.uniform(-4, 4), n = gen.uniform(4, 12);
  if (!range(gen, big0, big0 + n * s, gen.chance(0.8) ? s : s + 1)) return std::nullopt;
  int64_t i = gen.uniform(0, n - 1), k = gen.uniform(1, n - i);
  int64_t a = big0 + i * s + (gen.chance(0.8) ? 0 : 1);
  return range(gen, a, a + k * s - gen.uniform(0, s - 1), s);
}

// arange(a, b, s) +/- c (either side), c an integer or not, a literal (no
// dtype) or a 0-d tensor of a dtype: i64, or f32 holding an integral value
// (the sum is then f32: a lemma ignoring dtypes merges it with an i64 range).
Builder arangeShifted(const std::string& op, bool constOnLeft) {
  return [op, constOnLeft](Gen& gen) -> std::optional<eg::Id> {
    int64_t a = gen.uniform(-5, 5), s = gen.uniform(1, 3);
    auto r = range(gen, a, a + gen.uniform(1, 8) * s, s);
    if (!r) return std::nullopt;
    eg::Id c = gen.constant(gen.chance(0.8) ? static_cast<double>(gen.uniform(-6, 6)) : 0.5);
    int64_t kind = gen.uniform(0, 3);
    if (kind >= 2) {
      auto typed = gen.node("cast", {Attr::str(kind == 2 ? "i64" : "f32")}, {c});
      if (!typed) return std::nullopt;
      c = *typed;
    }
    return constOnLeft ? gen.node(op, {}, {c, *r}) : gen.node(op, {}, {*r, c});
  };
}

// op(x, e) or op(e, x) for op's identity e (sometimes another constant, a
// typed e that changes x's dtype, or x broadcast up by a wider operand).
Builder identityOp(const std::string& op, double e, bool constOnLeft) {
  return [op, e, constOnLeft](Gen& gen) -> std::optional<eg::Id> {
    Shape xs = {gen.size(), gen.size()};
    bool integer = gen.chance(0.3);
    eg::Id x = integer ? gen.intLeaf(xs, -5, 6) : gen.leaf(xs);
    eg::Id c = gen.constant(gen.chance(0.8) ? e : e + 2);
    if (gen.chance(0.3)) {
      auto typed = gen.node("cast", {Attr::str(gen.chance(0.5) ? "f32" : "i64")}, {c});
      if (!typed) return std::nullopt;
      c = *typed;
    }
    if (gen.chance(0.1)) c = gen.leaf({gen.size(), 1, 1});
    return constOnLeft ? gen.node(op, {}, {c, x}) : gen.node(op, {}, {x, c});
  };
}

// op(a, reshape[[1]*k ++ shape(b)](b)) (either side) with a of rank >= the
// reshape's, or (a near miss) of a lower rank.
Builder broadcastUnitLead(const std::string& op, bool onLeft) {
  return [op, onLeft](Gen& gen) -> std::optional<eg::Id> {
    Shape bs = {gen.size()};
    if (gen.chance(0.5)) bs.push_back(gen.size());
    Shape ys(static_cast<size_t>(gen.uniform(1, 2)), 1);
    ys.insert(ys.end(), bs.begin(), bs.end());
    auto y = gen.node("reshape", {Attr::ints(ys)}, {gen.leaf(bs)});
    if (!y) return std::nullopt;
    Shape as = ys;
    for (auto& d : as) d = d == 1 && gen.chance(0.5) ? gen.size() : d;
    if (gen.chance(0.2)) as.erase(as.begin());  // lower rank: must be refused
    if (gen.chance(0.3)) as.insert(as.begin(), gen.size());
    eg::Id a = gen.leaf(as);
    return onLeft ? gen.node(op, {}, {*y, a}) : gen.node(op, {}, {a, *y});
  };
}

// op(.., cast[dt](const c), ..) with the typed constant at operand `pos`:
// values a dtype holds or not (0.5 in i64, 2^24 + 1 in f32), and operands of
// either dtype (an f32 constant next to an i64 tensor makes the result f32,
// unlike the literal: the rule must refuse it).
Builder untypeConst(const std::string& op, size_t arity, size_t pos) {
  return [op, arity, pos](Gen& gen) -> std::optional<eg::Id> {
    static const double kValues[] = {0, 1, 2, -3, 0.5, 16777217.0};
    static const char* kTypes[] = {"f32", "i64", "f64", "i32"};
    eg::Id c = gen.constant(kValues[gen.uniform(0, 5)]);
    auto k = gen.node("cast", {Attr::str(kTypes[gen.uniform(0, 3)])}, {c});
    if (!k) return std::nullopt;
    Shape xs = {gen.size(), gen.size()};
    std::vector<eg::Id> children;
    for (size_t i = 0; i < arity; ++i) {
      if (i == pos) children.push_back(*k);
      else if (op == "where" && i == 0) {
        auto cond = gen.node("lt", {}, {gen.leaf(xs), gen.leaf(xs)});
        if (!cond) return std::nullopt;
        children.push_back(*cond);
      } else children.push_back(gen.chance(0.4) ? gen.intLeaf(xs, -5, 6) : gen.leaf(xs));
    }
    return gen.node(op, {}, children);
  };
}

}  // namespace tangle::validate
