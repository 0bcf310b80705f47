#include "verify.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

namespace fs = std::filesystem;

namespace tangle::cli {

namespace {

// This binary's absolute path (/proc/self/exe, else argv[0] made absolute).
fs::path selfPath(const char* argv0) {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && !p.empty()) return p;
  return fs::absolute(argv0, ec);
}

#ifndef TANGLE_PACKAGED
// The folder that holds the `tangle` Python package: <binary>/../../python (build/bin/tangle in the
// repository), then the source tree the binary was built from.
fs::path pythonDir(const fs::path& self) {
  std::vector<fs::path> candidates = {self.parent_path().parent_path().parent_path() / "python"};
#ifdef TANGLE_SOURCE_DIR
  candidates.push_back(fs::path(TANGLE_SOURCE_DIR) / "python");
#endif
  for (const auto& c : candidates) {
    std::error_code ec;
    if (fs::is_regular_file(c / "tangle" / "verify.py", ec)) return fs::weakly_canonical(c, ec);
  }
  return {};
}
#endif

}  // namespace

int forwardToPythonVerify(const char* argv0, const std::vector<std::string>& args) {
  fs::path self = selfPath(argv0);
  std::string python = "python3";
#ifdef TANGLE_PACKAGED
  // Installed by pip into an environment's scripts folder: its python imports the installed package.
  if (std::error_code ec; fs::exists(self.parent_path() / "python3", ec)) python = (self.parent_path() / "python3").string();
#else
  fs::path py = pythonDir(self);
  if (py.empty()) {
    std::cerr << "tangle verify: error: cannot find the tangle Python package (python/tangle/verify.py) beside "
              << self.string() << " or in the source tree it was built from\n";
    return 2;
  }
  std::string pythonpath = py.string();
  if (const char* old = std::getenv("PYTHONPATH"); old && *old) pythonpath += std::string(":") + old;
  setenv("PYTHONPATH", pythonpath.c_str(), 1);
#endif
  setenv("TANGLE_BIN", self.c_str(), 1);
  if (const char* chosen = std::getenv("TANGLE_PYTHON"); chosen && *chosen) python = chosen;
  std::vector<std::string> argStore = {python, "-m", "tangle.verify"};
  argStore.insert(argStore.end(), args.begin(), args.end());
  std::vector<char*> argvOut;
  for (auto& a : argStore) argvOut.push_back(a.data());
  argvOut.push_back(nullptr);
  std::cout.flush();
  execvp(python.c_str(), argvOut.data());
  std::cerr << "tangle verify: error: cannot run " << python << " (" << std::strerror(errno)
            << "); tangle verify needs Python 3 with PyTorch (set TANGLE_PYTHON to choose the interpreter)\n";
  return 2;
}

}  // namespace tangle::cli
