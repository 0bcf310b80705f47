#include "verify.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>

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

// How `python -m tangle.verify` is run: the interpreter, and the folder that holds the tangle
// package, put on PYTHONPATH (empty: the interpreter imports an installed one).
struct PythonRun {
  std::string python = "python3";
  fs::path path;
};

bool holdsPackage(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "tangle" / "verify.py", ec);
}

// In order: a checkout's python/ (<binary>/../../python: build/bin/tangle); an environment the CLI
// was installed into by pip (its scripts folder, with the python that imports the package);
// the source tree the binary was built from.
std::optional<PythonRun> findPython(const fs::path& self) {
  std::error_code ec;
  fs::path checkout = self.parent_path().parent_path().parent_path() / "python";
  if (holdsPackage(checkout)) return PythonRun{"python3", fs::weakly_canonical(checkout, ec)};
  if (fs::path beside = self.parent_path() / "python3"; fs::exists(beside, ec)) return PythonRun{beside.string(), {}};
#ifdef TANGLE_SOURCE_DIR
  if (fs::path source = fs::path(TANGLE_SOURCE_DIR) / "python"; holdsPackage(source))
    return PythonRun{"python3", fs::weakly_canonical(source, ec)};
#endif
  return std::nullopt;
}

}  // namespace

int forwardToPython(const char* argv0, const std::string& command, const std::vector<std::string>& args) {
  fs::path self = selfPath(argv0);
  auto run = findPython(self);
  if (!run) {
    std::cerr << "tangle " << command << ": error: cannot find the tangle Python package (python/tangle/verify.py) beside "
              << self.string() << " or in the source tree it was built from\n";
    return 2;
  }
  std::string python = run->python;
  if (!run->path.empty()) {
    std::string pythonpath = run->path.string();
    if (const char* old = std::getenv("PYTHONPATH"); old && *old) pythonpath += std::string(":") + old;
    setenv("PYTHONPATH", pythonpath.c_str(), 1);
  }
  setenv("TANGLE_BIN", self.c_str(), 1);
  if (const char* chosen = std::getenv("TANGLE_PYTHON"); chosen && *chosen) python = chosen;
  std::vector<std::string> argStore = {python, "-m", "tangle." + command};
  argStore.insert(argStore.end(), args.begin(), args.end());
  std::vector<char*> argvOut;
  for (auto& a : argStore) argvOut.push_back(a.data());
  argvOut.push_back(nullptr);
  std::cout.flush();
  execvp(python.c_str(), argvOut.data());
  std::cerr << "tangle " << command << ": error: cannot run " << python << " (" << std::strerror(errno)
            << "); tangle " << command << " needs Python 3 with PyTorch (set TANGLE_PYTHON to choose the interpreter)\n";
  return 2;
}

}  // namespace tangle::cli
