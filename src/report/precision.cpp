#include "report/precision.h"

#include <optional>
#include <set>
#include <utility>

#include "infer/leaf_names.h"

namespace tangle {

namespace {

using Cast = std::pair<DType, DType>;

// (from, to) when node `id` is a cast between two different float dtypes.
std::optional<Cast> floatCast(const LGraph& lg, int id) {
  const LNode& n = lg.node(id);
  if (n.aliasOf >= 0 || n.def.nodes.size() != 1 || n.def.nodes.back().op != ops::syms().cast || n.operands.size() != 1)
    return std::nullopt;
  const TensorType* in = lg.node(n.operands[0]).data.tensor();
  const TensorType* out = n.data.tensor();
  if (!in || !out || !isFloating(in->dtype) || !isFloating(out->dtype) || in->dtype == out->dtype) return std::nullopt;
  return Cast{in->dtype, out->dtype};
}

// The implementation tensors of a relation term when every one of them is a cast like `c` and
// the term only rearranges them (a sum or a scaling of the casts computes in the cast's target
// dtype what the spec computed before its cast: the rounding differs).
std::optional<std::vector<int>> castLeaves(const eg::Term& t, const LGraph& spec, const LGraph& impl, const Cast& c) {
  std::vector<int> out;
  for (const eg::Term::Node& n : t.nodes) {
    auto id = leaves::leafNode(spec, impl, n.op, n.attrs);
    if (!id) {
      if (!ops::isGatherOp(n.op)) return std::nullopt;
      continue;
    }
    if (leaves::isSpecLeaf(n.op, n.attrs) || floatCast(impl, *id) != c) return std::nullopt;
    out.push_back(*id);
  }
  if (out.empty()) return std::nullopt;
  return out;
}

std::string describe(const LGraph& lg, int id, const Cast& c) {
  const Node& n = lg.origin(id);
  return lg.node(id).name + " (" + n.loc.file + ":" + std::to_string(n.loc.line) + ", " + dtypeName(c.first) + " -> " +
         dtypeName(c.second) + ")";
}

std::string listed(const std::vector<std::string>& xs) {
  std::string s;
  for (size_t i = 0; i < xs.size() && i < 2; ++i) s += (i ? ", " : "") + xs[i];
  if (xs.size() > 2) s += " and " + std::to_string(xs.size() - 2) + " more";
  return s;
}

}  // namespace

std::string precisionNote(const InferResult& r, const LGraph& spec, const LGraph& impl) {
  if (r.verdict != Verdict::Refines) return "";
  std::set<int> matched;
  std::vector<std::string> specOnly, implOnly;
  for (const TensorRelations& rel : r.all) {
    auto c = rel.node >= 0 ? floatCast(spec, rel.node) : std::nullopt;
    if (!c) continue;
    bool found = false;
    for (const eg::Term& t : rel.exprs)
      if (auto ls = castLeaves(t, spec, impl, *c)) {
        found = true;
        matched.insert(ls->begin(), ls->end());
      }
    if (!found) specOnly.push_back(describe(spec, rel.node, *c));
  }
  for (int id = 0; id < static_cast<int>(impl.nodes.size()); ++id)
    if (auto c = floatCast(impl, id); c && !matched.count(id)) implOnly.push_back(describe(impl, id, *c));
  if (specOnly.empty() && implOnly.empty()) return "";
  std::string s = "refines over the reals; precision differs at ";
  if (!specOnly.empty()) s += listed(specOnly) + " (spec casts the implementation does not match)";
  if (!specOnly.empty() && !implOnly.empty()) s += ", ";
  if (!implOnly.empty()) s += listed(implOnly) + " (implementation casts the spec does not match)";
  return s;
}

}  // namespace tangle
