// Private helper of the e-graph: the hashcons as an open-addressing table of
// node ids (linear probing, backward-shift deletion, no tombstones). The
// e-nodes themselves live in the e-graph's node store; the table keeps only
// (node id, 32 bits of hash), so lookups compare ids and hashes before
// touching a node.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace tangle::eg::detail {

class NodeIndex {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  size_t size() const { return size_; }

  // The node id stored under `hash` for which isSame(id) holds, or kNone.
  template <class IsSame>
  uint32_t find(uint64_t hash, IsSame&& isSame) const {
    if (slots_.empty()) return kNone;
    uint32_t h = static_cast<uint32_t>(hash);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.node == kNone) return kNone;
      if (s.hash == h && isSame(s.node)) return s.node;
    }
  }

  // Starts loading the slot where a lookup of `hash` begins (batched lookups
  // overlap their cache misses this way).
  void prefetch(uint64_t hash) const {
    if (!slots_.empty()) __builtin_prefetch(&slots_[static_cast<uint32_t>(hash) & mask_]);
  }

  // Inserts a node id that is not yet present.
  void insert(uint64_t hash, uint32_t node) {
    if ((size_ + 1) * 4 > slots_.size() * 3) grow();
    place({node, static_cast<uint32_t>(hash)});
    ++size_;
  }

  // Removes `node` (stored under `hash`); false if it was not there.
  bool erase(uint64_t hash, uint32_t node) {
    if (slots_.empty()) return false;
    uint32_t h = static_cast<uint32_t>(hash);
    size_t i = h & mask_;
    for (;; i = (i + 1) & mask_) {
      if (slots_[i].node == kNone) return false;
      if (slots_[i].node == node) break;
    }
    // Backward shift: pull later entries of the probe run into the hole when
    // their home slot is not cyclically within (hole, j].
    for (size_t j = i;;) {
      j = (j + 1) & mask_;
      if (slots_[j].node == kNone) break;
      size_t home = slots_[j].hash & mask_;
      bool movable = (i <= j) ? (home <= i || home > j) : (home <= i && home > j);
      if (movable) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i] = Slot{};
    --size_;
    return true;
  }

  // Empties the table, keeping its slots (a recycled e-graph, egraph.cpp): only the slots ever
  // filled since the last clear when they are few (filling all 2048 slots of a recycled table for a
  // 30-node e-graph was a 70th of a check's instructions).
  void clear() {
    if (touchedAll_) std::fill(slots_.begin(), slots_.end(), Slot{});
    else
      for (uint32_t i : touched_) slots_[i] = Slot{};
    touched_.clear();
    touchedAll_ = false;
    size_ = 0;
  }

  // One allocation of the final size (growing step by step from 64 slots was six allocations and
  // rehashes, most of a small e-graph's construction).
  void reserve(size_t n) {
    size_t want = slots_.empty() ? 64 : slots_.size();
    while (n * 4 > want * 3) want *= 2;
    if (want != slots_.size()) rehash(want);
  }

 private:
  struct Slot {
    uint32_t node = kNone;
    uint32_t hash = 0;
  };

  // (Erasing only moves entries between slots already filled: every filled slot was placed.)
  void place(Slot s) {
    size_t i = s.hash & mask_;
    while (slots_[i].node != kNone) i = (i + 1) & mask_;
    slots_[i] = s;
    if (!touchedAll_) {
      if (touched_.size() * 8 >= slots_.size()) touchedAll_ = true;  // clearing all is cheaper by then
      else touched_.push_back(static_cast<uint32_t>(i));
    }
  }

  void grow() { rehash(slots_.empty() ? 64 : slots_.size() * 2); }

  void rehash(size_t slots) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(slots, Slot{});
    mask_ = slots_.size() - 1;
    touched_.clear();
    touchedAll_ = false;
    for (const Slot& s : old)
      if (s.node != kNone) place(s);
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
  std::vector<uint32_t> touched_;  // the slots filled since the last clear, unless touchedAll_
  bool touchedAll_ = false;
};

}  // namespace tangle::eg::detail
