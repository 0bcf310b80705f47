// Fuzz target: the relation file reader (src/relation/relation.h), then the
// rank expansion every check does after reading (D* -> D0 .. D{N-1}).
#include "fuzz_input.h"
#include "relation/relation.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return tangle::fuzz::runReader(data, size, [](const std::string& t) {
    tangle::RelationFile f = tangle::parseRelationText(t, tangle::fuzz::kPath);
    f.expand(f.implRanks > 0 && f.implRanks <= 8 ? f.implRanks : 2);
  });
}
