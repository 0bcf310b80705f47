// Lemmas that meet two ways of writing rotary position embeddings (RoPE):
// HF's q*cos + rotate_half(q)*sin, rotate_half(x) = cat(-x2, x1), and the
// split ("neox") form cat(x1*cos - x2*sin, x2*cos + x1*sin) of vLLM. Once the
// products are split at the half (mul-concat-*, add-concat-*), the sign moves
// out of products and sums (-> sub), and the two frameworks' layouts (HF's
// [1, heads, tokens, d] against vLLM's [tokens, heads, d], tables broadcast
// over heads) move out of the broadcasting binary ops. None of these is
// specific to RoPE; they are named here because RoPE is why they exist.
#include <algorithm>

#include "lemmas/lemma_util.h"

namespace tangle::lemmas::detail {

namespace {

std::optional<std::vector<int64_t>> concreteShape(const TensorType* t) {
  if (!t) return std::nullopt;
  std::vector<int64_t> s;
  for (auto d : t->shape) {
    if (isSymbolic(d)) return std::nullopt;
    s.push_back(d);
  }
  return s;
}

std::optional<std::pair<int64_t, int64_t>> transposeDims(const Subst& s, int64_t rank) {
  const Attr& ia = s.attr("i");
  const Attr& ja = s.attr("j");
  if (ia.kind != Attr::Kind::Int || ja.kind != Attr::Kind::Int) return std::nullopt;
  int64_t i = ia.i < 0 ? ia.i + rank : ia.i, j = ja.i < 0 ? ja.i + rank : ja.i;
  if (i < 0 || j < 0 || i >= rank || j >= rank) return std::nullopt;
  return std::make_pair(i, j);
}

// op(transpose[i,j](x), y) = transpose[i,j](op(x, transpose[i,j](y))) (and the
// mirror for the right operand) when y has x's rank: broadcasting matches dims
// position by position, so swapping the same two dims of both operands swaps
// them in the result. y of a lower rank is left to the unit-lead lemmas.
Apply binaryOfTranspose(eg::Symbol sym, bool left) {
  return [sym, left](EGraph& g, const Match& m) -> std::optional<Id> {
    Id x = m.subst.cls("x"), y = m.subst.cls("y");
    const TensorType* tx = typeOf(g, x);
    const TensorType* ty = typeOf(g, y);
    if (!tx || !ty || tx->rank() != ty->rank() || tx->rank() < 2 || tx->dtype != ty->dtype) return std::nullopt;
    auto ij = transposeDims(m.subst, tx->rank());
    if (!ij || ij->first == ij->second) return std::nullopt;
    AttrList t = {Attr::integer(ij->first), Attr::integer(ij->second)};
    auto yt = make(g, op().transpose, t, {y});
    if (!yt) return std::nullopt;
    auto inner = left ? make(g, sym, {}, {x, *yt}) : make(g, sym, {}, {*yt, x});
    if (!inner) return std::nullopt;
    return make(g, op().transpose, t, {*inner});
  };
}

// transpose[i,j](x) = reshape[s'](x) when at most one dim in i..j (inclusive)
// has a size other than 1: the elements keep their order, only unit dims move.
std::optional<Id> transposeOfUnitDims(EGraph& g, const Match& m) {
  Id x = m.subst.cls("x");
  auto s = concreteShape(typeOf(g, x));
  if (!s) return std::nullopt;
  auto ij = transposeDims(m.subst, static_cast<int64_t>(s->size()));
  if (!ij || ij->first == ij->second) return std::nullopt;
  auto [i, j] = std::minmax(ij->first, ij->second);
  int nonUnit = 0;
  for (int64_t k = i; k <= j; ++k) nonUnit += (*s)[k] != 1;
  if (nonUnit > 1) return std::nullopt;
  std::swap((*s)[i], (*s)[j]);
  return make(g, op().reshape, {Attr::ints(*s)}, {x});
}

// True when class c holds a reshape whose operand has a lower rank than c
// (a unit dim added by a reshape: the sign of another framework's layout).
bool addsDims(const EGraph& g, Id c) {
  const TensorType* t = typeOf(g, c);
  if (!t) return false;
  for (const ENode* n : nodesOf(g, c, op().reshape)) {
    const TensorType* x = typeOf(g, n->children[0]);
    if (x && x->rank() < t->rank()) return true;
  }
  return false;
}

// op(a, b) = reshape[[1] ++ shape](op(a', b')) when the result's first dim is
// 1 and comes from operands of full rank whose first dim is 1 (a' = a without
// it; an operand of a lower rank is kept, broadcasting aligns from the right).
// Fires only where an operand got its unit dim from a reshape.
Apply binaryDropUnitLead(eg::Symbol sym) {
  return [sym](EGraph& g, const Match& m) -> std::optional<Id> {
    Id a = m.subst.cls("a"), b = m.subst.cls("b");
    // Cheap rejections first (most matches): a full-rank operand not led by 1, no reshape adding dims.
    const TensorType *ta = typeOf(g, a), *tb = typeOf(g, b);
    if (!ta || !tb) return std::nullopt;
    size_t rank = std::max(ta->shape.size(), tb->shape.size());
    for (const TensorType* t : {ta, tb})
      if (t->shape.size() == rank && (rank == 0 || t->shape[0] != 1)) return std::nullopt;
    if (!addsDims(g, a) && !addsDims(g, b)) return std::nullopt;
    auto sa = concreteShape(ta);
    auto sb = concreteShape(tb);
    if (!sa || !sb || typeOf(g, a)->dtype != typeOf(g, b)->dtype) return std::nullopt;
    size_t r = std::max(sa->size(), sb->size());
    if (r < 2 || !(addsDims(g, a) || addsDims(g, b))) return std::nullopt;
    auto drop = [&](Id c, const std::vector<int64_t>& s) -> std::optional<Id> {
      if (s.size() < r) return c;
      if (s[0] != 1) return std::nullopt;
      return make(g, op().reshape, {Attr::ints(std::vector<int64_t>(s.begin() + 1, s.end()))}, {c});
    };
    auto a2 = drop(a, *sa);
    auto b2 = drop(b, *sb);
    if (!a2 || !b2) return std::nullopt;
    auto inner = make(g, sym, {}, {*a2, *b2});
    if (!inner) return std::nullopt;
    auto si = concreteShape(typeOf(g, *inner));
    if (!si || si->size() != r - 1) return std::nullopt;
    si->insert(si->begin(), 1);
    return make(g, op().reshape, {Attr::ints(*si)}, {*inner});
  };
}

// expand[S](reshape[[1]*k ++ shape(x)](x)) = reshape[S'](expand[S[k:]](x))
// when S keeps the k leading unit dims (1 or -1): those dims are not
// broadcast, so the unit dims only reshape the result (HF's repeat_kv
// expands [1, kv, 1, t, d], a reshape of [kv, 1, t, d]).
std::optional<Id> expandOfUnitLead(EGraph& g, const Match& m) {
  const Attr& sa = m.subst.attr("s");
  Id y = m.subst.cls("y");
  const TensorType* ty = typeOf(g, y);
  if (sa.kind != Attr::Kind::IntList || !ty || sa.list.size() != ty->shape.size()) return std::nullopt;
  auto out = concreteShape(typeOf(g, m.eclass));
  if (!out) return std::nullopt;
  for (const ENode* n : nodesOf(g, y, op().reshape)) {
    Id x = n->children[0];
    auto sx = concreteShape(typeOf(g, x));
    auto sy = concreteShape(ty);
    if (!sx || !sy || sx->size() >= sy->size()) continue;
    size_t k = sy->size() - sx->size();
    bool ok = true;
    for (size_t i = 0; i < sy->size() && ok; ++i)
      ok = i < k ? ((*sy)[i] == 1 && (sa.list[i] == 1 || sa.list[i] == -1)) : (*sy)[i] == (*sx)[i - k];
    if (!ok) continue;
    std::vector<int64_t> inner(out->begin() + static_cast<std::ptrdiff_t>(k), out->end());
    auto e = make(g, op().expand, {Attr::ints(inner)}, {x});
    if (!e) continue;
    return make(g, op().reshape, {Attr::ints(*out)}, {*e});
  }
  return std::nullopt;
}

// softmax[last](reshape[s](x)) = reshape[s](softmax[last](x)) when the
// reshape keeps the last dim: every row is a row of x, in the same order.
std::optional<Id> softmaxOfReshape(EGraph& g, const Match& m) {
  const Attr& da = m.subst.attr("d");
  const Attr& ha = m.subst.attr("h");
  const Attr& sa = m.subst.attr("s");
  auto sx = concreteShape(typeOf(g, m.subst.cls("x")));
  if (da.kind != Attr::Kind::Int || sa.kind != Attr::Kind::IntList || !sx || sx->empty() || sa.list.empty())
    return std::nullopt;
  int64_t rank = static_cast<int64_t>(sa.list.size());
  if (da.i != -1 && da.i != rank - 1) return std::nullopt;
  if (sa.list.back() != sx->back()) return std::nullopt;
  for (int64_t v : sa.list)
    if (v < 0) return std::nullopt;
  auto inner = make(g, op().softmax, {Attr::integer(static_cast<int64_t>(sx->size()) - 1), ha}, {m.subst.cls("x")});
  if (!inner) return std::nullopt;
  return make(g, op().reshape, {sa}, {*inner});
}

}  // namespace

void addRotaryLemmas(std::vector<Lemma>& out) {
  auto sameDtype = [](const EGraph& g, Subst& s) {
    const TensorType* a = typeOf(g, s.cls("a"));
    const TensorType* b = typeOf(g, s.cls("b"));
    return a && b && a->dtype == b->dtype;
  };
  // Exact in floating point: negation only flips the sign bit, and a + (-b) is a - b.
  out.push_back(rewrite("mul-neg-lhs", "mul(neg(a), b) = neg(mul(a, b))", "(mul (neg ?a) ?b)",
                        "(neg (mul ?a ?b))", sameDtype));
  out.push_back(rewrite("mul-neg-rhs", "mul(a, neg(b)) = neg(mul(a, b))", "(mul ?a (neg ?b))",
                        "(neg (mul ?a ?b))", sameDtype));
  out.push_back(rewrite("add-neg-rhs", "add(a, neg(b)) = sub(a, b)", "(add ?a (neg ?b))", "(sub ?a ?b)",
                        sameDtype));
  out.push_back(rewrite("add-neg-lhs", "add(neg(a), b) = sub(b, a)", "(add (neg ?a) ?b)", "(sub ?b ?a)",
                        sameDtype));
  out.push_back(applier("transpose-unit-dims",
                        "transpose[i,j](x) = reshape(x) when at most one dim of x in i..j is not 1",
                        "(transpose[?i, ?j] ?x)", transposeOfUnitDims));
  out.push_back(applier("expand-unit-lead",
                        "expand[S](reshape[[1]*k ++ shape(x)](x)) = reshape(expand[S[k:]](x)) when S keeps the k "
                        "leading unit dims",
                        "(expand[?s] ?y)", expandOfUnitLead));
  out.push_back(applier("softmax-last-reshape",
                        "softmax[last](reshape[s](x)) = reshape[s](softmax[last](x)) when the reshape keeps the last dim",
                        "(softmax[?d, ?h] (reshape[?s] ?x))", softmaxOfReshape));
  const std::pair<const char*, eg::Symbol> binaries[] = {
      {"add", op().add}, {"sub", op().sub}, {"mul", op().mul}, {"div", op().div}};
  for (const auto& [name, sym] : binaries) {
    std::string n = name;
    out.push_back(applier(n + "-transpose-lhs",
                          n + "(transpose[i,j](x), y) = transpose[i,j](" + n +
                              "(x, transpose[i,j](y))), y of x's rank",
                          "(" + n + " (transpose[?i, ?j] ?x) ?y)", binaryOfTranspose(sym, true)));
    out.push_back(applier(n + "-transpose-rhs",
                          n + "(y, transpose[i,j](x)) = transpose[i,j](" + n +
                              "(transpose[i,j](y), x)), y of x's rank",
                          "(" + n + " ?y (transpose[?i, ?j] ?x))", binaryOfTranspose(sym, false)));
    out.push_back(applier(n + "-drop-unit-lead",
                          n + "(a, b) = reshape[[1] ++ s](" + n +
                              "(a', b')) where the full-rank operands' first dim 1 is dropped (a reshape added it "
                              "to one of them)",
                          "(" + n + " ?a ?b)", binaryDropUnitLead(sym)));
  }
}

}  // namespace tangle::lemmas::detail
