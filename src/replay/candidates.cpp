#include "replay/candidates.h"

#include <algorithm>
#include <set>

#include "interp/tensor.h"
#include "ops/ops.h"
#include "replay/inputs.h"

namespace tangle::replay::detail {

namespace {

// "D1.mm" -> "mm"; "S.mm" -> "mm".
std::string baseName(const std::string& name) {
  auto dot = name.find('.');
  return dot == std::string::npos ? name : name.substr(dot + 1);
}

eg::Term::Node leafNode(const std::string& name) {
  return {ops::syms().tensor, eg::internAttrs({eg::Attr::str(name)}), {}};
}

eg::Term combine(eg::Symbol op, eg::AttrList attrs, const std::vector<std::string>& leaves) {
  eg::Term t;
  std::vector<uint32_t> kids;
  for (auto& l : leaves) {
    kids.push_back(static_cast<uint32_t>(t.nodes.size()));
    t.nodes.push_back(leafNode(l));
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
  for (int id : f.nearbyImpl) addBase(baseName(impl.node(impl.resolve(id)).leafName));
  addBase(baseName(spec.node(f.tensor).name));

  std::set<std::string> seen, seenOther;
  auto add = [&](eg::Term t) {
    std::string text = formatTerm(t);
    if (out.sameShape.size() < limit && seen.insert(text).second) out.sameShape.push_back({std::move(t), text});
  };
  const int ranks = static_cast<int>(impl.graphs.size());
  for (const std::string& b : bases) {
    std::vector<std::string> names;  // leaf names per rank that has the tensor
    std::vector<interp::Shape> shapes;
    for (int r = 0; r < ranks; ++r) {
      auto id = impl.find("D" + std::to_string(r) + "." + b);
      if (!id) continue;
      const LNode& n = impl.node(impl.resolve(*id));
      auto shape = concreteShape(n);
      if (!shape) continue;
      names.push_back(n.leafName);
      shapes.push_back(*shape);
    }
    for (size_t k = 0; k < names.size(); ++k) {
      if (shapes[k] == *target) add(eg::Term{{leafNode(names[k])}});
      else if (seenOther.insert(names[k]).second) out.otherShapes.push_back(names[k] + " " + interp::shapeString(shapes[k]));
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
