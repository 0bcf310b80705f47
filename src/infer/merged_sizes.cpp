#include "infer/merged_sizes.h"

#include <algorithm>
#include <cctype>

#include "support/dims.h"

namespace tangle {

bool mentionsUnbacked(sym::ExprId e) {
  for (sym::AtomId a : sym::leaves(e)) {
    const sym::Atom& at = sym::atom(a);
    if (at.kind != sym::Atom::Kind::Var) continue;
    auto dot = at.name.rfind('.');
    std::string_view n = std::string_view(at.name).substr(dot == std::string::npos ? 0 : dot + 1);
    if (n.size() >= 2 && n[0] == 'u' &&
        std::all_of(n.begin() + 1, n.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      return true;
  }
  return false;
}

std::vector<std::string> learnMergedSizes(const InferResult& r, const LGraph& spec, sym::Context& ctx) {
  std::vector<std::string> added;
  for (const InferStats::MergedSize& m : r.stats.mergedSizes) {
    sym::ExprId a = sym::fromDim(m.a), b = sym::fromDim(m.b);
    if (!mentionsUnbacked(a) && !mentionsUnbacked(b)) continue;
    if (ctx.proveEqual(a, b)) continue;
    std::string where = m.specNode >= 0 ? spec.nodes[m.specNode].name : std::string("?");
    std::string origin = "proved: the search of " + where + " merged two values of these sizes";
    std::string why;
    if (ctx.assumeEqual(a, b, &why, origin)) added.push_back(origin);
  }
  return added;
}

}  // namespace tangle
