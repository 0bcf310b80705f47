// Shared by the unit tests: the FX text print_readable() gives for
// `forward(self, PARAMS)` with BODY (one statement per line, the last one
// `return (...)`).
#pragma once

#include <string>

namespace tangle::testing {

inline std::string fxModuleText(const std::string& params, const std::string& body) {
  std::string text = "import torch\n\nclass M(torch.nn.Module):\n    def forward(self, " + params + "):\n";
  size_t start = 0;
  while (start < body.size()) {
    size_t end = body.find('\n', start);
    if (end == std::string::npos) end = body.size();
    text += "        " + body.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return text;
}

}  // namespace tangle::testing
