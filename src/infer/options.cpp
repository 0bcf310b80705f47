#include <charconv>
#include <string>

#include "infer/infer.h"

namespace tangle {

namespace {
SourceLoc locOf(const std::string& key, const RelationFile& rel) {
  auto it = rel.optionLocs.find(key);
  return it != rel.optionLocs.end() ? it->second : SourceLoc{rel.path, 0};
}

template <class T>
T parseNumber(const std::string& key, const std::string& value, const RelationFile& rel) {
  T out{};
  auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
  if (ec != std::errc() || p != value.data() + value.size() || out < 0)
    throw InputError(locOf(key, rel), "option '" + key + "' needs a non-negative number, got '" + value + "'");
  return out;
}
bool parseFlag(const std::string& key, const std::string& value, const RelationFile& rel) {
  if (value == "0" || value == "1") return value == "1";
  throw InputError(locOf(key, rel), "option '" + key + "' needs 0 or 1, got '" + value + "'");
}
}  // namespace

InferOptions inferOptionsFrom(const RelationFile& rel) {
  InferOptions o;
  for (auto& [key, value] : rel.options) {
    if (key == "max_iterations") o.maxIterations = parseNumber<size_t>(key, value, rel);
    else if (key == "max_nodes") o.maxNodes = parseNumber<size_t>(key, value, rel);
    else if (key == "operator_seconds") o.operatorSeconds = parseNumber<double>(key, value, rel);
    else if (key == "total_seconds") o.totalSeconds = parseNumber<double>(key, value, rel);
    else if (key == "max_relations") o.maxRelationsPerTensor = parseNumber<size_t>(key, value, rel);
    else if (key == "max_relations_per_rank") o.maxRelationsPerRank = parseNumber<size_t>(key, value, rel);
    else if (key == "max_deferred") o.maxDeferred = parseNumber<size_t>(key, value, rel);
    else if (key == "reuse") o.reuse = parseFlag(key, value, rel);
    else if (key == "fold") o.fold = parseFlag(key, value, rel);
    else if (key == "block_min") o.blockMin = parseNumber<size_t>(key, value, rel);
    else
      throw InputError(locOf(key, rel), "unknown option '" + key +
                                          "' (known: max_iterations, max_nodes, operator_seconds, total_seconds, max_relations, max_relations_per_rank, max_deferred, reuse, fold, block_min)");
  }
  return o;
}

}  // namespace tangle
