#include "report/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <regex>

#include <fmt/format.h>

namespace tangle {

namespace {
size_t terminalWidth() {
  winsize w{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 20) return w.ws_col;
  return 80;
}

double secondsBetween(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}
}  // namespace

ProgressLine::ProgressLine(std::FILE* out, bool enabled, double delay) : out_(out), enabled_(enabled), delay_(delay) {}

double ProgressLine::defaultDelay() {
  const char* env = std::getenv("TANGLE_PROGRESS_DELAY");
  if (!env || !*env) return 2.0;
  char* end = nullptr;
  double d = std::strtod(env, &end);
  return end && *end == '\0' && d >= 0 ? d : 2.0;
}

bool ProgressLine::stderrIsTerminal() { return isatty(STDERR_FILENO) == 1; }

std::string shortSource(const std::string& comment) {
  static const std::regex re(R"(File: (?:.*/)?([^/:]+):(\d+) in ([^,]+),)");
  std::smatch m;
  if (!std::regex_search(comment, m, re)) return "";
  return m[1].str() + ":" + m[2].str() + " in " + m[3].str();
}

std::string formatDuration(double s) {
  long total = std::lround(std::max(0.0, s));
  if (total >= 3600) return fmt::format("{}h{:02}m", total / 3600, (total % 3600) / 60);
  if (total >= 60) return fmt::format("{}m{:02}s", total / 60, total % 60);
  return fmt::format("{}s", total);
}

void ProgressLine::update(size_t done, size_t total, const LGraph& spec, int node) {
  if (!enabled_) return;
  auto now = std::chrono::steady_clock::now();
  double elapsed = secondsBetween(start_, now);
  if (elapsed < delay_) return;
  if (drawn_ && secondsBetween(lastDraw_, now) < 0.2) return;  // a few redraws a second at most
  std::string eta = done > 0 ? formatDuration(elapsed / double(done) * double(total - done)) : "?";
  std::string line = fmt::format("checking: operator {}/{}, ETA {}: {}", done + 1, total, eta, spec.node(node).name);
  if (auto src = shortSource(spec.origin(node).source); !src.empty()) line += " (" + src + ")";
  // A line wider than the terminal would wrap, and \r would go back to its last row only.
  size_t width = terminalWidth();
  if (line.size() >= width) line = line.substr(0, width > 4 ? width - 4 : 0) + "...";
  // \r and erase-to-end-of-line: the previous, longer line leaves nothing behind.
  std::fprintf(out_, "\r%s\033[K", line.c_str());
  std::fflush(out_);
  drawn_ = true;
  lastDraw_ = now;
}

void ProgressLine::clear() {
  if (!drawn_) return;
  std::fprintf(out_, "\r\033[K");
  std::fflush(out_);
  drawn_ = false;
}

}  // namespace tangle
