// Frozen interning. The process-wide interners (eg::intern, eg::internAttrs,
// sym's expressions) hand out ids in the order values are first interned,
// and a run's results must not depend on thread timing. While an
// InternFrozen lives on a thread, an interner asked there for a value it
// does not hold yet throws NotInterned instead of adding it: parallel work
// runs frozen, and the pieces that throw are redone serially, in their
// order, so ids come in the order a serial run gives them (lower.cpp).
#pragma once

namespace tangle {

struct NotInterned {};

namespace detail {
inline thread_local int internFrozenDepth = 0;
}  // namespace detail

class InternFrozen {
 public:
  InternFrozen() { ++detail::internFrozenDepth; }
  ~InternFrozen() { --detail::internFrozenDepth; }
  InternFrozen(const InternFrozen&) = delete;
  InternFrozen& operator=(const InternFrozen&) = delete;
};

// Interners call this where they would add a new value.
inline void checkInternNotFrozen() {
  if (detail::internFrozenDepth > 0) throw NotInterned{};
}

}  // namespace tangle
