// Fuzz target: the tangle-graph JSON reader (src/import/json_importer.h).
#include "fuzz_input.h"
#include "import/json_importer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return tangle::fuzz::runReader(data, size, [](const std::string& t) { tangle::importJsonText(t, tangle::fuzz::kPath); });
}
