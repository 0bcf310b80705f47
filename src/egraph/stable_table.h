// Private helper of the interners: an append-only array whose elements never
// move, readable without a lock. Elements live in segments of doubling size;
// a reader needs only the (atomic) segment pointer, so `get` is two loads.
// Appends must be serialized by the caller (the interner's mutex).
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>

namespace tangle::eg::detail {

template <class T>
class StableTable {
 public:
  StableTable() = default;
  StableTable(const StableTable&) = delete;
  StableTable& operator=(const StableTable&) = delete;
  // Interners are process-lifetime singletons and are deliberately never
  // destroyed, so there is no destructor freeing the segments.

  const T& get(uint32_t id) const {
    auto [seg, off] = locate(id);
    return segments_[seg].load(std::memory_order_acquire)[off];
  }

  // Appends (caller holds the writer lock); returns the new element's index.
  template <class... Args>
  uint32_t append(Args&&... args) {
    uint32_t id = size_.load(std::memory_order_relaxed);
    auto [seg, off] = locate(id);
    T* base = segments_[seg].load(std::memory_order_relaxed);
    if (!base) {
      base = static_cast<T*>(::operator new(sizeof(T) * segmentSize(seg)));
      segments_[seg].store(base, std::memory_order_release);
    }
    new (base + off) T(std::forward<Args>(args)...);
    size_.store(id + 1, std::memory_order_release);
    return id;
  }

  uint32_t size() const { return size_.load(std::memory_order_acquire); }

 private:
  static constexpr uint32_t kFirstBits = 6;  // segment 0 holds 64 elements
  static constexpr int kSegments = 33 - kFirstBits;

  static size_t segmentSize(int seg) { return seg == 0 ? (size_t{1} << kFirstBits) : (size_t{1} << (kFirstBits + seg - 1)); }
  // Segment s >= 1 holds indices [2^(6+s-1), 2^(6+s)).
  static std::pair<int, size_t> locate(uint32_t id) {
    uint32_t hi = id >> kFirstBits;
    if (hi == 0) return {0, id};
    int seg = std::bit_width(hi);
    return {seg, id - (uint32_t{1} << (kFirstBits + seg - 1))};
  }

  std::atomic<T*> segments_[kSegments] = {};
  std::atomic<uint32_t> size_ = 0;
};

}  // namespace tangle::eg::detail
