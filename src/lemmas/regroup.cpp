// Reshapes that only merge runs of consecutive dims ("groupings"), and how
// rearrangements and batched products move through them. Attention code
// flattens (batch, heads) into one batch dim; these lemmas let a concat over
// heads be seen through that flattening.
#include <numeric>

#include "lemmas/lemma_util.h"

namespace tangle::lemmas::detail {

namespace {

// If `to` merges runs of consecutive dims of `from` (each to[j] the product of
// a run; a run may be empty only when to[j] == 1), the run lengths; else nullopt.
std::optional<std::vector<int64_t>> groupRuns(const Shape& from, const Shape& to) {
  std::vector<int64_t> runs;
  size_t i = 0;
  for (size_t j = 0; j < to.size(); ++j) {
    if (to[j] < 0) return std::nullopt;
    int64_t prod = 1, len = 0;
    while (i < from.size() && prod < to[j]) {
      if (from[i] <= 0) return std::nullopt;  // symbolic or empty dims: refuse
      prod *= from[i++];
      ++len;
    }
    if (prod != to[j]) return std::nullopt;
    runs.push_back(len);
  }
  // Trailing unit dims of `from` join the last run.
  while (i < from.size() && from[i] == 1 && !runs.empty()) ++runs.back(), ++i;
  if (i != from.size()) return std::nullopt;
  return runs;
}

// permute[p](reshape[B](x)) = reshape[B_p](permute[p'](x)), B a grouping of
// shape(x): permuting merged dims permutes their runs as blocks.
std::optional<Id> permuteThroughGrouping(EGraph& g, Id x, const Shape& to, const std::vector<int64_t>& p) {
  const TensorType* xt = typeOf(g, x);
  if (!xt || p.size() != to.size()) return std::nullopt;
  auto runs = groupRuns(xt->shape, to);
  if (!runs) return std::nullopt;
  std::vector<int64_t> start(runs->size() + 1, 0);
  std::partial_sum(runs->begin(), runs->end(), start.begin() + 1);
  std::vector<int64_t> fine;
  Shape coarse;
  for (int64_t j : p) {
    if (j < 0 || j >= static_cast<int64_t>(to.size())) return std::nullopt;
    for (int64_t k = start[j]; k < start[j + 1]; ++k) fine.push_back(k);
    coarse.push_back(to[j]);
  }
  if (fine.size() != xt->shape.size()) return std::nullopt;  // p was not a permutation
  auto perm = make(g, op().permute, {Attr::ints(fine)}, {x});
  if (!perm) return std::nullopt;
  return make(g, op().reshape, {Attr::ints(coarse)}, {*perm});
}

std::optional<Id> permuteOfGrouping(EGraph& g, const Match& m) {
  const Attr& p = m.subst.attr("p");
  const Attr& s = m.subst.attr("s");
  if (p.kind != Attr::Kind::IntList || s.kind != Attr::Kind::IntList) return std::nullopt;
  return permuteThroughGrouping(g, m.subst.cls("x"), s.list, p.list);
}

std::optional<Id> transposeOfGrouping(EGraph& g, const Match& m) {
  const Attr& s = m.subst.attr("s");
  if (s.kind != Attr::Kind::IntList) return std::nullopt;
  std::vector<int64_t> p(s.list.size());
  std::iota(p.begin(), p.end(), 0);
  int64_t a = m.subst.integer("a"), b = m.subst.integer("b");
  if (a < 0 || b < 0 || a >= static_cast<int64_t>(p.size()) || b >= static_cast<int64_t>(p.size())) return std::nullopt;
  std::swap(p[a], p[b]);
  return permuteThroughGrouping(g, m.subst.cls("x"), s.list, p);
}

// bmm(reshape[[b,n,k]](P), reshape[[b,k,m]](Q)) = reshape[[b,n,m]](matmul(P, Q))
// when P = [G.., n, k] and Q = [G.., k, m] with prod(G) = b.
std::optional<Id> bmmOfGroupedBatch(EGraph& g, const Match& m) {
  Id P = m.subst.cls("P"), Q = m.subst.cls("Q");
  const TensorType *pt = typeOf(g, P), *qt = typeOf(g, Q), *out = typeOf(g, m.eclass);
  if (!pt || !qt || !out || pt->rank() < 3 || pt->rank() != qt->rank() || out->rank() != 3) return std::nullopt;
  size_t r = pt->shape.size();
  for (size_t i = 0; i + 2 < r; ++i)
    if (pt->shape[i] != qt->shape[i] || pt->shape[i] < 0) return std::nullopt;
  int64_t batch = 1;
  for (size_t i = 0; i + 2 < r; ++i) batch *= pt->shape[i];
  // The flattening must keep the matrix dims as they are.
  const Attr& sp = m.subst.attr("sp");
  const Attr& sq = m.subst.attr("sq");
  if (sp.kind != Attr::Kind::IntList || sq.kind != Attr::Kind::IntList) return std::nullopt;
  if (sp.list != std::vector<int64_t>{batch, pt->shape[r - 2], pt->shape[r - 1]}) return std::nullopt;
  if (sq.list != std::vector<int64_t>{batch, qt->shape[r - 2], qt->shape[r - 1]}) return std::nullopt;
  auto mm = make(g, op().matmul, {}, {P, Q});
  if (!mm) return std::nullopt;
  return make(g, op().reshape, {Attr::ints(out->shape)}, {*mm});
}

// Constrained: for an existing y = reshape[s](x), x = reshape[shape(x)](y).
// Reshapes are invertible; this lets a value that the implementation only
// holds flattened be named through the flattened tensor. Merges into x's
// class directly (the match is rooted at y), so it returns nullopt.
std::optional<Id> reshapeInverse(EGraph& g, const Match& m) {
  Id x = m.subst.cls("x");
  const TensorType* xt = typeOf(g, x);
  if (!xt) return std::nullopt;
  for (Dim d : xt->shape)
    if (d < 0) return std::nullopt;
  // Usually an earlier application put the inverse in x's class: found there without building
  // (and interning) its attributes. Only a node that exists is recognized, so nothing is lost.
  Id y = g.find(m.eclass);
  for (const ENode& n : g.eclass(x).nodes) {
    if (n.op != op().reshape || n.children.size() != 1 || g.find(n.children[0]) != y) continue;
    const eg::AttrList& a = eg::attrs(n.attrs);
    if (a.size() == 1 && a[0].kind == Attr::Kind::IntList && a[0].list == xt->shape) return std::nullopt;
  }
  ENode back{op().reshape, eg::internAttrs({Attr::ints(xt->shape)}), {y}};
  if (g.lookup(back)) return std::nullopt;
  auto id = g.tryAdd(back);
  if (id) g.merge(*id, x);
  return std::nullopt;
}

// A 0-d operand (its value need not be known).
bool isScalar(const EGraph& g, Id c) {
  const TensorType* t = typeOf(g, c);
  return t && t->shape.empty();
}

}  // namespace

void addRegroupLemmas(std::vector<Lemma>& out) {
  out.push_back(readsOnlyMatch(
      applier("permute-grouping", "permute[p](reshape[B](x)) = reshape[B_p](permute[p'](x)), B merges runs of shape(x)",
                        "(permute[?p] (reshape[?s] ?x))", permuteOfGrouping)));
  out.push_back(readsOnlyMatch(
      applier("transpose-grouping", "transpose[a,b](reshape[B](x)) = reshape[B'](permute[p'](x)), B merges runs of shape(x)",
                        "(transpose[?a, ?b] (reshape[?s] ?x))", transposeOfGrouping)));
  out.push_back(applier("bmm-grouped-batch",
                        "bmm(reshape[b,n,k](P), reshape[b,k,m](Q)) = reshape[b,n,m](matmul(P, Q)), P = [G,n,k], Q = [G,k,m], prod G = b",
                        "(bmm (reshape[?sp] ?P) (reshape[?sq] ?Q))", bmmOfGroupedBatch));
  out.push_back(readsOnlyMatch(
      applier("reshape-inverse", "for an existing y = reshape[s](x): x = reshape[shape(x)](y) (constrained)",
                        "(reshape[?s] ?x)", reshapeInverse)));
  // A 0-d operand commutes with every rearrangement of the other one.
  // An identity operand (x + 0, x * 1) is not moved: isIdentityOperand.
  for (const char* f : {"add", "sub", "mul", "div"}) {
    std::string F = f;
    eg::Symbol sym = eg::intern(f);
    auto scalarOn = [sym](bool onLeft) -> Guard {
      return [sym, onLeft](const EGraph& g, Subst& s) {
        return isScalar(g, s.cls("c")) && !isIdentityOperand(g, sym, s.cls("c"), onLeft);
      };
    };
    for (const char* r : {"reshape", "permute"}) {
      std::string R = r;
      out.push_back(rewrite(F + "-scalar-" + R, F + "(" + R + "(x), c) = " + R + "(" + F + "(x, c)), c 0-d",
                            "(" + F + " (" + R + "[?s] ?x) ?c)", "(" + R + "[?s] (" + F + " ?x ?c))", scalarOn(false)));
      out.push_back(rewrite(F + "-scalar-" + R + "-rhs", F + "(c, " + R + "(x)) = " + R + "(" + F + "(c, x)), c 0-d",
                            "(" + F + " ?c (" + R + "[?s] ?x))", "(" + R + "[?s] (" + F + " ?c ?x))", scalarOn(true)));
    }
    out.push_back(rewrite(F + "-scalar-transpose", F + "(transpose(x), c) = transpose(" + F + "(x, c)), c 0-d",
                          "(" + F + " (transpose[?a, ?b] ?x) ?c)", "(transpose[?a, ?b] (" + F + " ?x ?c))",
                          scalarOn(false)));
  }
}

}  // namespace tangle::lemmas::detail
