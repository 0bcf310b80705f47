#include "propose.h"

#include <filesystem>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "equiv/propose.h"
#include "support/error.h"

namespace fs = std::filesystem;

namespace tangle::cli {

namespace {

// placeholder name -> parameter name, from STEM.params.json beside STEM.values.json (empty if absent).
std::map<std::string, std::string> paramNames(const std::string& valuesPath) {
  std::map<std::string, std::string> out;
  std::string p = valuesPath;
  auto at = p.rfind(".values.json");
  if (at == std::string::npos) return out;
  std::ifstream in(p.replace(at, std::string::npos, ".params.json"));
  if (!in) return out;
  try {
    auto j = nlohmann::json::parse(in);
    for (const auto& ph : j.at("placeholders"))
      if (ph.contains("fqn") && ph["fqn"].is_string()) out[ph.at("name").get<std::string>()] = ph["fqn"];
  } catch (const std::exception& e) {
    throw InputError({p, 0}, std::string("bad placeholder map: ") + e.what());
  }
  return out;
}

// The graph a values file belongs to, relative to where the relation file is written.
std::string graphPath(const std::string& valuesPath, const equiv::Values& v, const std::string& out) {
  if (v.graph.empty()) throw InputError({valuesPath, 0}, "the values file does not name its graph (\"graph\")");
  fs::path g = fs::path(valuesPath).parent_path() / v.graph;
  fs::path base = out.empty() ? fs::current_path() : fs::absolute(out).parent_path();
  return fs::relative(fs::absolute(g), base).string();
}

}  // namespace

int propose(const std::string& specValues, const std::string& implValues, const std::string& out,
            const std::vector<std::string>& extra) {
  auto spec = equiv::readValues(specValues);
  auto impl = equiv::readValues(implValues);
  auto ps = equiv::propose(spec, impl, 1e-6, extra);
  std::string text = equiv::relationText(ps, graphPath(specValues, spec, out), graphPath(implValues, impl, out),
                                         paramNames(specValues), paramNames(implValues));
  if (out.empty()) {
    std::cout << text;
  } else {
    std::ofstream f(out);
    if (!f || !(f << text)) throw InputError({out, 0}, "cannot write the relation file");
  }
  int missing = 0;
  for (const auto& p : ps)
    if (p.expr.empty() && !p.evaluated) {
      ++missing;
      std::cerr << "tangle propose: no relation for S." << p.spec << ": " << p.note << "\n";
    }
  return missing ? 1 : 0;
}

int localize(const std::string& specValues, const std::string& implValues) {
  auto spec = equiv::readValues(specValues);
  auto impl = equiv::readValues(implValues);
  auto d = equiv::firstDivergence(spec, impl);
  if (!d) {
    std::cout << "no divergence: every tensor the spec computes from the data, or one computed from it, is held "
                 "(up to a rearrangement) by an implementation tensor\n";
    return 0;
  }
  std::cout << equiv::divergenceText(*d, graphPath(specValues, spec, ""), graphPath(implValues, impl, ""));
  return 1;
}

}  // namespace tangle::cli
