// Lemmas two frameworks need to meet (HF transformers vs vLLM, `tangle equiv`):
// the same lookup written over differently shaped index tensors (HF looks up
// [batch, tokens] ids, vLLM a flat [tokens] list).
#include <algorithm>

#include "lemmas/lemma_util.h"

namespace tangle::lemmas::detail {

namespace {

// index_rows(W, reshape[s](I)) = reshape[s ++ [D]](index_rows(W, I)) for W of
// shape [V, D]: a lookup is per index, so reshaping the indices only reshapes
// the rows looked up. Needs a concrete 2-D table and concrete target shape.
std::optional<Id> indexRowsOfReshape(EGraph& g, const Match& m) {
  const Attr& sa = m.subst.attr("s");
  const std::vector<int64_t>* s = sa.kind == Attr::Kind::IntList ? &sa.list : nullptr;
  const TensorType* w = typeOf(g, m.subst.cls("w"));
  if (!s || !w || w->shape.size() != 2 || isSymbolic(w->shape[1])) return std::nullopt;
  for (int64_t d : *s)
    if (d < 0) return std::nullopt;
  auto rows = make(g, op().indexRows, {}, {m.subst.cls("w"), m.subst.cls("i")});
  if (!rows) return std::nullopt;
  std::vector<int64_t> shape = *s;
  shape.push_back(w->shape[1]);
  return make(g, op().reshape, {Attr::ints(shape)}, {*rows});
}

// mean_dim[last](reshape[s](x)) = reshape[s'](mean_dim[last](x)) when the
// reshape keeps the last dim (only leading dims regrouped): each row's mean is
// unchanged. s' is s with the last dim 1 (keepdim) or dropped.
std::optional<Id> meanOfReshape(EGraph& g, const Match& m) {
  const Attr& sa = m.subst.attr("s");
  const Attr& da = m.subst.attr("d");
  const Attr& ka = m.subst.attr("k");
  const TensorType* x = typeOf(g, m.subst.cls("x"));
  if (sa.kind != Attr::Kind::IntList || da.kind != Attr::Kind::IntList || da.list.size() != 1 || !x ||
      x->shape.empty() || ka.kind != Attr::Kind::Bool)
    return std::nullopt;
  const std::vector<int64_t>& s = sa.list;
  int64_t d = da.list[0];
  if (s.empty() || (d != -1 && d != static_cast<int64_t>(s.size()) - 1)) return std::nullopt;
  for (int64_t v : s)
    if (v < 0) return std::nullopt;
  for (auto v : x->shape)
    if (isSymbolic(v)) return std::nullopt;
  if (x->shape.back() != s.back()) return std::nullopt;
  int64_t lastX = static_cast<int64_t>(x->shape.size()) - 1;
  auto inner = make(g, op().meanDim, {Attr::ints({lastX}), ka}, {m.subst.cls("x")});
  if (!inner) return std::nullopt;
  std::vector<int64_t> shape = s;
  if (ka.i) shape.back() = 1; else shape.pop_back();
  return make(g, op().reshape, {Attr::ints(shape)}, {*inner});
}

// x if class c holds reshape[[1]*k ++ shape(x)](x) (k leading unit dims added), with k.
std::optional<std::pair<Id, size_t>> unitLead(const EGraph& g, Id c) {
  for (const ENode* n : nodesOf(g, c, op().reshape)) {
    const AttrList& a = attrsOf(*n);
    const TensorType* x = typeOf(g, n->children[0]);
    if (a.empty() || a[0].kind != Attr::Kind::IntList || !x) continue;
    const std::vector<int64_t>& s = a[0].list;
    if (s.size() <= x->shape.size()) continue;
    size_t k = s.size() - x->shape.size();
    bool ok = true;
    for (size_t i = 0; i < s.size() && ok; ++i) ok = i < k ? s[i] == 1 : (!isSymbolic(x->shape[i - k]) && s[i] == x->shape[i - k]);
    if (ok) return std::make_pair(n->children[0], k);
  }
  return std::nullopt;
}

// op(a, b) = reshape[shape](op(a', b')) for a binary elementwise op when a
// and/or b are a' / b' with leading unit dims added and the result's extra
// leading dims are all 1: broadcasting aligns dims from the right, so leading
// unit dims only reshape the result.
Apply binaryOfUnitLead(eg::Symbol sym) {
  return [sym](EGraph& g, const Match& m) -> std::optional<Id> {
    Id a = m.subst.cls("a"), b = m.subst.cls("b");
    const TensorType* ta = typeOf(g, a);
    const TensorType* tb = typeOf(g, b);
    if (!ta || !tb) return std::nullopt;
    size_t rank = std::max(ta->shape.size(), tb->shape.size());
    auto pa = unitLead(g, a), pb = unitLead(g, b);
    if (!pa && !pb) return std::nullopt;
    Id a2 = pa ? pa->first : a, b2 = pb ? pb->first : b;
    const TensorType* ta2 = typeOf(g, a2);
    const TensorType* tb2 = typeOf(g, b2);
    if (!ta2 || !tb2) return std::nullopt;
    size_t rank2 = std::max(ta2->shape.size(), tb2->shape.size());
    if (rank2 >= rank) return std::nullopt;
    auto inner = make(g, sym, {}, {a2, b2});
    if (!inner) return std::nullopt;
    const TensorType* ti = typeOf(g, *inner);
    if (!ti || ti->shape.size() != rank2) return std::nullopt;
    std::vector<int64_t> shape(rank - rank2, 1);
    for (auto d : ti->shape) {
      if (isSymbolic(d)) return std::nullopt;
      shape.push_back(d);
    }
    // the result's leading dims must be 1 on both original sides too (else op broadcast them)
    for (size_t i = 0; i < rank - rank2; ++i) {
      auto lead = [&](const TensorType* t) {
        size_t off = rank - t->shape.size();
        return i < off || t->shape[i - off] == 1;
      };
      if (!lead(ta) || !lead(tb)) return std::nullopt;
    }
    return make(g, op().reshape, {Attr::ints(shape)}, {*inner});
  };
}

}  // namespace

void addEquivLemmas(std::vector<Lemma>& out) {
  out.push_back(applier("index-rows-reshape",
                        "index_rows(W, reshape[s](I)) = reshape[s ++ [cols W]](index_rows(W, I)) for a 2-D table W",
                        "(index_rows ?w (reshape[?s] ?i))", indexRowsOfReshape));
  const std::pair<const char*, eg::Symbol> binaries[] = {
      {"add", op().add}, {"sub", op().sub}, {"mul", op().mul}, {"div", op().div}};
  for (const auto& [name, sym] : binaries)
    out.push_back(applier(std::string(name) + "-unit-lead",
                          std::string(name) + "(a, b) = reshape(" + name +
                              "(a', b')) where a and/or b are a', b' with leading unit dims added (reshape) and the "
                              "result's extra leading dims are 1",
                          std::string("(") + name + " ?a ?b)", binaryOfUnitLead(sym)));
  // Two frameworks write the same product in either order (HF: w * x, vLLM: x * w).
  // Only for operands of one dtype: the type rule reads dtypes in order (add(i64, f32 const) is i64).
  auto sameDtype = [](const EGraph& g, Subst& s) {
    const TensorType* a = typeOf(g, s.cls("a"));
    const TensorType* b = typeOf(g, s.cls("b"));
    return a && b && a->dtype == b->dtype;
  };
  out.push_back(readsOnlyMatch(
      rewrite("mul-commute", "mul(a, b) = mul(b, a) (same dtype)", "(mul ?a ?b)", "(mul ?b ?a)", sameDtype)));
  // Sums of attention-backward terms are ordered by add-commute-backward instead (sdpa_backward_sum.cpp): this
  // rule on them reached every order of every chain.
  auto sameDtypeNotBackwardSums = [sameDtype](const EGraph& g, Subst& s) {
    return sameDtype(g, s) && !(isAttentionBackwardSum(g, s.cls("a")) && isAttentionBackwardSum(g, s.cls("b")));
  };
  out.push_back(rewrite("add-commute", "add(a, b) = add(b, a) (same dtype)", "(add ?a ?b)", "(add ?b ?a)",
                        sameDtypeNotBackwardSums));
  out.push_back(applier("mean-last-reshape",
                        "mean_dim[last](reshape[s](x)) = reshape[s with last dim 1 or dropped](mean_dim[last](x)) when "
                        "the reshape keeps the last dim",
                        "(mean_dim[?d, ?k] (reshape[?s] ?x))", meanOfReshape));
}

}  // namespace tangle::lemmas::detail
