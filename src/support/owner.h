// Which graph a tensor belongs to: the spec G_s, or rank r of the
// implementation G_d. Tensor names ("S.x", "D1.x") are for people and for
// relation files; code that must tell the graphs apart asks the owner, which
// every tensor leaf and lowered node carries.
#pragma once

#include <cstdint>
#include <string>

namespace tangle {

struct Owner {
  static constexpr int32_t kSpec = -1;
  int32_t rank = kSpec;  // kSpec, or the implementation rank

  static constexpr Owner spec() { return Owner{kSpec}; }
  static constexpr Owner impl(int32_t r) { return Owner{r}; }
  constexpr bool isSpec() const { return rank == kSpec; }
  bool operator==(const Owner&) const = default;
  // The prefix of its tensors' display names: "S." or "D<r>.".
  std::string prefix() const { return isSpec() ? "S." : "D" + std::to_string(rank) + "."; }
};

}  // namespace tangle
