#include "import/text_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "support/error.h"

namespace tangle {

std::string readTextFile(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw InputError(SourceLoc{path, 0}, std::string("cannot open file: ") + std::strerror(errno));
  std::string text;
  char buf[1 << 16];
  size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, got);
  bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) throw InputError(SourceLoc{path, 0}, "cannot read file");
  return text;
}

}  // namespace tangle
