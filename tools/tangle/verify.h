// `tangle verify ...`: forwards its arguments to `python3 -m tangle.verify` (capture, relation,
// then `tangle check` on the result; no verification logic in Python).
#pragma once

#include <string>
#include <vector>

namespace tangle::cli {

// Replaces the process with the Python front end (PYTHONPATH = the repository's python/ folder,
// TANGLE_BIN = this binary). Returns only on failure, after printing one line: exit code 2.
int forwardToPythonVerify(const char* argv0, const std::vector<std::string>& args);

}  // namespace tangle::cli
