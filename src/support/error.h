// Errors for bad user input. Every importer, parser and validator reports a
// problem with the input as an InputError naming file, line and the offending
// tensor; the CLI prints its one-line message and exits with code 2.
#pragma once

#include <stdexcept>
#include <string>

namespace tangle {

struct SourceLoc {
  std::string file;  // path as the user gave it
  int line = 0;      // 1-based; 0 when unknown
};

class InputError : public std::runtime_error {
 public:
  InputError(SourceLoc loc, const std::string& message)
      : std::runtime_error(format(loc, message)), loc_(std::move(loc)) {}
  const SourceLoc& loc() const { return loc_; }

  // "file:line: error: message" (line omitted when unknown). Always one line: a
  // message quoting a broken input may carry its line breaks, written here as \n.
  static std::string format(const SourceLoc& loc, const std::string& message) {
    std::string out = loc.file.empty() ? std::string("<input>") : loc.file;
    if (loc.line > 0) out += ":" + std::to_string(loc.line);
    out += ": error: ";
    for (char c : message) {
      if (c == '\n') out += "\\n";
      else if (c == '\r') out += "\\r";
      else out += c;
    }
    return out;
  }

 private:
  SourceLoc loc_;
};

}  // namespace tangle
