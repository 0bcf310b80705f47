// Helpers of the end-to-end tests: run the `tangle` binary, capture its exit
// code, stdout and stderr, and pick lines out of its text report.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace tangle::e2e {

namespace fs = std::filesystem;

inline std::string sourcePath(const std::string& rel) { return std::string(TANGLE_SOURCE_DIR) + "/" + rel; }
inline std::string examplePath(const std::string& rel) { return sourcePath("examples/" + rel); }
inline std::string badPath(const std::string& name) { return sourcePath("tests/data/bad/" + name); }

struct RunResult {
  int exitCode = -1;  // -1: did not exit normally (signal)
  std::string out;
  std::string err;
};

inline std::string shellQuote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

inline std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A fresh path in the temp folder, unique per process and call (tests may run
// in parallel under ctest).
inline fs::path tempPath(const std::string& stem) {
  static std::atomic<int> counter{0};
  return fs::temp_directory_path() /
         ("tangle_e2e_" + std::to_string(getpid()) + "_" + std::to_string(counter++) + "_" + stem);
}

// Runs TANGLE_BINARY with `args` (from `cwd` when given), killing it after 60 s
// of CPU time (TANGLE_TEST_TIMEOUT seconds: the sanitizer build runs 3-5x
// slower) so a runaway search fails the test instead of blocking the suite.
// CPU time, not wall time: on a loaded machine a check can wait for a core
// many times longer than it computes. Ten times as much wall time stops a
// process that hangs without computing.
inline RunResult runTangle(const std::vector<std::string>& args, const std::string& cwd = "") {
  fs::path outFile = tempPath("stdout"), errFile = tempPath("stderr");
  std::string cmd;
  if (!cwd.empty()) cmd += "cd " + shellQuote(cwd) + " && ";
  const char* limit = std::getenv("TANGLE_TEST_TIMEOUT");
  const int cpuSeconds = limit ? std::max(1, std::atoi(limit)) : 60;
  cmd += "ulimit -t " + std::to_string(cpuSeconds) + " && ";
  if (fs::exists("/usr/bin/timeout")) cmd += "/usr/bin/timeout " + std::to_string(10 * cpuSeconds) + " ";
  cmd += shellQuote(TANGLE_BINARY);
  for (const auto& a : args) cmd += " " + shellQuote(a);
  cmd += " >" + shellQuote(outFile.string()) + " 2>" + shellQuote(errFile.string()) + " </dev/null";
  int status = std::system(cmd.c_str());
  RunResult r;
  if (status != -1 && WIFEXITED(status)) r.exitCode = WEXITSTATUS(status);
  r.out = readFile(outFile);
  r.err = readFile(errFile);
  std::error_code ec;
  fs::remove(outFile, ec);
  fs::remove(errFile, ec);
  return r;
}

inline std::vector<std::string> splitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::string line;
  std::istringstream in(text);
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

inline std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

inline bool startsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }
inline bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

inline std::string firstLine(const std::string& text) {
  auto lines = splitLines(text);
  return lines.empty() ? std::string() : lines.front();
}

// Index of the first line (after `from`) whose trimmed text starts with `prefix`.
inline std::optional<size_t> findLine(const std::vector<std::string>& lines, const std::string& prefix,
                                      size_t from = 0) {
  for (size_t i = from; i < lines.size(); ++i)
    if (startsWith(trim(lines[i]), prefix)) return i;
  return std::nullopt;
}

// The trimmed lines "S.x = expr" listed under "output relation:".
inline std::vector<std::string> outputRelation(const std::string& report) {
  auto lines = splitLines(report);
  std::vector<std::string> rel;
  auto head = findLine(lines, "output relation:");
  if (!head) return rel;
  for (size_t i = *head + 1; i < lines.size(); ++i) {
    if (!startsWith(lines[i], "  S.")) break;
    rel.push_back(trim(lines[i]));
  }
  return rel;
}

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// True when `word` occurs in `s` delimited by characters that cannot be part
// of a tensor name (so "A" matches "S.A" or "'A'" but not "Abc").
inline bool mentionsName(const std::string& s, const std::string& word) {
  auto isNameChar = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t pos = s.find(word); pos != std::string::npos; pos = s.find(word, pos + 1)) {
    bool leftOk = pos == 0 || !isNameChar(s[pos - 1]);
    size_t end = pos + word.size();
    bool rightOk = end == s.size() || !isNameChar(s[end]);
    if (leftOk && rightOk) return true;
  }
  return false;
}

// The line number N of a diagnostic "…<fileName>:N: error: …", or nullopt if
// the message does not have that shape.
inline std::optional<int> diagnosticLine(const std::string& message, const std::string& fileName) {
  std::string key = fileName + ":";
  for (size_t pos = message.find(key); pos != std::string::npos; pos = message.find(key, pos + 1)) {
    size_t i = pos + key.size(), digits = i;
    while (digits < message.size() && std::isdigit(static_cast<unsigned char>(message[digits]))) ++digits;
    if (digits == i) continue;
    if (message.compare(digits, 9, ": error: ") != 0) continue;
    return std::stoi(message.substr(i, digits - i));
  }
  return std::nullopt;
}

// The text report without its two timings (everything else, statistics included, must match).
inline std::string withoutTimes(const std::string& out) {
  static const std::regex times(R"(stats: [0-9.e+-]+ s \(import [0-9.e+-]+ s\))");
  return std::regex_replace(out, times, "stats: T");
}

// The JSON report (dump(2): one key per line) without its timing keys.
inline std::string jsonWithoutTimes(const fs::path& p) {
  std::string kept;
  for (const std::string& line : splitLines(readFile(p)))
    if (line.find("\"seconds\":") == std::string::npos && line.find("\"import_seconds\":") == std::string::npos)
      kept += line + "\n";
  return kept;
}

}  // namespace tangle::e2e
