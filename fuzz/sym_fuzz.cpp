// Fuzz target: the reader of symbolic sizes, as annotations ("f32[s0, (s0//2)]",
// "Sym(2*s0)", parsed by import/type_annotation.h and sym::parse) and as the
// two sides of a relation file's `assume` (sym::parse alone).
#include "fuzz_input.h"
#include "import/type_annotation.h"
#include "sym/expr.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return tangle::fuzz::runReader(data, size, [](const std::string& t) {
    (void)tangle::parseTypeAnnotation(t);
    std::string why;
    if (auto e = tangle::sym::parse(t, [](std::string_view n) { return "F." + std::string(n); }, &why))
      (void)tangle::sym::toString(*e);
  });
}
