#include "lemmas/lemma_util.h"
#include "sym/context.h"

#include <algorithm>

#include <stdexcept>
#include <unordered_map>

#include "ops/ops.h"

namespace tangle::lemmas::detail {

const TensorType* typeOf(const EGraph& g, Id c) { return g.data(c).tensor(); }

std::optional<Dim> dimOf(const EGraph& g, Id c, int64_t dim) {
  const TensorType* t = typeOf(g, c);
  if (!t || dim < 0 || dim >= t->rank()) return std::nullopt;
  return t->shape[dim];
}

std::optional<int64_t> sizeOf(const EGraph& g, Id c, int64_t dim) {
  auto d = dimOf(g, c, dim);
  if (!d || isSymbolic(*d)) return std::nullopt;
  return *d;
}

std::optional<std::vector<Dim>> dimsAlong(const EGraph& g, const std::vector<Id>& xs, int64_t dim) {
  std::vector<Dim> out;
  out.reserve(xs.size());
  for (Id x : xs) {
    auto s = dimOf(g, x, dim);
    if (!s) return std::nullopt;
    out.push_back(*s);
  }
  return out;
}

std::optional<std::vector<int64_t>> sizesAlong(const EGraph& g, const std::vector<Id>& xs, int64_t dim) {
  auto dims = dimsAlong(g, xs, dim);
  if (!dims || !ops::allConcrete(*dims)) return std::nullopt;
  return dims;
}

bool sameDims(const sym::Context& symbols, const std::vector<Dim>& a, const std::vector<Dim>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!sym::dimEqual(symbols, a[i], b[i])) return false;
  return true;
}

Dim totalDim(const sym::Context& symbols, const std::vector<Dim>& sizes) {
  Dim total = 0;
  for (Dim s : sizes) total = *sym::dimAdd(symbols, total, s);  // a sum of sizes is a size
  return total;
}

NodeList nodesOf(const EGraph& g, Id c, eg::Symbol sym) {
  NodeList out;
  for (const ENode& n : g.eclass(c).nodes)
    if (n.op == sym) out.push_back(&n);
  return out;
}

std::optional<Id> make(EGraph& g, eg::Symbol sym, const AttrList& attrs, std::vector<Id> children) {
  ENode n;
  n.op = sym;
  n.attrs = eg::internAttrs(attrs);
  n.children = std::move(children);
  return g.tryAdd(std::move(n));
}

std::optional<Id> make(EGraph& g, eg::Symbol sym, std::initializer_list<Attr> attrs, std::vector<Id> children) {
  ENode n;
  n.op = sym;
  n.attrs = eg::internAttrs(attrs.begin(), attrs.size());
  n.children = std::move(children);
  return g.tryAdd(std::move(n));
}

std::optional<Id> makeSlice(EGraph& g, Id x, int64_t dim, Dim start, Dim end) {
  auto size = dimOf(g, x, dim);
  if (start == 0 && size && sym::dimEqual(g.symbols(), *size, end)) return g.find(x);
  return make(g, op().slice, {Attr::integer(dim), Attr::dim(start), Attr::dim(end), Attr::integer(1)}, {x});
}

std::optional<Id> makeConcat(EGraph& g, int64_t dim, const std::vector<Id>& xs) {
  if (xs.empty()) return std::nullopt;
  if (xs.size() == 1) return g.find(xs[0]);
  return make(g, op().concat, {Attr::integer(dim)}, xs);
}

std::optional<Id> makeSum(EGraph& g, const std::vector<Id>& xs) {
  if (xs.empty()) return std::nullopt;
  if (xs.size() == 1) return g.find(xs[0]);
  return make(g, op().sum, {}, xs);
}

std::optional<std::vector<Id>> mapPieces(const std::vector<Id>& xs, const std::function<std::optional<Id>(Id)>& f) {
  std::vector<Id> out;
  out.reserve(xs.size());
  for (Id x : xs) {
    auto r = f(x);
    if (!r) return std::nullopt;
    out.push_back(*r);
  }
  return out;
}

