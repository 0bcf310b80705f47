#include "replay/candidates.h"

#include <algorithm>
#include <set>

#include "interp/tensor.h"
#include "ops/ops.h"
#include "replay/inputs.h"

namespace tangle::replay::detail {

namespace {

// The name of a lowered node in its own graph ("D1.mm" -> "mm"); for an
// alias's leaf, the name of the node the leaf is named after.
std::string baseName(const LGraph& lg, const std::string& leafName) {
  auto id = lg.find(leafName);
  return id ? lg.origin(*id).name : leafName;
}

eg::Term::Node leafNode(const LNode& n) { return {ops::syms().tensor, ops::tensorAttrs(n.leafName, n.owner), {}}; }

eg::Term combine(eg::Symbol op, eg::AttrList attrs, const std::vector<const LNode*>& leaves) {
  eg::Term t;
  std::vector<uint32_t> kids;
  for (const LNode* l : leaves) {
    kids.push_back(static_cast<uint32_t>(t.nodes.size()));
    t.nodes.push_back(leafNode(*l));
  }
  t.nodes.push_back({op, eg::internAttrs(attrs), kids});
  return t;
}

}  // namespace

Candidates candidatesFor(const LGraph& spec, const LGraph& impl, const Failure& f, size_t limit) {
  Candidates out;
  auto target = concreteShape(spec.node(f.tensor));
  if (!target) return out;
  std::vector<std::string> bases;
  auto addBase = [&](const std::string& b) {
    if (std::find(bases.begin(), bases.end(), b) == bases.end()) bases.push_back(b);
  };
  for (int id : f.nearbyImpl) addBase(baseName(impl, std::string(impl.node(impl.resolve(id)).leafName)));
  addBase(spec.origin(f.tensor).name);

  std::set<std::string> seen, seenOther;
  auto add = [&](eg::Term t) {
    std::string text = formatTerm(t);
    if (out.sameShape.size() < limit && seen.insert(text).second) out.sameShape.push_back({std::move(t), text});
  };
  const int ranks = static_cast<int>(impl.graphs.size());
  for (const std::string& b : bases) {
    std::vector<const LNode*> names;  // the tensor on each rank that has it
    std::vector<interp::Shape> shapes;
    for (int r = 0; r < ranks; ++r) {
      auto id = impl.find(Owner::impl(r).prefix() + b);
      if (!id) continue;
      const LNode& n = impl.node(impl.resolve(*id));
      auto shape = concreteShape(n);
      if (!shape) continue;
      names.push_back(&n);
      shapes.push_back(*shape);
    }
    for (size_t k = 0; k < names.size(); ++k) {
      if (shapes[k] == *target) add(eg::Term{{leafNode(*names[k])}});
      else if (seenOther.insert(std::string(names[k]->leafName)).second)
        out.otherShapes.push_back(std::string(names[k]->leafName) + " " + interp::shapeString(shapes[k]));
    }
    if (names.size() < 2 || static_cast<int>(names.size()) != ranks) continue;
    bool allSame = std::all_of(shapes.begin(), shapes.end(), [&](auto& s) { return s == shapes[0]; });
    if (!allSame) continue;
    if (shapes[0] == *target) add(combine(ops::syms().sum, {}, names));
    for (size_t d = 0; d < target->size(); ++d) {
      if (shapes[0].size() != target->size()) break;
      interp::Shape cat = shapes[0];
      cat[d] *= static_cast<int64_t>(names.size());
      if (cat == *target) add(combine(ops::syms().concat, {eg::Attr::integer(static_cast<int64_t>(d))}, names));
    }
  }
  return out;
}

}  // namespace tangle::replay::detail
