// Instance builders for the lemmas of src/lemmas/rotary.cpp whose left-hand
// side the generic generator rarely types: operands whose unit dims come from
// a reshape (another framework's layout).
#include "validate/generate.h"

namespace tangle::validate {

namespace {

Shape withLead(size_t k, const Shape& s) {
  Shape out(k, 1);
  out.insert(out.end(), s.begin(), s.end());
  return out;
}

}  // namespace

// op(reshape[[1] ++ S](x), y): y of shape [1] ++ T (T = S, or S with some
// dims 1), or of a lower rank; sometimes swapped, sometimes y with a leading
// dim that is not 1 (the guard must refuse).
Builder binaryDropUnitLead(const std::string& op) {
  return [op](Gen& gen) -> std::optional<eg::Id> {
    Shape s = gen.chance(0.5) ? Shape{gen.size(), gen.size()} : Shape{gen.size()};
    auto a = gen.node("reshape", {eg::Attr::ints(withLead(1, s))}, {gen.leaf(s)});
    if (!a) return std::nullopt;
    Shape t = s;
    if (gen.chance(0.5)) t[static_cast<size_t>(gen.uniform(0, static_cast<int64_t>(t.size()) - 1))] = 1;
    int64_t pick = gen.uniform(0, 3);
    Shape tb = pick == 0 ? t : withLead(1, t);
    if (pick == 3) tb[0] = gen.uniform(2, 3);
    eg::Id b = gen.leaf(tb);
    return gen.chance(0.5) ? gen.node(op, {}, {*a, b}) : gen.node(op, {}, {b, *a});
  };
}

// expand[L ++ S](reshape[[1]*k ++ shape(x)](x)) with x's unit dims broadcast
// in S and L of 1 or -1 (sometimes a broadcast leading dim: refused).
std::optional<eg::Id> expandOfUnitLead(Gen& gen) {
  Shape s = {gen.size(), 1, gen.size()};
  if (gen.chance(0.5)) s = {1, gen.size()};
  size_t k = static_cast<size_t>(gen.uniform(1, 2));
  auto y = gen.node("reshape", {eg::Attr::ints(withLead(k, s))}, {gen.leaf(s)});
  if (!y) return std::nullopt;
  std::vector<int64_t> sizes;
  for (size_t i = 0; i < k; ++i) sizes.push_back(gen.chance(0.2) ? gen.uniform(2, 3) : (gen.chance(0.5) ? 1 : -1));
  for (int64_t d : s) sizes.push_back(d == 1 && gen.chance(0.7) ? gen.uniform(2, 4) : d);
  return gen.node("expand", {eg::Attr::ints(sizes)}, {*y});
}

}  // namespace tangle::validate
