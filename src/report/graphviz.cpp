#include "report/graphviz.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

extern char** environ;

namespace tangle {

namespace fs = std::filesystem;

namespace {

// A private temporary folder, removed with everything in it when this goes out of scope.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "tangle-dot-XXXXXX").string();
    if (mkdtemp(tmpl.data())) path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
  }
};

// Waits for `pid` up to `timeout` seconds; kills it past that. The exit status, or -1.
int waitWithTimeout(pid_t pid, double timeout) {
  auto start = std::chrono::steady_clock::now();
  int status = 0;
  while (true) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (r < 0) return -1;
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > timeout) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -2;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace

std::optional<std::string> renderSvg(const std::string& dot, std::string& why, double timeoutSeconds) {
  const char* env = std::getenv("TANGLE_DOT");
  std::string program = env && *env ? env : "dot";
  TempDir tmp;
  if (tmp.path.empty()) {
    why = "cannot create a temporary folder for Graphviz";
    return std::nullopt;
  }
  fs::path in = tmp.path / "graph.dot", out = tmp.path / "graph.svg", err = tmp.path / "stderr";
  std::ofstream(in) << dot;
  std::vector<std::string> args = {program, "-Tsvg", in.string(), "-o", out.string()};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    why = "Graphviz's `" + program + "` is not installed (Debian package graphviz)";
    return std::nullopt;
  }
  int status = waitWithTimeout(pid, timeoutSeconds);
  if (status == 127) {  // posix_spawnp may report a missing program through the child's exit code
    why = "Graphviz's `" + program + "` is not installed (Debian package graphviz)";
    return std::nullopt;
  }
  if (status != 0) {
    std::ifstream e(err);
    std::string first;
    std::getline(e, first);
    why = status == -2 ? "Graphviz's `" + program + "` took longer than the time limit"
                       : "Graphviz's `" + program + "` failed" + (first.empty() ? "" : ": " + first);
    return std::nullopt;
  }
  std::ifstream f(out);
  std::stringstream ss;
  ss << f.rdbuf();
  std::string svg = ss.str();
  size_t at = svg.find("<svg");
  if (at == std::string::npos) {
    why = "Graphviz's `" + program + "` wrote no SVG";
    return std::nullopt;
  }
  return svg.substr(at);
}

}  // namespace tangle
