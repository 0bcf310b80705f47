#include "import/import.h"

#include "import/fx_importer.h"
#include "import/hlo_importer.h"
#include "import/json_importer.h"

namespace tangle {

namespace {
bool endsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
}  // namespace

Graph importGraph(const std::string& path) {
  if (endsWith(path, ".py")) return importFxFile(path);
  if (endsWith(path, ".json")) return importJsonFile(path);
  if (endsWith(path, ".hlo")) return importHloFile(path);
  throw InputError(SourceLoc{path, 0},
                   "unsupported graph format (expected a torch.fx dump '.py', a tangle-graph '.json' or an "
                   "XLA HLO text '.hlo' file)");
}

}  // namespace tangle
