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

// concat along d of 2-3 pieces, each div(x, k) with one k or zeros (scale-out-concat); sometimes a
// piece divided by another k or not at all, where the rule must not fire.
std::optional<eg::Id> concatOfScaled(Gen& gen) {
  Shape s = gen.randomShape();
  if (s.empty()) s.push_back(gen.size());
  int64_t d = gen.uniform(0, static_cast<int64_t>(s.size()) - 1);
  double k = static_cast<double>(gen.uniform(1, 8)) / 2;
  std::vector<eg::Id> xs;
  for (int64_t i = 0, n = gen.uniform(2, 3); i < n; ++i) {
    s[static_cast<size_t>(d)] = gen.uniform(1, 3);
    bool zero = gen.chance(0.3);
    std::optional<eg::Id> x = zero ? zeros(gen, s) : std::optional<eg::Id>(gen.leaf(s));
    if (x && !zero && !gen.chance(0.1)) x = gen.node("div", {}, {*x, gen.constant(gen.chance(0.1) ? k + 1 : k)});
    if (!x) return std::nullopt;
    xs.push_back(*x);
  }
  return gen.node("concat", {Attr::integer(d)}, xs);
}

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

// add(x, zeros) / add(zeros, x) / sub(x, zeros): zeros of x's shape, of a
// shape that broadcasts to it, or (refused by the guard) one that widens it.
Builder withZeroTerm(const std::string& op, bool zerosOnLeft) {
  return [op, zerosOnLeft](Gen& gen) -> std::optional<eg::Id> {
    Shape s = {gen.uniform(1, 3), gen.uniform(2, 3)}, zs = s;
    int64_t form = gen.uniform(0, 2);
    if (form == 1) zs[0] = 1;
    if (form == 2) s[0] = 1;
    auto z = zeros(gen, zs);
    if (!z) return std::nullopt;
    eg::Id x = gen.leaf(s);
    return zerosOnLeft ? gen.node(op, {}, {*z, x}) : gen.node(op, {}, {x, *z});
  };
}

// concat[d](A, B) with A or B (or both) a concat along another dim e, the
// other one split alike or zeros (slice_backward's padding): what
// concat-interchange rewrites, splat blocks included.
std::optional<eg::Id> concatOfConcats(Gen& gen) {
  int64_t d = gen.uniform(0, 1), e = 1 - d, pieces = gen.uniform(2, 3);
  std::vector<int64_t> split;
  for (int64_t i = 0; i < pieces; ++i) split.push_back(gen.uniform(1, 3));
  auto block = [&](bool asZeros) -> std::optional<eg::Id> {
    Shape s(2);
    s[static_cast<size_t>(d)] = gen.uniform(1, 3);
    if (asZeros) {
      s[static_cast<size_t>(e)] = 0;
      for (int64_t n : split) s[static_cast<size_t>(e)] += n;
      return zeros(gen, s);
    }
    std::vector<eg::Id> xs;
    for (int64_t n : split) {
      s[static_cast<size_t>(e)] = n;
      xs.push_back(gen.leaf(s));
    }
    return gen.node("concat", {Attr::integer(e)}, xs);
  };
  int64_t zerosAt = gen.uniform(-1, 1);  // -1: no splat block
  auto a = block(zerosAt == 0), b = block(zerosAt == 1);
  if (!a || !b) return std::nullopt;
  return gen.node("concat", {Attr::integer(d)}, {*a, *b});
}

}  // namespace tangle::validate

namespace tangle::validate {

// reshape[O](slice[1, u*i, u*j](x)) with a block-aligned O: x: [A, n*u, B]
// split into heads ([A, j-i, u, B]), or x: [A, n, u] merged ([A, (j-i)*u]),
// or x: [1, n, c, B] with its leading 1 dropped ([j-i, c, B]).
std::optional<eg::Id> reshapeOfSlice(Gen& gen) {
  int64_t a = gen.uniform(1, 3), b = gen.uniform(1, 3), u = gen.uniform(1, 3), n = gen.uniform(2, 4);
  int64_t i = gen.uniform(0, n - 1), j = gen.uniform(i + 1, n);
  int64_t form = gen.uniform(0, 2);
  Shape x = form == 0 ? Shape{a, n * u, b} : form == 1 ? Shape{a, n, u} : Shape{1, n, u, b};
  int64_t s = form == 0 ? u * i : i, e = form == 0 ? u * j : j;
  Shape o = form == 0 ? Shape{a, j - i, u, b} : form == 1 ? Shape{a, (j - i) * u} : Shape{j - i, u, b};
  eg::Id leaf = gen.leaf(x);
  // The lemma is constrained: the reshape of the whole x exists (a rank's own head view).
  Shape whole = o;
  whole[form == 2 ? 0 : 1] = form == 0 ? n : form == 1 ? n * u : n;
  if (!gen.node("reshape", {Attr::ints(whole)}, {leaf})) return std::nullopt;
  auto sliced = gen.node("slice", {Attr::integer(1), Attr::dim(s), Attr::dim(e), Attr::integer(1)}, {leaf});
  if (!sliced) return std::nullopt;
  return gen.node("reshape", {Attr::ints(o)}, {*sliced});
}

}  // namespace tangle::validate

