#include "infer/rank_classes.h"

#include "ops/ops.h"

namespace tangle {

RankClasses::RankClasses(const eg::EGraph& g, size_t ranks)
    : g_(g), words_((ranks + 63) / 64), bits_(g.numIds() * ((ranks + 63) / 64), 0),
      pure_(ranks), shared_(ranks), present_(ranks, false) {
  if (ranks == 0) return;
  const std::vector<eg::Id> classes = g.classIds();
  auto at = [&](eg::Id c) { return bits_.data() + static_cast<size_t>(c) * words_; };
  const uint64_t lastMask = ranks % 64 ? (uint64_t{1} << (ranks % 64)) - 1 : ~uint64_t{0};

  // Which ranks' tensors each class holds.
  for (eg::Id c : g.classesWithOp(ops::syms().tensor)) {
    int32_t first = -1;
    bool several = false;
    for (const eg::ENode& n : g.eclass(c).nodes) {
      auto owner = ops::tensorOwner(n);
      if (!owner || owner->isSpec() || owner->rank >= static_cast<int32_t>(ranks)) continue;
      present_[static_cast<size_t>(owner->rank)] = true;
      if (first < 0) first = owner->rank;
      else if (owner->rank != first) several = true;
    }
    if (!several) continue;
    for (const eg::ENode& n : g.eclass(c).nodes)
      if (auto owner = ops::tensorOwner(n); owner && !owner->isSpec() && owner->rank < static_cast<int32_t>(ranks)) {
        auto& list = shared_[static_cast<size_t>(owner->rank)];
        if (list.empty() || list.back() != c) list.push_back(c);
      }
  }

  // Least fixpoint: pure(c) = union over c's clean nodes of {rank} for a
  // tensor leaf, else the intersection of the children's (all ranks for none).
  // The clean nodes are read once into a flat list (the passes repeat):
  // per class its clean nodes, each a rank (a tensor leaf) or its children
  // (canonical), in e-graph order.
  struct Item {
    int32_t rank;         // >= 0: a leaf of this rank; -1: an operator over kids [from, to)
    uint32_t from, to;
  };
  std::vector<Item> items;
  std::vector<eg::Id> kids;
  std::vector<uint32_t> itemEnd(classes.size());  // items of classes[i]: [itemEnd[i-1], itemEnd[i])
  const eg::Symbol tensor = ops::syms().tensor;
  for (size_t i = 0; i < classes.size(); ++i) {
    for (const eg::ENode& n : g.eclass(classes[i]).nodes) {
      if (!ops::isCleanNode(n)) continue;
      if (n.op == tensor) {
        auto owner = ops::tensorOwner(n);
        if (!owner || owner->rank < 0 || owner->rank >= static_cast<int32_t>(ranks)) continue;
        items.push_back({owner->rank, 0, 0});
      } else {
        const auto from = static_cast<uint32_t>(kids.size());
        for (eg::Id ch : n.children) kids.push_back(g.find(ch));
        items.push_back({-1, from, static_cast<uint32_t>(kids.size())});
      }
    }
    itemEnd[i] = static_cast<uint32_t>(items.size());
  }
  std::vector<uint64_t> val(words_);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < classes.size(); ++i) {
      uint64_t* mine = at(classes[i]);
      for (uint32_t k = i ? itemEnd[i - 1] : 0; k < itemEnd[i]; ++k) {
        const Item& it = items[k];
        if (it.rank >= 0) {
          std::fill(val.begin(), val.end(), 0);
          val[static_cast<size_t>(it.rank) / 64] = uint64_t{1} << (it.rank % 64);
        } else {
          std::fill(val.begin(), val.end(), ~uint64_t{0});
          val.back() &= lastMask;
          for (uint32_t j = it.from; j < it.to; ++j) {
            const uint64_t* cb = at(kids[j]);
            for (size_t w = 0; w < words_; ++w) val[w] &= cb[w];
          }
        }
        for (size_t w = 0; w < words_; ++w)
          if (val[w] & ~mine[w]) mine[w] |= val[w], changed = true;
      }
    }
  }
  for (eg::Id c : classes) {
    const uint64_t* b = at(c);
    for (size_t w = 0; w < words_; ++w)
      for (uint64_t x = b[w]; x; x &= x - 1) pure_[w * 64 + static_cast<size_t>(__builtin_ctzll(x))].push_back(c);
  }
}

bool RankClasses::hasPure(eg::Id cls, int32_t r) const {
  const uint64_t* b = bits_.data() + static_cast<size_t>(g_.find(cls)) * words_;
  return (b[static_cast<size_t>(r) / 64] >> (r % 64)) & 1;
}

}  // namespace tangle