namespace {
// A concat[dim] node of y split exactly into `sizes`, else nullptr.
const ENode* concatSplit(const EGraph& g, Id y, int64_t dim, const std::vector<Dim>& sizes) {
  for (const ENode* n : nodesOf(g, y, op().concat)) {
    auto d = ops::attrInt(attrsOf(*n), 0);
    if (!d || *d != dim) continue;
    auto have = dimsAlong(g, n->children, dim);
    if (have && sameDims(g.symbols(), *have, sizes)) return n;
  }
  return nullptr;
}
}  // namespace

bool hasConcatSplit(const EGraph& g, Id y, int64_t dim, const std::vector<Dim>& sizes) {
  return concatSplit(g, y, dim, sizes) != nullptr;
}

std::optional<std::vector<Id>> piecesOf(EGraph& g, Id y, int64_t dim, const std::vector<Dim>& sizes,
                                        bool allowSlices) {
  if (const ENode* n = concatSplit(g, y, dim, sizes)) return n->children;
  if (sizes.size() == 1) return std::vector<Id>{g.find(y)};
  if (!allowSlices) return std::nullopt;
  std::vector<Id> out;
  Dim off = 0;
  for (Dim len : sizes) {
    Dim end = *sym::dimAdd(g.symbols(), off, len);
    auto s = makeSlice(g, y, dim, off, end);
    if (!s) return std::nullopt;
    out.push_back(*s);
    off = end;
  }
  return out;
}

std::optional<double> scalarConstant(const EGraph& g, Id c) {
  const eg::ClassData& d = g.data(c);
  if (!d.constant || !d.tensor() || !d.tensor()->shape.empty()) return std::nullopt;
  return d.constant;
}

bool isIdentityOperand(const EGraph& g, eg::Symbol sym, Id c, bool onLeft) {
  auto v = scalarConstant(g, c);
  if (!v) return false;
  const ops::Syms& o = op();
  if (sym == o.add) return *v == 0;
  if (sym == o.mul) return *v == 1;
  if (sym == o.sub) return !onLeft && *v == 0;
  if (sym == o.div) return !onLeft && *v == 1;
  return false;
}

bool isZeroTermOperand(const EGraph& g, eg::Symbol sym, Id c, bool onLeft) {
  const eg::ClassData& d = g.data(c);
  if (!d.constant || *d.constant != 0.0 || !d.tensor() || d.tensor()->shape.empty()) return false;
  const ops::Syms& o = op();
  return sym == o.add || (sym == o.sub && !onLeft);
}

std::optional<Id> makeSplat(EGraph& g, const TensorType& t, double v) {
  std::vector<int64_t> shape;
  for (Dim d : t.shape) {
    if (isSymbolic(d)) return std::nullopt;
    shape.push_back(d);
  }
  return ops::addSplat(g, t.dtype, shape, v);
}

Id makeConstant(EGraph& g, double v) {
  static const eg::Symbol sym = ops::syms().constant;
  return g.add(ENode{sym, eg::internAttrs({Attr::real(v)}), {}});
}

std::optional<Id> zipSum(EGraph& g, eg::Symbol op, const std::vector<Id>& as, const std::vector<Id>& bs) {
  if (as.size() != bs.size()) return std::nullopt;
  std::vector<Id> parts;
  for (size_t i = 0; i < as.size(); ++i) {
    auto r = make(g, op, {}, {as[i], bs[i]});
    if (!r) return std::nullopt;
    parts.push_back(*r);
  }
  return makeSum(g, parts);
}

namespace {
// The windows a class is known to be, along `dim`: itself at offset 0, and
// (src, offset) for each slice[dim, offset, ..](src) node in it.
struct Window {
  Id src;
  int64_t dim;
  Dim offset;
};
std::vector<Window> windowsOf(const EGraph& g, Id c, int64_t dim) {
  std::vector<Window> out{{g.find(c), dim, 0}};
  for (const ENode* n : nodesOf(g, c, op().slice)) {
    const AttrList& a = attrsOf(*n);
    auto d = ops::attrInt(a, 0), s = ops::attrDim(a, 1), st = ops::attrInt(a, 3);
    if (d && s && st == 1 && n->children.size() == 1) out.push_back({g.find(n->children[0]), *d, *s});
  }
  return out;
}
}  // namespace

