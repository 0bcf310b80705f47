// The progress line of a long check on stderr: operators done / total, the
// operator being searched and where it comes from in the model, and an ETA.
// Redrawn in place with \r, and only when stderr is a terminal: pipes, files
// and --quiet get no byte of it.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

#include "lower/lower.h"

namespace tangle {

class ProgressLine {
 public:
  // `enabled`: draw at all (stderr is a terminal and --quiet was not given).
  // Nothing is drawn before `delay` seconds have passed: short checks stay
  // silent. Default: $TANGLE_PROGRESS_DELAY, else 2 s.
  ProgressLine(std::FILE* out, bool enabled, double delay = defaultDelay());
  ~ProgressLine() { clear(); }

  static double defaultDelay();
  // Whether stderr is a terminal (the default for `enabled`).
  static bool stderrIsTerminal();

  // Before spec operator `node` of `spec` is searched, `done` of `total` being done.
  void update(size_t done, size_t total, const LGraph& spec, int node);
  // Erases the line, if one was drawn (before the report is printed).
  void clear();

 private:
  std::FILE* out_;
  bool enabled_;
  double delay_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point lastDraw_{};
};

// "modeling_llama.py:212 in forward" from a node's "File: PATH:LINE in FUNCTION, code: ..."
// comment; empty when the node has none.
std::string shortSource(const std::string& sourceComment);

// "1m05s", "42s" for an ETA.
std::string formatDuration(double seconds);

}  // namespace tangle
