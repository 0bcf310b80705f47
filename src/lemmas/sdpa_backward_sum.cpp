// Sums of attention-backward terms in any grouping and order: what a
// load-balanced ring's backward adds (torch's round-robin sharding). Rank r
// holds chunks r and 2N-1-r; its local causal step already adds two key
// chunks' terms for the second chunk's rows, and a partial step adds a pair of
// key chunks at once, so the ring's dq (and a key chunk's dk/dv) is a sum of
// the spec's terms (sdpa_backward_ring.cpp) grouped and ordered as no chain of
// the spec names.
//
// Search control, as for the online-softmax merge (sdpa_merge.cpp): the rules
// move sums towards one normal form, the left chain with its atoms (terms that
// are not themselves sums) sorted by e-class id: a sum of a sum is
// left-associated (add-assoc-backward), the last two atoms of a chain are
// swapped when out of order (add-swap-backward), and so are the two atoms of
// an innermost sum (add-commute-backward). The guards keep the rules to sums of
// getitem(sdpa_backward(..)) terms, which only attention backwards have; they
// restrict where the rules apply, never what they state (addition is
// associative and commutative over the reals).
#include "lemmas/lemma_util.h"

namespace tangle::lemmas::detail {

namespace {

// c holds getitem[i](sdpa_backward(..)).
bool isBackwardTerm(const EGraph& g, Id c) {
  for (const ENode* gi : nodesOf(g, c, op().getitem))
    if (!nodesOf(g, gi->children[0], op().sdpaBackward).empty()) return true;
  return false;
}

bool isSum(const EGraph& g, Id c) { return !nodesOf(g, c, op().add).empty(); }

bool isBackwardSum(const EGraph& g, Id c) { return isAttentionBackwardSum(g, c); }

// An atom: a backward term that is not also a sum.
bool isAtom(const EGraph& g, Id c) { return isBackwardTerm(g, c) && !isSum(g, c); }

Guard backwardSums(std::vector<const char*> vars) {
  return [vars](const EGraph& g, Subst& s) {
    for (const char* v : vars)
      if (!isBackwardSum(g, s.cls(v))) return false;
    return true;
  };
}

// Atoms `a` and `b` with b before a in the sort order (and, for a chain, `p` a backward sum).
Guard outOfOrder(const char* a, const char* b, const char* p = nullptr) {
  return [a, b, p](const EGraph& g, Subst& s) {
    Id x = g.find(s.cls(a)), y = g.find(s.cls(b));
    return y < x && isAtom(g, x) && isAtom(g, y) && (!p || isBackwardSum(g, s.cls(p)));
  };
}

}  // namespace

bool isAttentionBackwardSum(const EGraph& g, Id c, int depth) {
  // add-commute asks this of every sum it matches: an e-graph without an
  // attention backward answers at once instead of walking its add chains.
  if (g.classesWithOp(op().sdpaBackward).empty()) return false;
  if (isBackwardTerm(g, c)) return true;
  if (depth == 0) return false;
  for (const ENode* a : nodesOf(g, c, op().add))
    if (isAttentionBackwardSum(g, a->children[0], depth - 1) && isAttentionBackwardSum(g, a->children[1], depth - 1))
      return true;
  return false;
}

void addSdpaBackwardSumLemmas(std::vector<Lemma>& out) {
  out.push_back(rewrite("add-assoc-backward",
                        "add(x, add(a, b)) = add(add(x, a), b) (applied to sums of attention-backward terms)",
                        "(add ?x (add ?a ?b))", "(add (add ?x ?a) ?b)", backwardSums({"x", "a", "b"})));
  out.push_back(rewrite("add-swap-backward",
                        "add(add(p, x), y) = add(add(p, y), x) (applied when y sorts before x, both "
                        "attention-backward terms that are not sums)",
                        "(add (add ?p ?x) ?y)", "(add (add ?p ?y) ?x)", outOfOrder("x", "y", "p")));
  out.push_back(rewrite("add-commute-backward",
                        "add(a, b) = add(b, a) (applied when b sorts before a, both attention-backward terms that "
                        "are not sums)",
                        "(add ?a ?b)", "(add ?b ?a)", outOfOrder("a", "b")));
}

}  // namespace tangle::lemmas::detail
