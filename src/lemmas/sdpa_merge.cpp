// The online-softmax merge of two attention results, as torch's ring writes it
// (sdpa_sequence.cpp): a state (o, u) and a block (o_b, u_b), u the unsqueezed
// log-sum-exp, give
//   out = o - sigmoid(u_b - u) * (o - o_b)
//   lse = u - log_sigmoid(u - u_b)
// i.e. the attention over the union of the two key sets. Over (out, lse)
// pairs the merge is associative and commutative, so a ring that groups key
// blocks differently from the spec's chain (torch's round-robin load balancing:
// the local causal attention covers blocks {r, 2N-1-r}, a partial step merges
// a pair of blocks at once) computes the same value.
//
// Search control: instead of stating associativity and commutativity in full
// (every grouping of every subset of the blocks), the rules move merge trees
// towards one normal form, the left chain with its atoms (values that are not
// themselves merges) sorted by e-class id: a merge of a merge is left-associated
// (merge-assoc-*), the last two blocks of a chain are swapped when out of order
// (merge-swap-*), and so are the two atoms of an innermost merge
// (merge-commute-*). The spec's chains and the ring's groupings then meet at
// the sorted chain; the e-graph grows by the classes of a bubble sort, not by
// the subsets. The guards restrict where the rules apply, never what they
// state: each rule is an identity over all reals.
#include <string>

#include "lemmas/lemma_util.h"

namespace tangle::lemmas::detail {

namespace {

std::string mergeOut(const std::string& o, const std::string& u, const std::string& ob, const std::string& ub) {
  return "(sub " + o + " (mul (sigmoid (sub " + ub + " " + u + ")) (sub " + o + " " + ob + ")))";
}

std::string mergeLse(const std::string& u, const std::string& ub) {
  return "(sub " + u + " (getitem[0] (log_sigmoid (sub " + u + " " + ub + "))))";
}

bool hasNode(const EGraph& g, Id c, eg::Symbol sym) { return !nodesOf(g, c, sym).empty(); }

// Class c holds an out-merge: o - mul(sigmoid(..), ..).
bool isOutMerge(const EGraph& g, Id c) {
  for (const ENode* s : nodesOf(g, c, op().sub))
    for (const ENode* m : nodesOf(g, s->children[1], op().mul))
      if (hasNode(g, m->children[0], op().sigmoid)) return true;
  return false;
}

// Class c holds a log-sum-exp merge: u - getitem[0](log_sigmoid(..)).
bool isLseMerge(const EGraph& g, Id c) {
  for (const ENode* s : nodesOf(g, c, op().sub))
    for (const ENode* gi : nodesOf(g, s->children[1], op().getitem))
      if (hasNode(g, gi->children[0], op().logSigmoid)) return true;
  return false;
}

// Atoms `a` and `b` (out or lse values, per `isMerge`) with b before a in the sort order.
Guard outOfOrder(const char* a, const char* b, bool (*isMerge)(const EGraph&, Id)) {
  return [a, b, isMerge](const EGraph& g, Subst& s) {
    Id x = g.find(s.cls(a)), y = g.find(s.cls(b));
    return y < x && !isMerge(g, x) && !isMerge(g, y);
  };
}

// getitem[0](log_sigmoid(concat[d](xs))) = concat[d](getitem[0](log_sigmoid(x_i))): elementwise (a ring
// merging the log-sum-exps of both of a rank's row chunks at once).
std::optional<Id> logSigmoidOverConcat(EGraph& g, const Match& m) {
  auto parts = mapPieces(m.subst.list("xs"), [&](Id x) -> std::optional<Id> {
    auto ls = make(g, op().logSigmoid, {}, {x});
    return ls ? make(g, op().getitem, {Attr::integer(0)}, {*ls}) : std::nullopt;
  });
  if (!parts) return std::nullopt;
  return makeConcat(g, m.subst.integer("d"), *parts);
}

}  // namespace

void addSdpaMergeLemmas(std::vector<Lemma>& out) {
  out.push_back(applier("log_sigmoid-concat",
                        "getitem[0](log_sigmoid(concat[d](xs))) = concat[d](getitem[0](log_sigmoid(x_i)))",
                        "(getitem[0] (log_sigmoid (concat[?d] ?xs...)))", logSigmoidOverConcat));
  const std::string inner = mergeOut("?oa", "?ua", "?ob", "?ub"), innerLse = mergeLse("?ua", "?ub");
  out.push_back(rewrite("merge-assoc-out",
                        "merge_out(x, merge(a, b)) = merge_out(merge(x, a), b): the online-softmax merge "
                        "o - sigmoid(u_b - u) * (o - o_b), u - log_sigmoid(u - u_b) is associative",
                        mergeOut("?ox", "?ux", inner, innerLse),
                        mergeOut(mergeOut("?ox", "?ux", "?oa", "?ua"), mergeLse("?ux", "?ua"), "?ob", "?ub")));
  out.push_back(rewrite("merge-assoc-lse", "merge_lse(x, merge(a, b)) = merge_lse(merge(x, a), b)",
                        mergeLse("?ux", innerLse), mergeLse(mergeLse("?ux", "?ua"), "?ub")));
  out.push_back(rewrite("merge-swap-out",
                        "merge_out(merge(p, x), y) = merge_out(merge(p, y), x) (applied when y sorts before x, "
                        "both not merges)",
                        mergeOut(mergeOut("?op", "?up", "?ox", "?ux"), mergeLse("?up", "?ux"), "?oy", "?uy"),
                        mergeOut(mergeOut("?op", "?up", "?oy", "?uy"), mergeLse("?up", "?uy"), "?ox", "?ux"),
                        outOfOrder("ox", "oy", isOutMerge)));
  out.push_back(rewrite("merge-swap-lse",
                        "merge_lse(merge(p, x), y) = merge_lse(merge(p, y), x) (applied when y sorts before x, "
                        "both not merges)",
                        mergeLse(mergeLse("?up", "?ux"), "?uy"), mergeLse(mergeLse("?up", "?uy"), "?ux"),
                        outOfOrder("ux", "uy", isLseMerge)));
  out.push_back(rewrite("merge-commute-out",
                        "merge_out(a, b) = merge_out(b, a) (applied when b sorts before a, both not merges)", inner,
                        mergeOut("?ob", "?ub", "?oa", "?ua"), outOfOrder("oa", "ob", isOutMerge)));
  out.push_back(rewrite("merge-commute-lse",
                        "merge_lse(a, b) = merge_lse(b, a) (applied when b sorts before a, both not merges)",
                        innerLse, mergeLse("?ub", "?ua"), outOfOrder("ua", "ub", isLseMerge)));
}

}  // namespace tangle::lemmas::detail
