#include "egraph/enode.h"

#include <bit>
#include <string>

namespace tangle::eg {

size_t ENodeHash::operator()(const ENode& n) const noexcept {
  // One multiply per word, a final avalanche (murmur3 fmix64): cheap and good
  // enough for the open-addressing hashcons, which uses the low bits.
  constexpr uint64_t kMul = 0x9e3779b97f4a7c15ULL;
  uint64_t h = (static_cast<uint64_t>(n.op) | (static_cast<uint64_t>(n.attrs) << 32)) * kMul;
  for (Id c : n.children) h = (std::rotl(h, 23) ^ c) * kMul;
  h ^= n.children.size();
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return static_cast<size_t>(h);
}

std::string toString(const ENode& n) {
  std::string out = "(" + symbolName(n.op);
  if (n.attrs != kNoAttrs) out += "[" + toString(attrs(n.attrs)) + "]";
  for (Id c : n.children) out += " e" + std::to_string(c);
  return out + ")";
}

}  // namespace tangle::eg
