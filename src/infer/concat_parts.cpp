// Concatenation is injective: concat(a, b, dim=d) = concat(c, e, dim=d) with
// a and c of the same type means a = c and b = e. Two relations of one spec
// tensor over different ranks (TP x DP: `S.x = concat(D0.x, D2.x)` and
// `S.x = concat(D1.x, D3.x)`) thus say that D0.x = D1.x, which a lemma
// rewriting one operator at a time cannot derive; without it a product over
// another rank's shard has no implementation tensor. Only exact part types
// are compared (symbolic sizes by their normal form), so nothing unproven is merged.
#include "infer/operator_search.h"

namespace tangle {

void mergeConcatParts(eg::EGraph& g) {
  const eg::Symbol concat = ops::syms().concat;
  g.rebuild();
  for (bool changed = true; changed;) {
    changed = false;
    std::vector<std::pair<eg::Id, eg::Id>> merges;
    for (eg::Id c : g.classesWithOp(concat)) {
      std::vector<const eg::ENode*> cats;
      for (const eg::ENode& n : g.eclass(c).nodes)
        if (n.op == concat) cats.push_back(&n);
      for (size_t i = 0; i < cats.size(); ++i)
        for (size_t j = i + 1; j < cats.size(); ++j) {
          const eg::ENode &a = *cats[i], &b = *cats[j];
          if (a.attrs != b.attrs || a.children.size() != b.children.size()) continue;
          bool same = true;
          for (size_t k = 0; k < a.children.size() && same; ++k) {
            const TensorType *ta = g.data(a.children[k]).tensor(), *tb = g.data(b.children[k]).tensor();
            same = ta && tb && ta->shape == tb->shape;
          }
          if (!same) continue;
          for (size_t k = 0; k < a.children.size(); ++k)
            if (g.find(a.children[k]) != g.find(b.children[k])) merges.emplace_back(a.children[k], b.children[k]);
        }
    }
    for (auto [x, y] : merges) changed |= g.merge(x, y);
    if (changed) g.rebuild();
  }
}

}  // namespace tangle
