// `tangle verify ...` and `tangle sweep ...`: forward their arguments to `python3 -m tangle.verify`
// (capture, relation, then `tangle check` on the result) or `python3 -m tangle.sweep` (many verify runs);
// no verification logic in Python.
#pragma once

#include <string>
#include <vector>

namespace tangle::cli {

// Replaces the process with the Python front end `tangle.<command>` (PYTHONPATH = the repository's
// python/ folder, TANGLE_BIN = this binary). Returns only on failure, after printing one line: exit code 2.
int forwardToPython(const char* argv0, const std::string& command, const std::vector<std::string>& args);

}  // namespace tangle::cli
