// Fuzz target: the XLA HLO text reader (src/import/hlo_importer.h).
#include "fuzz_input.h"
#include "import/hlo_importer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return tangle::fuzz::runReader(data, size, [](const std::string& t) { tangle::importHloText(t, tangle::fuzz::kPath); });
}
