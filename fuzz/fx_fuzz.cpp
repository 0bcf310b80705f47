// Fuzz target: the torch.fx text reader (src/import/fx_importer.h).
#include "fuzz_input.h"
#include "import/fx_importer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return tangle::fuzz::runReader(data, size, [](const std::string& t) { tangle::importFxText(t, tangle::fuzz::kPath); });
}
