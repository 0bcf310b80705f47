#include "validate/generate.h"

#include <algorithm>
#include <numeric>

#include "ops/ops.h"
#include "ops/shape.h"

namespace tangle::validate {

using eg::Attr;

Gen::Gen(eg::EGraph& g, std::mt19937_64& rng) : g_(g), rng_(rng) {
  alphabet_ = {uniform(1, 4), uniform(1, 4)};
  if (alphabet_[0] == alphabet_[1] && chance(0.7)) alphabet_[1] = alphabet_[0] % 4 + 1;
  base_.resize(static_cast<size_t>(uniform(1, 3)));
  for (int64_t& d : base_) d = size();
  vary_ = uniform(0, static_cast<int64_t>(base_.size()) - 1);
}

int64_t Gen::uniform(int64_t lo, int64_t hi) {
  if (hi <= lo) return lo;
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
}
bool Gen::chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
int64_t Gen::size() { return alphabet_[static_cast<size_t>(uniform(0, 1))]; }

const Shape* Gen::shapeOf(eg::Id c) const {
  const TensorType* t = g_.data(c).tensor();
  return t ? &t->shape : nullptr;
}

void Gen::remember(eg::Id c) {
  if (const Shape* s = shapeOf(c)) seen_.push_back(*s);
}

Shape Gen::randomShape() {
  double p = std::uniform_real_distribution<double>(0, 1)(rng_);
  Shape s = base_;
  auto seen = [&]() { return seen_.empty() ? base_ : seen_[static_cast<size_t>(uniform(0, seen_.size() - 1))]; };
  if ((p -= 0.35) < 0) return s;
  if ((p -= 0.15) < 0) {
    s[vary_] = size();
    return s;
  }
  if ((p -= 0.15) < 0) return seen();
  if ((p -= 0.08) < 0) {
    s = seen();
    if (s.size() >= 2) std::swap(s[s.size() - 1], s[s.size() - 2]);
    return s;
  }
  if ((p -= 0.04) < 0) return Shape(s.begin() + uniform(0, s.size() - 1), s.end());
  if ((p -= 0.05) < 0) {  // a suffix of a seen shape (layer-norm weights, broadcast operands)
    s = seen();
    return s.empty() ? s : Shape(s.begin() + uniform(0, s.size() - 1), s.end());
  }
  if ((p -= 0.07) < 0) {
    s[uniform(0, s.size() - 1)] = 1;
    return s;
  }
  if ((p -= 0.05) < 0) {
    s = seen();
    if (!s.empty()) s[uniform(0, s.size() - 1)] = size();
    return s;
  }
  if ((p -= 0.03) < 0) {
    s.insert(s.begin(), size());
    return s;
  }
  s.resize(static_cast<size_t>(uniform(1, 3)));
  for (int64_t& d : s) d = size();
  return s;
}

eg::Id Gen::leaf(const Shape& s) {
  eg::ClassData d;
  d.types.push_back(TensorType{DType::F32, s});
  eg::Id id = g_.leaf("S.v" + std::to_string(leaves_++), Owner::spec(), d);
  remember(id);
  return id;
}

eg::Id Gen::intLeaf(const Shape& s, int64_t lo, int64_t hi) {
  std::string name = "S.v" + std::to_string(leaves_++);
  eg::ClassData d;
  d.types.push_back(TensorType{DType::I64, s});
  eg::Id id = g_.leaf(name, d);
  intLeaves_[name] = {lo, hi};
  remember(id);
  return id;
}

eg::Id Gen::constant(double v) {
  eg::ENode n;
  n.op = ops::syms().constant;
  n.attrs = eg::internAttrs({Attr::real(v)});
  return g_.add(n);
}

std::optional<eg::Id> Gen::node(const std::string& op, eg::AttrList attrs, std::vector<eg::Id> children) {
  eg::ENode n;
  n.op = eg::intern(op);
  n.attrs = eg::internAttrs(attrs);
  n.children = std::move(children);
  auto id = g_.tryAdd(std::move(n));
  if (id) remember(*id);
  return id;
}

std::optional<eg::Id> Gen::concatOf(const Shape& s, int64_t d, const std::vector<int64_t>& sizes) {
  std::vector<eg::Id> pieces;
  for (int64_t len : sizes) {
    Shape p = s;
    p[d] = len;
    pieces.push_back(leaf(p));
  }
  return node("concat", {Attr::integer(d)}, pieces);
}

std::optional<eg::Id> Gen::classTerm() {
  if (lastSplit_.size() >= 2 && chance(0.25)) {
    // An operand split like the last list (the contracted dim of a product,
    // the other operand of an elementwise op), along any of its dims.
    Shape s = randomShape();
    if (!s.empty()) return concatOf(s, uniform(0, s.size() - 1), lastSplit_);
  }
  double p = std::uniform_real_distribution<double>(0, 1)(rng_);
  if ((p -= 0.72) < 0) return leaf(randomShape());
  if ((p -= 0.05) < 0) return constant(static_cast<double>(uniform(-4, 4)) / 2 + 0.25);
  Shape s = randomShape();
  if (s.empty()) return leaf(s);
  int64_t d = uniform(0, s.size() - 1);
  if ((p -= 0.10) < 0) {  // a concat, often with the split of the last list
    std::vector<int64_t> sizes = lastSplit_;
    if (sizes.size() < 2 || chance(0.4)) sizes = {size(), size()};
    if (chance(0.5)) d = std::min<int64_t>(vary_, s.size() - 1);
    return concatOf(s, d, sizes);
  }
  if ((p -= 0.07) < 0) return node("sum", {}, {leaf(s), leaf(s)});
  // A slice of a larger leaf that gives back shape s.
  int64_t extra = size();
  Shape big = s;
  big[d] += extra;
  int64_t off = chance(0.5) ? 0 : extra;
  return node("slice", {Attr::integer(d), Attr::integer(off), Attr::integer(off + s[d]), Attr::integer(1)}, {leaf(big)});
}

std::optional<std::vector<eg::Id>> Gen::listTerm() {
  double q = std::uniform_real_distribution<double>(0, 1)(rng_);
  size_t n = q < 0.15 ? 1 : q < 0.6 ? 2 : 3;
  std::vector<eg::Id> out;
  std::vector<int64_t> previous = std::move(lastSplit_);
  lastSplit_.clear();
  if (previous.size() >= 2 && chance(0.25)) {  // split like the previous list, along any dim
    Shape s = randomShape();
    if (s.empty()) return std::nullopt;
    int64_t d = uniform(0, s.size() - 1);
    for (int64_t len : previous) {
      s[d] = len;
      out.push_back(leaf(s));
    }
    lastSplit_ = previous;
    return out;
  }
  double p = std::uniform_real_distribution<double>(0, 1)(rng_);
  if ((p -= 0.50) < 0) {  // independent pieces, varying along varyDim
    for (size_t i = 0; i < n; ++i) {
      if (chance(0.15)) {
        auto t = classTerm();
        if (!t) return std::nullopt;
        out.push_back(*t);
        continue;
      }
      Shape s = base_;
      s[vary_] = size();
      lastSplit_.push_back(s[vary_]);
      out.push_back(leaf(s));
    }
    return out;
  }
  if ((p -= 0.15) < 0) {  // consecutive slices of one leaf along varyDim
    std::vector<int64_t> lens(n);
    for (int64_t& l : lens) l = size();
    int64_t lead = chance(0.3) ? size() : 0, tail = chance(0.3) ? size() : 0;
    Shape s = base_;
    s[vary_] = lead + std::accumulate(lens.begin(), lens.end(), int64_t{0}) + tail;
    eg::Id x = leaf(s);
    int64_t off = lead;
    for (int64_t l : lens) {
      auto sl = node("slice", {Attr::integer(vary_), Attr::integer(off), Attr::integer(off + l), Attr::integer(1)}, {x});
      if (!sl) return std::nullopt;
      out.push_back(*sl);
      off += l;
    }
    lastSplit_ = lens;
    return out;
  }
  if ((p -= 0.15) < 0) {  // concats with one split
    std::vector<int64_t> split = {size(), size()};
    for (size_t i = 0; i < n; ++i) {
      auto c = concatOf(base_, vary_, split);
      if (!c) return std::nullopt;
      out.push_back(*c);
    }
    lastSplit_ = split;
    return out;
  }
  if ((p -= 0.10) < 0) {  // sums of the same arity
    for (size_t i = 0; i < n; ++i) {
      Shape s = base_;
      s[vary_] = size();
      auto t = node("sum", {}, {leaf(s), leaf(s)});
      if (!t) return std::nullopt;
      out.push_back(*t);
    }
    return out;
  }
  for (size_t i = 0; i < n; ++i) {
    auto t = classTerm();
    if (!t) return std::nullopt;
    out.push_back(*t);
  }
  return out;
}

// An op's record samples its attributes (src/ops/samplers.cpp); a lemma
// file's defined op has dims or scalars.
std::optional<Attr> Gen::sampleAttr(const std::string& op, size_t pos, const eg::AttrList& filled,
                                    const std::vector<eg::Id>& children) {
  eg::Symbol sym = eg::intern(op);
  if (const ops::OpDef* def = ops::find(sym)) {
    if (!def->sample) return std::nullopt;
    ops::AttrSampling sampling{rng_, [this] { return size(); }, {}};
    for (eg::Id c : children) sampling.children.push_back(&g_.data(c));
    return def->sample(sampling, pos, filled);
  }
  if (ops::isCustomOp(sym)) {
    const Shape* x = children.empty() ? nullptr : shapeOf(children[0]);
    int64_t r = x ? static_cast<int64_t>(x->size()) : 0;
    static const double kReal[] = {0.1, 0.5, 2.0, -1.5};
    if (r && chance(0.5)) return Attr::integer(uniform(0, r - 1));
    return Attr::real(kReal[uniform(0, 3)]);
  }
  return std::nullopt;
}

std::optional<eg::Id> Gen::build(const PatTree& p) {
  if (p.isVar) {
    if (auto it = classes_.find(p.var); it != classes_.end()) return it->second;
    auto t = classTerm();
    if (t) classes_[p.var] = *t;
    return t;
  }
  // Operator children and the list first, then the variables: a variable
  // operand can then be split like a sibling concat (lastSplit_).
  std::vector<eg::Id> children(p.children.size());
  std::vector<eg::Id> list;
  for (size_t i = 0; i < p.children.size(); ++i) {
    if (p.children[i].isVar) continue;
    auto id = build(p.children[i]);
    if (!id) return std::nullopt;
    children[i] = *id;
  }
  if (!p.listVar.empty()) {
    auto it = lists_.find(p.listVar);
    if (it == lists_.end()) {
      auto l = listTerm();
      if (!l) return std::nullopt;
      it = lists_.emplace(p.listVar, *l).first;
    }
    list = it->second;
  }
  for (size_t i = 0; i < p.children.size(); ++i) {
    if (!p.children[i].isVar) continue;
    auto id = build(p.children[i]);
    if (!id) return std::nullopt;
    children[i] = *id;
  }
  children.insert(children.end(), list.begin(), list.end());
  // Attributes: literals, bound variables, or samples (a few proposals).
  for (int attempt = 0; attempt < 6; ++attempt) {
    std::map<std::string, Attr> bound = attrs_;
    eg::AttrList a;
    bool ok = true;
    for (size_t i = 0; i < p.attrs.size() && ok; ++i) {
      const PatAttr& pa = p.attrs[i];
      if (pa.kind == PatAttr::Kind::Literal) {
        a.push_back(pa.literal);
        continue;
      }
      if (pa.kind == PatAttr::Kind::Var)
        if (auto it = bound.find(pa.var); it != bound.end()) {
          a.push_back(it->second);
          continue;
        }
      auto v = sampleAttr(p.op, i, a, children);
      if (!v) ok = false;
      else {
        a.push_back(*v);
        if (pa.kind == PatAttr::Kind::Var) bound[pa.var] = *v;
      }
    }
    if (!ok) continue;
    if (auto id = node(p.op, a, children)) {
      attrs_ = std::move(bound);
      return id;
    }
  }
  return std::nullopt;
}

std::optional<eg::Id> Gen::instantiate(const PatTree& p) { return build(p); }

void Gen::addComplementarySlices() {
  eg::Symbol sliceSym = ops::syms().slice;
  std::vector<std::pair<eg::Id, eg::AttrList>> adds;
  for (eg::Id c : g_.classIds())
    for (const eg::ENode& n : g_.eclass(c).nodes) {
      if (n.op != sliceSym || n.children.size() != 1) continue;
      const eg::AttrList& a = eg::attrs(n.attrs);
      auto d = ops::attrInt(a, 0), s = ops::attrInt(a, 1), e = ops::attrInt(a, 2), st = ops::attrInt(a, 3);
      const Shape* x = shapeOf(n.children[0]);
      if (!d || !s || !e || st != 1 || !x || *d < 0 || *d >= static_cast<int64_t>(x->size())) continue;
      if (*s > 0) adds.push_back({n.children[0], {a[0], Attr::integer(0), a[1], Attr::integer(1)}});
      if (*e < (*x)[*d]) adds.push_back({n.children[0], {a[0], a[2], Attr::integer((*x)[*d]), Attr::integer(1)}});
    }
  for (auto& [x, a] : adds) node("slice", a, {x});
}

}  // namespace tangle::validate
