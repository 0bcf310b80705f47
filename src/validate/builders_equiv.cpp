// Instance builders for the lemmas of src/lemmas/equiv.cpp (two frameworks,
// one model): operands with leading unit dims added by a reshape.
#include "validate/generate.h"

namespace tangle::validate {

// op(reshape[[1]*k ++ S](x), y) with y of shape S, a suffix of S, S with some
// dims 1, or itself reshaped with leading unit dims; sometimes swapped.
Builder binaryOfUnitLead(const std::string& op) {
  return [op](Gen& gen) -> std::optional<eg::Id> {
    Shape s = gen.chance(0.5) ? Shape{gen.size(), gen.size()} : Shape{gen.size()};
    eg::Id x = gen.leaf(s);
    Shape lead(static_cast<size_t>(gen.uniform(1, 2)), 1);
    Shape sa = lead;
    sa.insert(sa.end(), s.begin(), s.end());
    auto a = gen.node("reshape", {eg::Attr::ints(sa)}, {x});
    if (!a) return std::nullopt;
    Shape t = s;
    int64_t pick = gen.uniform(0, 2);
    if (pick == 1 && t.size() > 1) t.erase(t.begin());
    if (pick == 2) t.back() = 1;
    std::optional<eg::Id> b = gen.leaf(t);
    if (gen.chance(0.5)) {
      Shape tb = Shape(1, 1);
      tb.insert(tb.end(), t.begin(), t.end());
      b = gen.node("reshape", {eg::Attr::ints(tb)}, {*b});
      if (!b) return std::nullopt;
    }
    return gen.chance(0.5) ? gen.node(op, {}, {*a, *b}) : gen.node(op, {}, {*b, *a});
  };
}

}  // namespace tangle::validate
