#include "report/precision.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <utility>

#include "infer/leaf_names.h"

namespace tangle {

namespace {

using Cast = std::pair<DType, DType>;

// (from, to) when node `id` is a cast between two different float dtypes.
std::optional<Cast> floatCast(const LGraph& lg, int id) {
  const LNode& n = lg.node(id);
  if (n.aliasOf >= 0 || n.def.nodes.size() != 1 || n.def.nodes.back().op != ops::syms().cast || n.operands.size() != 1)
    return std::nullopt;
  const TensorType* in = lg.node(n.operands[0]).data.tensor();
  const TensorType* out = n.data.tensor();
  if (!in || !out || !isFloating(in->dtype) || !isFloating(out->dtype) || in->dtype == out->dtype) return std::nullopt;
  return Cast{in->dtype, out->dtype};
}

// A power of two (1/2, 2, 8, ...): scaling by it is exact in every binary float dtype (short of
// overflow or subnormals), so where each side applies it does not change the rounding.
bool isPowerOfTwo(double v) {
  int exp = 0;
  return v > 0 && std::isfinite(v) && std::frexp(v, &exp) == 0.5;
}

// The number a CanonTerm reference stands for: a scalar, or a local constant taken through casts
// and broadcasts (the splat form expand[shape](cast[dtype](const v))).
std::optional<double> numberOf(const CanonTerm& t, const CanonTerm::Ref& r, int depth = 0) {
  if (r.kind == CanonTerm::Ref::Kind::Scalar) return r.scalar;
  if (r.kind != CanonTerm::Ref::Kind::Local || depth > 8) return std::nullopt;
  const CanonTerm::Node& n = t.nodes[r.local];
  const ops::Syms& y = ops::syms();
  if (n.op == y.constant) return eg::attrNumber(n.attrs, 0);
  if ((n.op == y.cast || n.op == y.expand) && n.children.size() == 1) return numberOf(t, n.children[0], depth + 1);
  return std::nullopt;
}

// The tensor operand of a node that scales it by a power of two (x * 2^k, 2^k * x, x / 2^k),
// else -1: such a node moves rounded values without rounding them again.
int exactlyScaled(const LNode& n) {
  if (n.def.nodes.size() > 4 || n.def.nodes.empty()) return -1;
  const CanonTerm::Node& root = n.def.nodes.back();
  const ops::Syms& y = ops::syms();
  if ((root.op != y.mul && root.op != y.div) || root.children.size() != 2) return -1;
  for (size_t k = 0; k < 2; ++k) {
    const CanonTerm::Ref &x = root.children[k], &s = root.children[1 - k];
    if (x.kind != CanonTerm::Ref::Kind::Operand || (root.op == y.div && k == 1)) continue;  // not 2^k / x
    if (auto v = numberOf(n.def, s); v && isPowerOfTwo(*v)) return x.operand;
  }
  return -1;
}

// The dtype of a local value of a lifted definition (src/lower/fold_rearrange.h): rearrangements
// and the elementwise ops a rearrangement is lifted over keep their first tensor child's dtype.
std::optional<DType> refDtype(const LGraph& lg, const CanonTerm& def, const CanonTerm::Ref& r, int depth = 0) {
  if (r.kind == CanonTerm::Ref::Kind::Operand) {
    const TensorType* t = lg.node(lg.resolve(r.operand)).data.tensor();
    return t ? std::optional<DType>(t->dtype) : std::nullopt;
  }
  if (r.kind != CanonTerm::Ref::Kind::Local || depth > 64) return std::nullopt;
  const CanonTerm::Node& t = def.nodes[static_cast<size_t>(r.local)];
  const ops::Syms& y = ops::syms();
  if (t.op == y.cast) {
    if (t.attrs.empty() || t.attrs[0].kind != eg::Attr::Kind::Str) return std::nullopt;
    return parseDType(eg::symbolName(static_cast<eg::Symbol>(t.attrs[0].i)));
  }
  if (!ops::isGatherOp(t.op) && t.op != y.sum && t.op != y.add && t.op != y.sub && t.op != y.mul && t.op != y.div &&
      t.op != y.neg)
    return std::nullopt;
  for (const CanonTerm::Ref& c : t.children)
    if (c.kind != CanonTerm::Ref::Kind::Scalar) return refDtype(lg, def, c, depth + 1);
  return std::nullopt;
}

// (from, to) when node `id`'s definition is rearrangements of a float cast of a value computed in
// the definition itself: a rearrangement lifted over the cast below it (fold_rearrange.h), e.g. an
// FSDP gradient shard as the slice of the cast of the reduced gradient.
std::optional<Cast> inlineCast(const LGraph& lg, int id, int* from = nullptr) {
  const LNode& n = lg.node(id);
  if (n.aliasOf >= 0 || n.isInput || n.def.nodes.empty() || n.data.tuple) return std::nullopt;
  int at = static_cast<int>(n.def.nodes.size()) - 1;
  for (size_t guard = 0; guard <= n.def.nodes.size(); ++guard) {
    const CanonTerm::Node& t = n.def.nodes[static_cast<size_t>(at)];
    if (t.op == ops::syms().cast) {
      if (t.children.size() != 1 || t.children[0].kind != CanonTerm::Ref::Kind::Local) return std::nullopt;
      CanonTerm::Ref self{CanonTerm::Ref::Kind::Local, -1, at, 0};
      auto src = refDtype(lg, n.def, t.children[0]), to = refDtype(lg, n.def, self);
      if (!src || !to || !isFloating(*src) || !isFloating(*to) || *src == *to) return std::nullopt;
      if (from) *from = t.inlinedFrom;
      return Cast{*src, *to};
    }
    if (!ops::isGatherOp(t.op) || t.children.size() != 1 || t.children[0].kind != CanonTerm::Ref::Kind::Local)
      return std::nullopt;
    at = t.children[0].local;
  }
  return std::nullopt;
}

// The casts that computed the values of `id`, like `c`: followed back through pure
// rearrangements (views, slices, FSDP's as_strided pieces of a buffer, and the concat of pieces a
// folded parameter is: src/lower/fold_rearrange.h), identity ops and scalings by a power of two,
// which move values without rounding them. False when some of its values come from anything else.
bool castSources(const LGraph& lg, int id, const Cast& c, std::vector<int>& out, int depth = 0) {
  id = lg.resolve(id);
  if (floatCast(lg, id) == c) {
    out.push_back(id);
    return true;
  }
  int from = -1;
  if (inlineCast(lg, id, &from) == c) {  // and the cast tensor it was inlined from
    out.push_back(id);
    if (from >= 0) out.push_back(from);
    return true;
  }
  const LNode& n = lg.node(id);
  if (n.isInput || n.operands.empty() || n.def.nodes.empty() || depth > 64) return false;
  if (int x = exactlyScaled(n); x >= 0) return castSources(lg, x, c, out, depth + 1);
  for (const CanonTerm::Node& t : n.def.nodes)
    if (!ops::isGatherOp(t.op)) return false;
  for (int o : n.operands)
    if (!castSources(lg, o, c, out, depth + 1)) return false;
  return true;
}

// Every value of node `id` is 0: an empty tensor, a splat of 0 (zeros, constant_pad_nd's fill) or
// rearrangements and casts of such. Converting zeros between float dtypes is exact: an empty
// shard's padding cast to the compute dtype (FSDP2 with more ranks than rows) rounds nothing.
bool allZeros(const LGraph& lg, int id, int depth = 0) {
  id = lg.resolve(id);
  const LNode& n = lg.node(id);
  if (const TensorType* t = n.data.tuple ? nullptr : n.data.tensor())
    if (std::any_of(t->shape.begin(), t->shape.end(), [](Dim d) { return d == 0; })) return true;
  if (n.isInput || n.def.nodes.empty() || depth > 64) return false;
  const ops::Syms& y = ops::syms();
  for (const CanonTerm::Node& t : n.def.nodes) {
    if (t.op == y.constant) {
      auto v = eg::attrNumber(t.attrs, 0);
      if (!v || *v != 0) return false;
      continue;
    }
    if (t.op != y.cast && !ops::isGatherOp(t.op)) return false;
    for (const CanonTerm::Ref& r : t.children) {
      if (r.kind == CanonTerm::Ref::Kind::Scalar && r.scalar != 0) return false;
      if (r.kind == CanonTerm::Ref::Kind::Operand && !allZeros(lg, r.operand, depth + 1)) return false;
    }
  }
  return true;
}

// A constant power of two in a relation term.
bool isPowerOfTwo(const eg::Term::Node& n) {
  if (n.op != ops::syms().constant) return false;
  const eg::AttrList& a = eg::attrs(n.attrs);
  if (a.size() != 1 || (a[0].kind != eg::Attr::Kind::Float && a[0].kind != eg::Attr::Kind::Int)) return false;
  return isPowerOfTwo(a[0].kind == eg::Attr::Kind::Float ? a[0].f : static_cast<double>(a[0].i));
}

// A product or quotient of a tensor by a power of two: a scaling the two sides may apply at
// different places (the loss gradient's 1/rows on the spec, the average over 2 ranks later on the
// implementation) with the cast still at the same values on both sides. Any other constant rounds.
bool isExactScaling(const eg::Term& t, const eg::Term::Node& n) {
  if (n.children.size() != 2) return false;
  if (n.op == ops::syms().div) return isPowerOfTwo(t.nodes[n.children[1]]);  // x / 2^k, not 2^k / x
  return n.op == ops::syms().mul && (isPowerOfTwo(t.nodes[n.children[0]]) || isPowerOfTwo(t.nodes[n.children[1]]));
}

// The implementation casts a relation term of a spec cast `c` relates it to: every implementation
// tensor of the term must have been computed by a cast like `c` (through rearrangements), and the
// term may only rearrange them or scale them by a power of two. A term that sums them (over the
// ranks) or computes with them otherwise does not match: there the implementation casts before it
// reduces, the spec after.
std::optional<std::vector<int>> relatedCasts(const eg::Term& t, const LGraph& spec, const LGraph& impl,
                                             const Cast& c) {
  std::vector<int> out;
  for (const eg::Term::Node& n : t.nodes) {
    auto id = leaves::leafNode(spec, impl, n.op, n.attrs);
    if (!id) {
      if (!ops::isGatherOp(n.op) && !isPowerOfTwo(n) && !isExactScaling(t, n)) return std::nullopt;
      continue;
    }
    if (leaves::isSpecLeaf(n.op, n.attrs)) return std::nullopt;
    if (!castSources(impl, *id, c, out)) return std::nullopt;
  }
  if (out.empty()) return std::nullopt;
  return out;
}

std::string describe(const LGraph& lg, int id, const Cast& c) {
  const Node& n = lg.origin(id);
  return lg.node(id).name + " (" + n.loc.file + ":" + std::to_string(n.loc.line) + ", " + dtypeName(c.first) + " -> " +
         dtypeName(c.second) + ")";
}

std::string listed(const std::vector<std::string>& xs) {
  std::string s;
  for (size_t i = 0; i < xs.size() && i < 2; ++i) s += (i ? ", " : "") + xs[i];
  if (xs.size() > 2) s += " and " + std::to_string(xs.size() - 2) + " more";
  return s;
}

}  // namespace

// Casts are related through the certificate, not by their place in either graph: a spec cast
// matches the implementation casts that computed the tensors its relation is made of. Each side
// then converts the same value between the same two dtypes; any cast left unmatched converts at a
// place the other side does not, so the two round differently from there on.
std::string precisionNote(const InferResult& r, const LGraph& spec, const LGraph& impl) {
  if (r.verdict != Verdict::Refines) return "";
  std::set<int> matched;
  std::vector<std::string> specOnly, implOnly;
  for (const TensorRelations& rel : r.all) {
    auto c = rel.node >= 0 ? floatCast(spec, rel.node) : std::nullopt;
    if (!c) continue;
    bool found = false;
    for (const eg::Term& t : rel.exprs)
      if (auto casts = relatedCasts(t, spec, impl, *c)) {
        found = true;
        matched.insert(casts->begin(), casts->end());
      }
    if (!found) specOnly.push_back(describe(spec, rel.node, *c));
  }
  // Only the casts an output's values depend on: a folded chain's cast computes nothing returned
  // unless folding inlined it. Liveness is a walk of the whole graph: only when there is a cast.
  std::vector<std::pair<int, Cast>> casts;
  for (int id = 0; id < static_cast<int>(impl.nodes.size()); ++id) {
    if (matched.count(id)) continue;
    if (auto c = floatCast(impl, id); c && !allZeros(impl, impl.node(id).operands[0])) casts.emplace_back(id, *c);
    else if (auto ci = inlineCast(impl, id); ci && !allZeros(impl, id)) casts.emplace_back(id, *ci);
  }
  if (!casts.empty()) {
    std::vector<bool> live(impl.nodes.size(), false);
    std::vector<int> stack;
    for (size_t i = 0; i < impl.nodes.size(); ++i)
      if (impl.nodes[i].isOutput) stack.push_back(impl.resolve(static_cast<int>(i)));
    while (!stack.empty()) {
      int i = stack.back();
      stack.pop_back();
      if (live[static_cast<size_t>(i)]) continue;
      live[static_cast<size_t>(i)] = true;
      // the tensors whose definitions folding inlined into this one compute its values
      for (const CanonTerm::Node& t : impl.nodes[static_cast<size_t>(i)].def.nodes)
        if (t.inlinedFrom >= 0) live[static_cast<size_t>(t.inlinedFrom)] = true;
      // an empty tensor holds no value of its operands (an empty shard's view of the buffer)
      const LNode& n = impl.nodes[static_cast<size_t>(i)];
      if (const TensorType* t = n.data.tuple ? nullptr : n.data.tensor())
        if (std::any_of(t->shape.begin(), t->shape.end(), [](Dim d) { return d == 0; })) continue;
      for (int o : n.operands) stack.push_back(impl.resolve(o));
    }
    for (auto& [id, c] : casts)
      if (live[static_cast<size_t>(id)]) implOnly.push_back(describe(impl, id, c));
  }
  if (specOnly.empty() && implOnly.empty()) return "";
  std::string s = "refines over the reals; precision differs at ";
  if (!specOnly.empty()) s += listed(specOnly) + " (spec casts the implementation does not match)";
  if (!specOnly.empty() && !implOnly.empty()) s += ", ";
  if (!implOnly.empty()) s += listed(implOnly) + " (implementation casts the spec does not match)";
  return s;
}

}  // namespace tangle
