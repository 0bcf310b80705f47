// Attribute samplers: random valid attributes of each op for lemma
// validation (src/validate instantiates lemma patterns on random inputs).
// Each reads the children built so far and the attributes already chosen.
#include <algorithm>
#include <numeric>

#include "ops/samplers.h"
#include "ops/shape.h"

namespace tangle::ops {

int64_t AttrSampling::uniform(int64_t lo, int64_t hi) {
  if (hi <= lo) return lo;
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}
bool AttrSampling::chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }
const std::vector<Dim>* AttrSampling::shape(size_t i) const {
  if (i >= children.size() || !children[i]) return nullptr;
  const TensorType* t = children[i]->tensor();
  return t ? &t->shape : nullptr;
}

namespace samplers {

namespace {
using eg::Attr;
using Out = std::optional<Attr>;

int64_t rankOf(const AttrSampling& s) {
  const auto* x = s.shape(0);
  return x ? static_cast<int64_t>(x->size()) : 0;
}
std::optional<int64_t> filledInt(const eg::AttrList& filled, size_t i) {
  return i < filled.size() ? attrInt(filled, i) : std::nullopt;
}
// Size of dim d of the first child.
std::optional<int64_t> dimSize(const AttrSampling& s, std::optional<int64_t> d) {
  const auto* x = s.shape(0);
  if (!x || !d || *d < 0 || *d >= static_cast<int64_t>(x->size())) return std::nullopt;
  return (*x)[*d];
}
Out someDim(AttrSampling& s) {
  int64_t r = rankOf(s);
  return r ? Out(Attr::integer(s.uniform(0, r - 1))) : std::nullopt;
}
std::vector<int64_t> factorize(int64_t n) {
  std::vector<int64_t> f;
  for (int64_t p = 2; p * p <= n; ++p)
    while (n % p == 0) {
      f.push_back(p);
      n /= p;
    }
  if (n > 1) f.push_back(n);
  return f;
}
}  // namespace

Out slice(AttrSampling& s, size_t pos, const eg::AttrList& filled) {
  if (pos == 0) return someDim(s);
  auto size = dimSize(s, filledInt(filled, 0));
  if (!size) return std::nullopt;
  if (pos == 1) return Attr::integer(s.chance(0.5) ? 0 : s.uniform(0, *size - 1));
  if (pos == 2) {
    int64_t start = filledInt(filled, 1).value_or(0);
    return Attr::integer(s.chance(0.4) ? *size : s.uniform(std::min(start + 1, *size), *size));
  }
  return Attr::integer(s.chance(0.85) ? 1 : 2);
}

Out dim(AttrSampling& s, size_t, const eg::AttrList&) {
  return Attr::integer(s.uniform(0, std::max<int64_t>(rankOf(s) - 1, 0)));
}

Out softmax(AttrSampling& s, size_t pos, const eg::AttrList& filled) {
  if (pos == 1) return Attr::boolean(false);
  return dim(s, pos, filled);
}

Out permute(AttrSampling& s, size_t, const eg::AttrList&) {
  std::vector<int64_t> p(static_cast<size_t>(rankOf(s)));
  std::iota(p.begin(), p.end(), 0);
  std::shuffle(p.begin(), p.end(), s.rng);
  return Attr::ints(p);
}

Out reshape(AttrSampling& s, size_t, const eg::AttrList&) {
  const auto* x = s.shape(0);
  if (!x) return std::nullopt;
  if (x->size() >= 3 && s.chance(0.4)) {  // flatten the leading dims, keep the matrix dims
    std::vector<int64_t> out = {product(*x, 0, x->size() - 2).value_or(1), (*x)[x->size() - 2], x->back()};
    return Attr::ints(out);
  }
  std::vector<int64_t> out(static_cast<size_t>(s.uniform(1, 3)), 1);
  for (int64_t f : factorize(product(*x, 0, x->size()).value_or(1))) out[s.uniform(0, out.size() - 1)] *= f;
  if (s.chance(0.2)) out.insert(out.begin() + s.uniform(0, out.size()), 1);
  return Attr::ints(out);
}

Out expand(AttrSampling& s, size_t, const eg::AttrList&) {
  const auto* x = s.shape(0);
  if (!x) return std::nullopt;
  std::vector<int64_t> out = *x;
  for (int64_t& d : out)
    if (d == 1 && s.chance(0.6)) d = s.size();
  if (s.chance(0.3)) out.insert(out.begin(), s.size());
  return Attr::ints(out);
}

Out getitem(AttrSampling& s, size_t, const eg::AttrList&) {
  const eg::ClassData* d = s.children.empty() ? nullptr : s.children[0];
  if (!d || !d->tuple || d->types.empty()) return std::nullopt;
  return Attr::integer(s.uniform(0, d->types.size() - 1));
}

Out split(AttrSampling& s, size_t pos, const eg::AttrList& filled) {
  if (pos == 0) return someDim(s);
  auto size = dimSize(s, filledInt(filled, 0));
  if (!size || *size < 1) return std::nullopt;
  std::vector<int64_t> parts;
  for (int64_t left = *size; left > 0;) {
    int64_t take = s.uniform(1, left);
    parts.push_back(take);
    left -= take;
  }
  return Attr::ints(parts);
}

Out maxDim(AttrSampling& s, size_t pos, const eg::AttrList&) {
  if (pos == 1) return Attr::boolean(s.chance(0.5));
  return someDim(s);
}

Out dropout(AttrSampling& s, size_t pos, const eg::AttrList&) {
  return pos == 0 ? Attr::real(s.chance(0.5) ? 0.1 : 0.5) : Attr::boolean(s.chance(0.8));
}

Out approximate(AttrSampling& s, size_t, const eg::AttrList&) { return Attr::str(s.chance(0.5) ? "none" : "tanh"); }

Out exponent(AttrSampling& s, size_t, const eg::AttrList&) {
  static const double kExp[] = {2.0, 3.0, 0.5, -1.0, 1.5};
  return Attr::real(kExp[s.uniform(0, 4)]);
}

Out dtype(AttrSampling& s, size_t, const eg::AttrList&) {
  static const char* kTo[] = {"f32", "f64", "f16", "bf16", "i64"};
  return Attr::str(kTo[s.uniform(0, 4)]);
}

Out reduce(AttrSampling& s, size_t pos, const eg::AttrList&) {
  if (pos == 1) return Attr::boolean(s.chance(0.5));
  int64_t r = rankOf(s);
  std::vector<int64_t> dims;
  if (!s.chance(0.1))
    for (int64_t d = 0; d < r; ++d)
      if (s.chance(0.4)) dims.push_back(s.chance(0.2) ? d - r : d);
  if (dims.empty() && r && s.chance(0.7)) dims.push_back(s.uniform(0, r - 1));
  return Attr::ints(dims);
}

Out layerNorm(AttrSampling& s, size_t pos, const eg::AttrList&) {
  if (pos == 1) return Attr::real(1e-5);
  const auto* x = s.shape(0);
  int64_t r = rankOf(s);
  if (!r) return std::nullopt;
  int64_t k = r >= 2 && s.chance(0.7) ? s.uniform(1, r - 1) : s.uniform(1, r);  // mostly leave leading dims
  return Attr::ints(std::vector<int64_t>(x->begin() + (r - k), x->end()));
}

Out layerNormBwd(AttrSampling& s, size_t pos, const eg::AttrList&) {
  if (pos == 1) return Attr::real(1e-5);
  const auto* x = s.shape(3);  // (grad, mean, invvar, x, w, b): normalized over w's shape
  const auto* w = s.shape(4);
  if (!x || !w) return std::nullopt;
  return Attr::ints(std::vector<int64_t>(w->begin(), w->end()));
}

Out constant(AttrSampling& s, size_t, const eg::AttrList&) {
  return Attr::real(static_cast<double>(s.uniform(-4, 4)) / 2 + 0.25);
}

Out epsilon(AttrSampling&, size_t, const eg::AttrList&) { return Attr::real(1e-6); }

Out rotary(AttrSampling& s, size_t pos, const eg::AttrList&) {
  if (pos == 1) return Attr::boolean(s.chance(0.5));
  const auto* cache = s.shape(2);  // head_size: at least the cache's rotary width
  if (!cache || cache->size() != 2) return std::nullopt;
  return Attr::integer((*cache)[1] + 2 * s.uniform(0, 1));
}

Out layer(AttrSampling& s, size_t, const eg::AttrList&) { return Attr::integer(s.uniform(0, 3)); }

Out classes(AttrSampling& s, size_t, const eg::AttrList&) { return Attr::integer(s.uniform(1, 8)); }
// causal, scale: a scale around 1/sqrt(head size) (the default), sometimes another.
Out sdpa(AttrSampling& s, size_t pos, const eg::AttrList&) {
  if (pos == 0) return Attr::boolean(s.chance(0.5));
  return Attr::real(s.chance(0.5) ? 0.5 : 0.25 * static_cast<double>(s.uniform(1, 6)));
}

// topk: a dim, then k in [1, its size], largest either way.
Out topk(AttrSampling& s, size_t pos, const eg::AttrList& filled) {
  if (pos == 0) return someDim(s);
  if (pos == 2) return Attr::boolean(s.chance(0.7));
  auto size = dimSize(s, filledInt(filled, 0));
  if (!size || *size < 1) return std::nullopt;
  return Attr::integer(s.uniform(1, *size));
}

}  // namespace samplers
}  // namespace tangle::ops
