// Lemmas over integer ranges, arange[start, end, step] (i64): a range is a
// slice of any longer range of the same step that covers it, shifting one by
// a scalar shifts its bounds, and rows picked by a range are a slice. They
// meet two programs that build the same table from positions in different
// ways (HF computes rotary tables from arange(T); vLLM from arange(max_pos)
// and then picks T rows), and HF's position arithmetic (arange + 0).
#include <algorithm>
#include <cmath>

#include "lemmas/lemma_util.h"

namespace tangle::lemmas::detail {

namespace {

struct Range {
  int64_t start, end, step;
  int64_t size() const {
    if (step > 0) return end > start ? (end - start + step - 1) / step : 0;
    return start > end ? (start - end - step - 1) / -step : 0;
  }
};

eg::Symbol arangeSym() {
  static const eg::Symbol s = eg::intern("arange");
  return s;
}

std::optional<Range> rangeOf(const AttrList& a) {
  if (a.size() != 3) return std::nullopt;
  for (const Attr& x : a)
    if (x.kind != Attr::Kind::Int) return std::nullopt;
  if (a[2].i == 0) return std::nullopt;
  return Range{a[0].i, a[1].i, a[2].i};
}

std::optional<Range> rangeOfMatch(const Match& m) {
  return rangeOf({m.subst.attr("a"), m.subst.attr("b"), m.subst.attr("s")});
}

std::optional<Id> makeRange(EGraph& g, const Range& r) {
  return make(g, arangeSym(), {Attr::integer(r.start), Attr::integer(r.end), Attr::integer(r.step)}, {});
}

// arange(a, b, s) = slice[0, i, i + n](arange(A, B, s)) for an arange(A, B, s)
// already in the e-graph holding it: same step, a = A + i*s, the n values of
// the short range among the longer one's.
std::optional<Id> subrange(EGraph& g, const Match& m) {
  auto r = rangeOfMatch(m);
  if (!r || r->step < 0) return std::nullopt;
  int64_t n = r->size();
  // Search control (skipping is sound): a one-element range (HF's batch
  // index arange(1)) as a slice of every longer range only feeds the mask
  // rules, 2.5x the e-nodes of an HF TP check; tables need several rows.
  if (n < 2) return std::nullopt;
  for (Id c = 0; c < g.numIds(); ++c) {
    if (g.find(c) != c) continue;
    for (const ENode* node : nodesOf(g, c, arangeSym())) {
      auto big = rangeOf(attrsOf(*node));
      if (!big || big->step != r->step || big->size() <= n) continue;
      int64_t off = r->start - big->start;
      if (off < 0 || off % r->step) continue;
      int64_t i = off / r->step;
      if (i + n > big->size()) continue;
      auto s = make(g, op().slice, {Attr::integer(0), Attr::integer(i), Attr::integer(i + n), Attr::integer(1)}, {c});
      if (s) return s;
    }
  }
  return std::nullopt;
}

// arange(a, b, s) + c = arange(a + c, b + c, s) (and - c) for an integral
// scalar c: every element moves by c.
Apply shifted(bool add, bool constOnLeft) {
  return [add, constOnLeft](EGraph& g, const Match& m) -> std::optional<Id> {
    auto r = rangeOfMatch(m);
    auto c = scalarConstant(g, m.subst.cls("c"));
    // dtypes: the sum must stay an i64 range. A scalar of a floating dtype
    // (a 0-d f32 tensor holding 3.0) promotes the sum to f32 even when its
    // value is integral; only a literal (no dtype) or an integer scalar keeps it.
    const TensorType *t = typeOf(g, m.eclass), *ct = typeOf(g, m.subst.cls("c"));
    if (!r || !c || !t || !ct || t->dtype != DType::I64 || isFloating(ct->dtype) || std::nearbyint(*c) != *c ||
        std::fabs(*c) > 1e15)
      return std::nullopt;
    int64_t k = static_cast<int64_t>(*c);
    if (!add && constOnLeft) return std::nullopt;  // c - arange reverses the order
    if (!add) k = -k;
    return makeRange(g, Range{r->start + k, r->end + k, r->step});
  };
}

// index_rows(x, arange(a, b, s)) = slice[0, a, b, s](x): rows a, a+s, ... of x
// when they exist (0 <= a, last < rows of x).
std::optional<Id> rowsOfRange(EGraph& g, const Match& m) {
  auto r = rangeOfMatch(m);
  Id x = m.subst.cls("x");
  auto rows = sizeOf(g, x, 0);
  const TensorType *xt = typeOf(g, x), *out = typeOf(g, m.eclass);
  if (!xt || !out || xt->dtype != out->dtype) return std::nullopt;  // rows keep x's dtype
  if (!r || !rows || r->step < 1 || r->size() < 1 || r->start < 0) return std::nullopt;
  int64_t last = r->start + (r->size() - 1) * r->step;
  if (last >= *rows) return std::nullopt;
  int64_t end = std::min(r->end, *rows);
  return make(g, op().slice, {Attr::integer(0), Attr::integer(r->start), Attr::integer(end), Attr::integer(r->step)},
              {x});
}

// op(slice[d](a), b) = slice[d](op(a, b)) when b broadcasts along d by not
// having that dim (b of a lower rank, not 0-d): each kept element of a meets
// the same b.
Apply sliceThroughBroadcast(eg::Symbol sym, bool sliceOnLeft) {
  return [sym, sliceOnLeft](EGraph& g, const Match& m) -> std::optional<Id> {
    Id a = m.subst.cls("a"), b = m.subst.cls("b");
    const TensorType *at = typeOf(g, a), *bt = typeOf(g, b), *out = typeOf(g, m.eclass);
    const Attr& da = m.subst.attr("d");
    // b a 0-d scalar is left to the scalar rules (here it made HF's position arithmetic explode)
    if (!at || !bt || !out || da.kind != Attr::Kind::Int || at->dtype != bt->dtype || out->dtype != at->dtype ||
        bt->rank() == 0)
      return std::nullopt;
    int64_t R = out->rank(), d = da.i < 0 ? da.i + at->rank() : da.i;
    if (at->rank() != R || d < 0 || d >= R) return std::nullopt;  // a sets the result's rank
    int64_t db = d - (R - bt->rank());
    if (db >= 0) return std::nullopt;  // a unit dim of b there would do too, but then slices of unit dims multiply
    // a concatenated along d: slice-concat takes the slice to a's pieces, while
    // the product of b with all of a is distributed over every piece, a new
    // product per (slice, piece) pair: quadratic in the pieces (microbatches x
    // replicas of a pipeline's batch). The artifact, pipeline and TrainVerify
    // checks prove the same relations without it (tv13, session 13).
    for (const ENode* c : nodesOf(g, a, op().concat))
      if (c->children.size() >= 2 && ops::attrInt(attrsOf(*c), 0) == d) return std::nullopt;
    auto whole = sliceOnLeft ? make(g, sym, {}, {a, b}) : make(g, sym, {}, {b, a});
    if (!whole) return std::nullopt;
    return make(g, op().slice, {Attr::integer(d), m.subst.attr("s"), m.subst.attr("e"), m.subst.attr("st")}, {*whole});
  };
}

// op(a, reshape[[1]*k ++ shape(b)](b)) = op(a, b) (either side) when a's rank
// is at least the reshaped operand's: broadcasting aligns dims from the right,
// so leading unit dims that do not raise the result's rank change nothing.
Apply dropBroadcastUnitLead(eg::Symbol sym, bool onLeft) {
  return [sym, onLeft](EGraph& g, const Match& m) -> std::optional<Id> {
    Id a = m.subst.cls("a"), y = m.subst.cls("y");
    const TensorType *at = typeOf(g, a), *yt = typeOf(g, y);
    const TensorType* out = typeOf(g, m.eclass);
    if (!at || !yt || !out || at->rank() < yt->rank()) return std::nullopt;
    for (const ENode* n : nodesOf(g, y, op().reshape)) {
      Id b = n->children[0];
      const TensorType* bt = typeOf(g, b);
      if (!bt || bt->rank() >= yt->rank() || bt->dtype != yt->dtype) continue;
      size_t k = static_cast<size_t>(yt->rank() - bt->rank());
      bool ok = true;
      for (size_t i = 0; i < yt->shape.size() && ok; ++i)
        ok = i < k ? yt->shape[i] == 1 : yt->shape[i] == bt->shape[i - k];
      if (!ok) continue;
      return onLeft ? make(g, sym, {}, {b, a}) : make(g, sym, {}, {a, b});
    }
    return std::nullopt;
  };
}

// op(x, e) = x for the identity e of op on that side (x + 0, 0 + x, x - 0,
// x * 1, 1 * x, x / 1) when the result keeps x's type: HF scales rotary
// tables by attention_scaling (1.0 for default RoPE) and shifts positions by
// 0. These remove the identity ops that isIdentityOperand keeps from moving.
Apply identityOp(double e) {
  return [e](EGraph& g, const Match& m) -> std::optional<Id> {
    Id x = m.subst.cls("x");
    auto c = scalarConstant(g, m.subst.cls("c"));
    const TensorType *xt = typeOf(g, x), *out = typeOf(g, m.eclass);
    if (!c || *c != e || !xt || !out || xt->dtype != out->dtype || xt->shape != out->shape) return std::nullopt;
    return g.find(x);
  };
}

}  // namespace

void addArangeLemmas(std::vector<Lemma>& out) {
  out.push_back(applier("arange-subrange",
                        "constrained: arange(a, b, s) = slice[0, i, i+n](arange(A, B, s)) for an existing longer "
                        "arange of the same step holding it (a = A + i*s)",
                        "(arange[?a, ?b, ?s])", subrange));
  out.push_back(applier("add-arange-scalar", "add(arange(a, b, s), c) = arange(a+c, b+c, s), c an integral scalar",
                        "(add (arange[?a, ?b, ?s]) ?c)", shifted(true, false)));
  out.push_back(applier("add-scalar-arange", "add(c, arange(a, b, s)) = arange(a+c, b+c, s), c an integral scalar",
                        "(add ?c (arange[?a, ?b, ?s]))", shifted(true, true)));
  out.push_back(applier("sub-arange-scalar", "sub(arange(a, b, s), c) = arange(a-c, b-c, s), c an integral scalar",
                        "(sub (arange[?a, ?b, ?s]) ?c)", shifted(false, false)));
  out.push_back(applier("index_rows-arange",
                        "index_rows(x, arange(a, b, s)) = slice[0, a, b, s](x) when those rows exist",
                        "(index_rows ?x (arange[?a, ?b, ?s]))", rowsOfRange));
  out.push_back(applier("mul-one-rhs", "mul(x, 1) = x for the scalar constant 1 (x's type kept)", "(mul ?x ?c)",
                        identityOp(1)));
  out.push_back(applier("mul-one-lhs", "mul(1, x) = x for the scalar constant 1 (x's type kept)", "(mul ?c ?x)",
                        identityOp(1)));
  out.push_back(applier("div-one", "div(x, 1) = x for the scalar constant 1 (x's type kept)", "(div ?x ?c)",
                        identityOp(1)));
  out.push_back(applier("add-zero-rhs", "add(x, 0) = x for the scalar constant 0 (x's type kept)", "(add ?x ?c)",
                        identityOp(0)));
  out.push_back(applier("add-zero-lhs", "add(0, x) = x for the scalar constant 0 (x's type kept)", "(add ?c ?x)",
                        identityOp(0)));
  out.push_back(applier("sub-zero", "sub(x, 0) = x for the scalar constant 0 (x's type kept)", "(sub ?x ?c)",
                        identityOp(0)));
  // Products only: vLLM's outer product t[:, None] * inv_freq. The add / sub /
  // div versions (true too) cost HF TP checks seconds and no proof needed them.
  const std::pair<const char*, eg::Symbol> binaries[] = {{"mul", op().mul}};
  for (const auto& [name, sym] : binaries) {
    std::string n = name;
    out.push_back(applier(n + "-broadcast-unit-lead-rhs",
                          n + "(a, reshape[[1]*k ++ shape(b)](b)) = " + n + "(a, b) when a's rank is at least the reshape's",
                          "(" + n + " ?a ?y)", dropBroadcastUnitLead(sym, false)));
    out.push_back(applier(n + "-broadcast-unit-lead-lhs",
                          n + "(reshape[[1]*k ++ shape(b)](b), a) = " + n + "(b, a) when a's rank is at least the reshape's",
                          "(" + n + " ?y ?a)", dropBroadcastUnitLead(sym, true)));
    out.push_back(applier(n + "-slice-broadcast-lhs",
                          n + "(slice[d](a), b) = slice[d](" + n + "(a, b)) when b, of a lower rank, has no dim d",
                          "(" + n + " (slice[?d, ?s, ?e, ?st] ?a) ?b)", sliceThroughBroadcast(sym, true)));
    out.push_back(applier(n + "-slice-broadcast-rhs",
                          n + "(b, slice[d](a)) = slice[d](" + n + "(b, a)) when b, of a lower rank, has no dim d",
                          "(" + n + " ?b (slice[?d, ?s, ?e, ?st] ?a))", sliceThroughBroadcast(sym, false)));
  }
}

}  // namespace tangle::lemmas::detail
