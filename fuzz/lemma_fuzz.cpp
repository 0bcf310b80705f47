// Fuzz target: the lemma file reader (src/lemmas/lemma_file.h) and the rules
// a parsed file gives.
#include "fuzz_input.h"
#include "lemmas/lemma_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return tangle::fuzz::runReader(data, size, [](const std::string& t) {
    tangle::lemmas::LemmaFile f = tangle::lemmas::parseLemmaText(t, tangle::fuzz::kPath);
    (void)f.rules();
  });
}
