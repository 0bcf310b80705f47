// StampMarks: membership over dense ids (nodes, e-classes) without clearing.
// Stamp a set with next() (at[id] = stamp for each member), then test with one
// load (at[id] == stamp). A new stamp forgets every earlier set; not reentrant:
// a user finishes its tests before another takes a stamp.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tangle {

struct StampMarks {
  std::vector<uint32_t> at;
  uint32_t stamp = 0;
  // A fresh stamp, with room for `ids` ids.
  uint32_t next(size_t ids) {
    if (at.size() < ids) at.resize(ids, 0);
    if (++stamp == 0) {  // wrapped: old stamps could collide
      std::fill(at.begin(), at.end(), 0);
      stamp = 1;
    }
    return stamp;
  }
};

}  // namespace tangle
