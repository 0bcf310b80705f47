// Shared by the fuzz targets: runs one reader on one input and accepts only
// the outcomes a reader may have (a result, or one InputError line naming the
// file). Anything else (another exception, a crash, a sanitizer report, a
// hang) is a finding: the target aborts so libFuzzer keeps the input.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "support/error.h"
#include "sym/expr.h"

namespace tangle::fuzz {

// The path the readers are told they read (it must start every error line).
inline const std::string kPath = "fuzz.input";

template <class Read>
int runReader(const uint8_t* data, size_t size, Read read) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    read(text);
    if (std::getenv("TANGLE_FUZZ_PRINT")) std::fprintf(stderr, "accepted\n");
  } catch (const InputError& e) {
    std::string msg = e.what();
    if (std::getenv("TANGLE_FUZZ_PRINT")) std::fprintf(stderr, "%s\n", msg.c_str());  // to see what a reader says
    // One clear line: "<file>[:line]: error: what".
    if (msg.rfind(kPath, 0) != 0 || msg.find(": error: ") == std::string::npos ||
        msg.find('\n') != std::string::npos) {
      std::fprintf(stderr, "fuzz: bad error message: %s\n", msg.c_str());
      std::abort();
    }
  }
  sym::resetInterning();  // nothing of this input is alive any more; see sym/expr.h
  return 0;
}

}  // namespace tangle::fuzz