namespace tangle::validate {

// A rearrangement (0 reshape, 1 transpose, 2 permute, 3 slice, 4 concat) of
// expand[S](c), c 0 or not (what the splat-* lemmas canonicalize).
Builder splatRearranged(int kind) {
  return [kind](Gen& gen) -> std::optional<eg::Id> {
    int64_t a = gen.uniform(1, 3), b = gen.uniform(2, 3), c = gen.uniform(1, 3);
    eg::Id value = gen.constant(gen.chance(0.7) ? 0.0 : 1.5);
    auto splat = gen.node("expand", {Attr::ints({a, b, c})}, {value});
    if (!splat) return std::nullopt;
    switch (kind) {
      case 0: return gen.node("reshape", {Attr::ints({a * b * c})}, {*splat});
      case 1: return gen.node("transpose", {Attr::integer(0), Attr::integer(2)}, {*splat});
      case 2: return gen.node("permute", {Attr::ints({2, 0, 1})}, {*splat});
      case 3: return gen.node("slice", {Attr::integer(1), Attr::dim(1), Attr::dim(b), Attr::integer(1)}, {*splat});
      default: return gen.node("concat", {Attr::integer(1)}, {*splat, *splat});
    }
  };
}

}  // namespace tangle::validate

namespace tangle::validate {

// add(A, B), A and B concats along d of one shape [.., L, ..] whose pieces are
// leaves or zeros: each position along d is owned by A, by B or by neither
// (zeros on both), each operand cut at random inside its own runs; sometimes
// one of B's zero pieces is a leaf instead (overlapping support, which
// add-disjoint-pieces must refuse) and sometimes B is split along another dim.
std::optional<eg::Id> addOfDisjointPieces(Gen& gen) {
  int64_t d = gen.uniform(0, 1), len = gen.uniform(2, 6), other = gen.uniform(1, 3);
  std::vector<int> owner;
  for (int64_t p = 0; p < len; ++p) owner.push_back(static_cast<int>(gen.uniform(0, 2)));  // 0 A, 1 B, 2 none
  bool overlap = gen.chance(0.2);
  int64_t e = gen.chance(0.1) ? 1 - d : d;
  auto operand = [&](int side, int64_t dim) -> std::optional<eg::Id> {
    std::vector<eg::Id> xs;
    bool turned = false;
    for (int64_t p = 0; p < len;) {
      bool mine = owner[static_cast<size_t>(p)] == side;
      int64_t q = p + 1;  // a run of one owner, cut at random
      while (q < len && (owner[static_cast<size_t>(q)] == side) == mine && !gen.chance(0.3)) ++q;
      Shape s = d == 0 ? Shape{q - p, other} : Shape{other, q - p};
      bool leaf = mine || (side == 1 && overlap && !turned && (turned = true));
      auto x = leaf ? std::optional<eg::Id>(gen.leaf(s)) : gen.node("expand", {eg::Attr::ints(s)}, {gen.constant(0)});
      if (!x) return std::nullopt;
      xs.push_back(*x);
      p = q;
    }
    if (dim == d) return xs.size() == 1 ? std::optional<eg::Id>(xs[0]) : gen.node("concat", {eg::Attr::integer(d)}, xs);
    // along the other dim: two halves of a leaf (nothing for the lemma to cut)
    Shape s = d == 0 ? Shape{len, other} : Shape{other, len};
    Shape h = s;
    h[static_cast<size_t>(dim)] = 1;
    Shape rest = s;
    rest[static_cast<size_t>(dim)] = s[static_cast<size_t>(dim)] - 1;
    if (rest[static_cast<size_t>(dim)] == 0) return std::optional<eg::Id>(gen.leaf(s));
    return gen.node("concat", {eg::Attr::integer(dim)}, {gen.leaf(h), gen.leaf(rest)});
  };
  auto a = operand(0, d), b = operand(1, e);
  if (!a || !b) return std::nullopt;
  return gen.node("add", {}, {*a, *b});
}

}  // namespace tangle::validate
