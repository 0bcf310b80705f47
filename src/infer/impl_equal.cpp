// Equalities between implementation tensors that an operator's search proved
// (both in one e-class: congruence over the graphs' definitions and the
// relations, e.g. the all-reduced sum that the two TP ranks of one DP replica
// share). An expectation naming one replica's tensors, while the walk's
// relations name the other's, needs them: they are merged into its e-graph.
#include <algorithm>

#include "infer/infer_state.h"
#include "infer/leaf_names.h"
#include "ops/ops.h"

namespace tangle {

StampMarks& nodeMarks() {
  thread_local StampMarks m;
  return m;
}

std::vector<std::pair<int, int>> implEqualPairs(const InferState& st, const eg::EGraph& g) {
  std::vector<std::pair<int, int>> pairs;
  for (eg::Id c : g.classesWithOp(ops::syms().tensor)) {
    std::vector<int> impl;
    for (const eg::ENode& n : g.eclass(c).nodes)
      if (auto leaf = leaves::leafOf(st.spec, st.impl, n.op, n.attrs); leaf && !leaf->first) impl.push_back(leaf->second);
    if (impl.size() < 2) continue;
    for (int a : impl)
      for (int b : impl)
        if (a != b) pairs.emplace_back(a, b);
  }
  return pairs;
}

std::vector<std::pair<int, int>> newImplEqualPairs(const InferState& st, const eg::EGraph& g) {
  std::vector<std::pair<int, int>> pairs;
  std::vector<int> impl;
  for (eg::Id c : g.classesWithOp(ops::syms().tensor)) {
    impl.clear();
    for (const eg::ENode& n : g.eclass(c).nodes)
      if (auto leaf = leaves::leafOf(st.spec, st.impl, n.op, n.attrs); leaf && !leaf->first) impl.push_back(leaf->second);
    if (impl.size() < 2) continue;
    std::vector<int> sorted = impl;
    std::sort(sorted.begin(), sorted.end());
    for (int a : impl) {
      const std::vector<int>* known = st.implEqual.find(a);
      size_t held = 0;
      if (known)
        for (int x : *known) held += std::binary_search(sorted.begin(), sorted.end(), x) ? 1 : 0;
      if (held + 1 >= impl.size()) continue;  // a knows the whole class already
      for (int b : impl)
        if (a != b && (!known || std::find(known->begin(), known->end(), b) == known->end())) pairs.emplace_back(a, b);
    }
  }
  return pairs;
}

void applyImplEqualPairs(InferState& st, const std::vector<std::pair<int, int>>& pairs) {
  applyImplEqualPairs(st, pairs, nullptr);
}

void applyImplEqualPairs(InferState& st, const std::vector<std::pair<int, int>>& pairs,
                         std::vector<std::pair<int, int>>* added) {
  // Pairs come grouped by their first tensor (implEqualPairs): per group, the
  // tensor's list is stamped into a mark per node, and each pair's membership
  // is one load. (A tensor replicated on every rank of a large plan has
  // dozens to hundreds of partners, offered again by each renamed footprint:
  // a linear find per pair was quadratic there.) The list keeps the pairs' order.
  StampMarks& mark = nodeMarks();
  for (size_t i = 0; i < pairs.size();) {
    const int a = pairs[i].first;
    size_t j = i;
    while (j < pairs.size() && pairs[j].first == a) ++j;
    if (j - i == 1) {  // one pair: a find is cheaper than stamping the list
      const std::vector<int>* eq = st.implEqual.find(a);
      const int b = pairs[i].second;
      if (!eq || std::find(eq->begin(), eq->end(), b) == eq->end()) {
        st.implEqual[a].push_back(b);
        if (added) added->emplace_back(a, b);
      }
      i = j;
      continue;
    }
    std::vector<int>& eq = st.implEqual[a];
    const uint32_t stamp = mark.next(st.impl.nodes.size());
    for (int x : eq) mark.at[static_cast<size_t>(x)] = stamp;
    for (; i < j; ++i) {
      const int b = pairs[i].second;
      if (mark.at[static_cast<size_t>(b)] == stamp) continue;
      mark.at[static_cast<size_t>(b)] = stamp;
      eq.push_back(b);
      if (added) added->emplace_back(a, b);
    }
  }
}

void removeImplEqualPairs(InferState& st, const std::vector<std::pair<int, int>>& pairs) {
  for (auto [a, b] : pairs) {
    if (!st.implEqual.find(a)) continue;
    auto& eq = st.implEqual[a];
    eq.erase(std::remove(eq.begin(), eq.end(), b), eq.end());
    if (eq.empty()) eq = {};  // absent again (find)
  }
}

void recordImplEqualities(InferState& st, const eg::EGraph& g) { applyImplEqualPairs(st, implEqualPairs(st, g)); }

// Each named tensor once: a weight replicated on R ranks is named by each
// rank's relation, and merging every copy with every other again was
// quadratic in R per operator. The partners it adds are listed once each.
// Membership and each tensor's leaf class here are per-thread arrays over the
// implementation's nodes: the R copies' R partners each are R^2 loads, not
// R^2 hash lookups and leaf interning.
std::vector<int> mergeImplEqualities(const InferState& st, eg::EGraph& g, const std::vector<int>& named,
                                     std::vector<std::pair<int, int>>* merged) {
  thread_local StampMarks seen, listed, cached;
  thread_local std::vector<eg::Id> leafIds;
  const size_t n = st.impl.nodes.size();
  const uint32_t seenStamp = seen.next(n), listedStamp = listed.next(n), cachedStamp = cached.next(n);
  if (leafIds.size() < n) leafIds.resize(n);
  auto leafOf = [&](int x) {
    const auto i = static_cast<size_t>(x);
    if (cached.at[i] != cachedStamp) {
      cached.at[i] = cachedStamp;
      leafIds[i] = addLeaf(g, st.impl, x);
    }
    return leafIds[i];
  };
  std::vector<int> added;
  for (int d : named) {
    if (seen.at[static_cast<size_t>(d)] == seenStamp) continue;
    seen.at[static_cast<size_t>(d)] = seenStamp;
    if (st.reads) st.reads->implEqual.push_back(d);
    const std::vector<int>* partners = st.implEqual.find(d);
    if (!partners) continue;
    const eg::Id leaf = leafOf(d);
    for (int e : *partners) {
      // Only the merges that join two classes are facts the e-graph is built
      // from: a spanning set of each group of copies, not every pair of it
      // (64 copies of a weight were 4032 facts for reuse's gate to rename).
      const eg::Id other = leafOf(e);
      if (g.find(leaf) != g.find(other)) {
        g.merge(leaf, other);
        if (merged) merged->emplace_back(d, e);
      }
      if (listed.at[static_cast<size_t>(e)] != listedStamp) {
        listed.at[static_cast<size_t>(e)] = listedStamp;
        added.push_back(e);
      }
    }
  }
  return added;
}

}  // namespace tangle
