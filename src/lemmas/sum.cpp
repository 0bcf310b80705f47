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
  std::vector<const ENode*> sums;
  for (Id x : xs) {
    const ENode* pick = nullptr;
    for (const ENode* n : nodesOf(g, x, op().sum))
      if (n->children.size() >= 2 && (sums.empty() || n->children.size() == sums[0]->children.size())) {
        pick = n;
        break;
      }
    if (!pick) return std::nullopt;
    sums.push_back(pick);
  }
  std::vector<Id> terms;
  for (size_t j = 0; j < sums[0]->children.size(); ++j) {
    std::vector<Id> pieces;
    for (const ENode* s : sums) pieces.push_back(s->children[j]);
    auto c = makeConcat(g, d, pieces);
    if (!c) return std::nullopt;
    terms.push_back(*c);
  }
  return makeSum(g, terms);
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
