// The cross-rank sum: flattening, and distribution of rearrangements.
#include <algorithm>

#include "lemmas/lemma_util.h"

namespace tangle::lemmas::detail {

namespace {

// sum(.., sum(ys..), ..) = sum(.., ys.., ..)
std::optional<Id> flattenSum(EGraph& g, const Match& m) {
  auto out = spliceNested(g, m.subst.list("xs"), op().sum, std::nullopt);
  if (!out) return std::nullopt;
  return makeSum(g, *out);
}

// op[attrs](sum(xs)) = sum(op[attrs](x_i)) for a linear rearrangement op.
Apply distribute(eg::Symbol sym, size_t nAttrs) {
  return [sym, nAttrs](EGraph& g, const Match& m) -> std::optional<Id> {
    AttrList a = boundAttrs(m.subst, nAttrs);
    auto parts = mapPieces(m.subst.list("xs"), [&](Id x) { return make(g, sym, a, {x}); });
    if (!parts) return std::nullopt;
    return makeSum(g, *parts);
  };
}

// concat[d](sum(a1..an), sum(b1..bn), ..) = sum(concat[d](a1, b1, ..), .., concat[d](an, bn, ..))
std::optional<Id> concatOfSums(EGraph& g, const Match& m) {
  const auto& xs = m.subst.list("xs");
  int64_t d = m.subst.integer("d");
  // Every arity the pieces' sums share, not only the first sum's: the matched classes gain sums as
  // the search goes on, and a match is applied again only when they change, so an applier that
  // looked at the first sum alone would never see the later ones (a search saturated in one run
  // or in several then found different sums).
  std::vector<Id> found;
  std::vector<size_t> tried;
  for (const ENode* lead : nodesOf(g, xs[0], op().sum)) {
    size_t k = lead->children.size();
    if (k < 2 || std::find(tried.begin(), tried.end(), k) != tried.end()) continue;
    tried.push_back(k);
    std::vector<const ENode*> sums{lead};
    for (size_t i = 1; i < xs.size() && sums.size() == i; ++i)
      for (const ENode* n : nodesOf(g, xs[i], op().sum))
        if (n->children.size() == k) {
          sums.push_back(n);
          break;
        }
    if (sums.size() != xs.size()) continue;
    std::vector<Id> terms;
    for (size_t j = 0; j < k; ++j) {
      std::vector<Id> pieces;
      for (const ENode* s : sums) pieces.push_back(s->children[j]);
      auto c = makeConcat(g, d, pieces);
      if (!c) break;
      terms.push_back(*c);
    }
    if (terms.size() != k) continue;
    if (auto r = makeSum(g, terms)) found.push_back(*r);
  }
  // Merged only now: a merge moves class node lists, which `lead` and `sums` point into.
  for (size_t i = 1; i < found.size(); ++i) g.merge(found[0], found[i]);
  if (found.empty()) return std::nullopt;
  return found[0];
}

// sum(concat[d](a1..ak), concat[d](b1..bk), ..) with equal splits
//   = concat[d](sum(a1, b1, ..), .., sum(ak, bk, ..))
std::optional<Id> sumOfConcats(EGraph& g, const Match& m) {
  const auto& xs = m.subst.list("xs");
  for (const ENode* first : nodesOf(g, xs[0], op().concat)) {
    auto d = ops::attrInt(attrsOf(*first), 0);
    if (!d || first->children.size() < 2) continue;
    auto sizes = dimsAlong(g, first->children, *d);
    if (!sizes) continue;
    std::vector<std::vector<Id>> cols(first->children.size());
    bool ok = true;
    for (size_t i = 0; i < xs.size() && ok; ++i) {
      auto pieces = piecesOf(g, xs[i], *d, *sizes, /*allowSlices=*/false);
      if (!pieces || pieces->size() != cols.size()) ok = false;
      else
        for (size_t j = 0; j < cols.size(); ++j) cols[j].push_back((*pieces)[j]);
    }
    if (!ok) continue;
    std::vector<Id> parts;
    for (auto& col : cols) {
      auto s = makeSum(g, col);
      if (!s) return std::nullopt;
      parts.push_back(*s);
    }
    return makeConcat(g, *d, parts);
  }
  return std::nullopt;
}

}  // namespace

void addSumLemmas(std::vector<Lemma>& out) {
  const ops::Syms& o = op();
  out.push_back(rewrite("sum-single", "sum(x) = x", "(sum ?x)", "?x"));
  out.push_back(applier("sum-flatten", "sum(.., sum(ys..), ..) = sum(.., ys.., ..)", "(sum ?xs...)", flattenSum));
  out.push_back(readsOnlyMatch(
      applier("slice-sum", "slice[..](sum(xs)) = sum(slice[..](x_i))", opPattern("slice", 4, "(sum ?xs...)"),
                        distribute(o.slice, 4))));
  out.push_back(readsOnlyMatch(applier("transpose-sum", "transpose[a,b](sum(xs)) = sum(transpose[a,b](x_i))",
                        opPattern("transpose", 2, "(sum ?xs...)"), distribute(o.transpose, 2))));
  out.push_back(readsOnlyMatch(
      applier("permute-sum", "permute[p](sum(xs)) = sum(permute[p](x_i))", opPattern("permute", 1, "(sum ?xs...)"),
                        distribute(o.permute, 1))));
  out.push_back(readsOnlyMatch(
      applier("reshape-sum", "reshape[s](sum(xs)) = sum(reshape[s](x_i))", opPattern("reshape", 1, "(sum ?xs...)"),
                        distribute(o.reshape, 1))));
  out.push_back(applier("concat-of-sums",
                        "concat[d](sum(a1..an), sum(b1..bn)) = sum(concat[d](a1,b1), .., concat[d](an,bn))",
                        "(concat[?d] ?xs...)", concatOfSums));
  out.push_back(applier("sum-of-concats",
                        "sum(concat[d](a1..ak), concat[d](b1..bk)) = concat[d](sum(a1,b1), .., sum(ak,bk)), equal splits",
                        "(sum ?xs...)", sumOfConcats));
  // A partial (unreduced) gradient broadcast back over a reduced dim, as rms_norm's backward does.
  out.push_back(applier("expand-sum", "expand[S](sum(xs)) = sum(expand[S](x_i))", opPattern("expand", 1, "(sum ?xs...)"),
                        distribute(o.expand, 1)));
}

}  // namespace tangle::lemmas::detail
