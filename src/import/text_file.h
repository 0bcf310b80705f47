// Reading an input file whole (importers work on the full text).
#pragma once

#include <string>

namespace tangle {

// Contents of `path`; throws InputError "path: error: cannot open ..." when unreadable.
std::string readTextFile(const std::string& path);

}  // namespace tangle