bool shiftedSelfOverlap(const EGraph& g, const std::vector<Id>& xs, int64_t dx, Id y, int64_t dy,
                        const std::vector<Dim>& sizes) {
  std::vector<Window> ys = windowsOf(g, y, dy);
  Dim off = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    for (const Window& a : windowsOf(g, xs[i], dx))
      for (const Window& b : ys) {
        if (a.src != b.src || a.dim != b.dim) continue;
        auto at = sym::dimAdd(g.symbols(), b.offset, off);  // y's piece i starts at b.offset + off in src
        if (!at || !sym::dimEqual(g.symbols(), a.offset, *at)) return true;
      }
    auto next = sym::dimAdd(g.symbols(), off, sizes[i]);
    if (!next) return true;
    off = *next;
  }
  return false;
}

std::optional<Id> distributeOverConcat(EGraph& g, const Match& m, eg::Symbol sym, const AttrList& attrs,
                                       const std::vector<std::string>& args, size_t pos) {
  const auto& xs = m.subst.list("xs");
  int64_t d = m.subst.integer("d");
  const TensorType* out = typeOf(g, m.eclass);
  const TensorType* x0 = typeOf(g, xs[0]);
  auto sizes = dimsAlong(g, xs, d);
  if (!out || !x0 || !sizes) return std::nullopt;
  int64_t R = out->rank(), D = d + (R - x0->rank());
  Dim total = totalDim(g.symbols(), *sizes);
  // the concat side is broadcast
  if (D < 0 || D >= R || !sym::dimEqual(g.symbols(), out->shape[D], total)) return std::nullopt;
  std::vector<std::vector<Id>> kids(xs.size(), std::vector<Id>(args.size()));
  for (size_t k = 0; k < args.size(); ++k) {
    if (k == pos) {
      for (size_t i = 0; i < xs.size(); ++i) kids[i][k] = xs[i];
      continue;
    }
    Id y = m.subst.cls(args[k]);
    const TensorType* yt = typeOf(g, y);
    if (!yt) return std::nullopt;
    int64_t yd = D - (R - yt->rank());
    if (yd < 0 || yt->shape[yd] == 1) {
      for (size_t i = 0; i < xs.size(); ++i) kids[i][k] = y;
      continue;
    }
    if (!sym::dimEqual(g.symbols(), yt->shape[yd], total)) return std::nullopt;
    if (!hasConcatSplit(g, y, yd, *sizes) && shiftedSelfOverlap(g, xs, d, y, yd, *sizes)) return std::nullopt;
    auto p = piecesOf(g, y, yd, *sizes);
    if (!p) return std::nullopt;
    for (size_t i = 0; i < xs.size(); ++i) kids[i][k] = (*p)[i];
  }
  std::vector<Id> parts;
  for (auto& k : kids) {
    auto r = make(g, sym, attrs, k);
    if (!r) return std::nullopt;
    parts.push_back(*r);
  }
  return makeConcat(g, D, parts);
}

std::optional<std::vector<Id>> spliceNested(const EGraph& g, const std::vector<Id>& xs, eg::Symbol sym,
                                            std::optional<int64_t> dim) {
  std::vector<Id> out;
  bool changed = false;
  for (Id x : xs) {
    Id cx = g.find(x);
    const ENode* inner = nullptr;
    for (const ENode* n : nodesOf(g, cx, sym)) {
      // A class holding op(x, z) that refers to itself (e.g. sum(x, 0) = x): splicing it would never end.
      bool selfRef = std::any_of(n->children.begin(), n->children.end(), [&](Id c) { return g.find(c) == cx; });
      if (n->children.size() >= 2 && !selfRef && (!dim || ops::attrInt(attrsOf(*n), 0) == *dim)) {
        inner = n;
        break;
      }
    }
    if (inner) {
      out.insert(out.end(), inner->children.begin(), inner->children.end());
      changed = true;
    } else {
      out.push_back(x);
    }
  }
  if (!changed) return std::nullopt;
  return out;
}

AttrList boundAttrs(const Subst& s, size_t n) {
  AttrList out;
  for (size_t i = 0; i < n; ++i) out.push_back(s.attr("a" + std::to_string(i)));
  return out;
}

std::string opPattern(const std::string& opName, size_t nAttrs, const std::string& child) {
  std::string s = "(" + opName;
  if (nAttrs) {
    s += "[";
    for (size_t i = 0; i < nAttrs; ++i) s += (i ? ", ?a" : "?a") + std::to_string(i);
    s += "]";
  }
  return s + " " + child + ")";
}

namespace {
// A match on an ill-kinded node (e.g. a float where a dim is expected, only
// possible for nodes added without type checking) makes Subst::integer throw;
// such a match simply does not apply.
Guard safeGuard(Guard guard) {
  if (!guard) return nullptr;
  return [guard = std::move(guard)](const EGraph& g, Subst& s) {
    try {
      return guard(g, s);
    } catch (const std::invalid_argument&) {
      return false;
    } catch (const std::out_of_range&) {
      return false;
    }
  };
}
Apply safeApply(Apply apply) {
  return [apply = std::move(apply)](EGraph& g, const Match& m) -> std::optional<Id> {
    try {
      return apply(g, m);
    } catch (const std::invalid_argument&) {
      return std::nullopt;
    } catch (const std::out_of_range&) {
      return std::nullopt;
    }
  };
}
}  // namespace

Lemma rewrite(std::string name, std::string doc, const std::string& lhs, const std::string& rhs, Guard guard) {
  Lemma l;
  l.doc = std::move(doc);
  l.rule.name = std::move(name);
  l.rule.lhs = eg::Pattern::parse(lhs);
  l.rule.rhs = eg::Pattern::parse(rhs);
  l.rule.guard = safeGuard(std::move(guard));
  return l;
}

Lemma applier(std::string name, std::string doc, const std::string& lhs, Apply apply, Guard guard) {
  Lemma l;
  l.doc = std::move(doc);
  l.rule.name = std::move(name);
  l.rule.lhs = eg::Pattern::parse(lhs);
  l.rule.apply = safeApply(std::move(apply));
  l.rule.guard = safeGuard(std::move(guard));
  return l;
}

Lemma readsOnlyMatch(Lemma l) {
  l.rule.local = true;
  return l;
}

}  // namespace tangle::lemmas::detail

namespace tangle::lemmas {

const std::vector<Lemma>& lemmaTable() {
  static const std::vector<Lemma> table = [] {
    std::vector<Lemma> t;
    detail::addRearrangeLemmas(t);
    detail::addSumLemmas(t);
    detail::addElementwiseLemmas(t);
    detail::addMatmulLemmas(t);
    detail::addNormLemmas(t);
    detail::addModelLemmas(t);
    detail::addSdpaLemmas(t);
    detail::addSdpaSequenceLemmas(t);
    detail::addSdpaMergeLemmas(t);
    detail::addSdpaBackwardRingLemmas(t);
    detail::addSdpaBackwardSumLemmas(t);
    detail::addRegroupLemmas(t);
    detail::addVocabLemmas(t);
    detail::addArithLemmas(t);
    detail::addScaleLemmas(t);
    detail::addSelectLemmas(t);
    detail::addGqaLemmas(t);
    detail::addZeroLemmas(t);
    detail::addMoeLemmas(t);
    detail::addCompareLemmas(t);
    detail::addSignLemmas(t);
    detail::addEquivLemmas(t);
    detail::addRotaryLemmas(t);
    detail::addArangeLemmas(t);
    detail::addTypedConstLemmas(t);
    detail::addAccumLemmas(t);
    detail::addPadSliceLemmas(t);
    std::unordered_map<std::string, int> seen;
    for (const Lemma& l : t)
      if (seen[l.rule.name]++) throw std::logic_error("duplicate lemma name " + l.rule.name);
    return t;
  }();
  return table;
}

const std::vector<eg::Rule>& allLemmas() {
  static const std::vector<eg::Rule> rules = [] {
    std::vector<eg::Rule> r;
    for (const Lemma& l : lemmaTable()) r.push_back(l.rule);
    return r;
  }();
  return rules;
}

std::vector<eg::Rule> lemmasNamed(const std::vector<std::string>& names) {
  std::vector<eg::Rule> out;
  for (const std::string& name : names) {
    const Lemma* found = nullptr;
    for (const Lemma& l : lemmaTable())
      if (l.rule.name == name) found = &l;
    if (!found) throw std::invalid_argument("unknown lemma '" + name + "'");
    out.push_back(found->rule);
  }
  return out;
}

}  // namespace tangle::lemmas
