#include "replay/term_eval.h"

#include <algorithm>

#include "ops/ops.h"

namespace tangle::replay {

const std::string* leafName(const eg::Term::Node& n) { return ops::tensorName(n.op, n.attrs); }

std::optional<interp::Value> evalTerm(const eg::Term& t, const LeafValues& leaves, std::string* error) {
  auto failWith = [&](std::string why) -> std::optional<interp::Value> {
    if (error) *error = std::move(why);
    return std::nullopt;
  };
  if (t.nodes.empty()) return failWith("empty term");
  std::vector<interp::Value> vals;
  vals.reserve(t.nodes.size());
  for (const auto& n : t.nodes) {
    if (const std::string* name = leafName(n)) {
      const interp::Value* v = leaves(*name, ops::tensorOwner(n.op, n.attrs).value_or(Owner::spec()));
      if (!v) return failWith("no value for " + *name);
      vals.push_back(*v);
      continue;
    }
    // Children are moved into the kernel's inputs and back after it (not copied); a child
    // read twice is moved once and copied for its other uses.
    std::vector<interp::Value> kids;
    std::vector<int64_t> from(n.children.size(), -1);
    kids.reserve(n.children.size());
    for (size_t i = 0; i < n.children.size(); ++i) {
      uint32_t c = n.children[i];
      auto first = std::find(from.begin(), from.begin() + static_cast<std::ptrdiff_t>(i), int64_t(c));
      if (first != from.begin() + static_cast<std::ptrdiff_t>(i)) {
        kids.push_back(kids[static_cast<size_t>(first - from.begin())]);
        continue;
      }
      from[i] = c;
      kids.push_back(std::move(vals[c]));
    }
    eg::ENode en{n.op, n.attrs, std::vector<eg::Id>(n.children.size(), 0)};
    auto v = ops::evaluate(en, kids);
    for (size_t i = 0; i < kids.size(); ++i)
      if (from[i] >= 0) vals[static_cast<size_t>(from[i])] = std::move(kids[i]);
    if (!v) return failWith(eg::symbolName(n.op) + " cannot be evaluated on its inputs");
    vals.push_back(std::move(*v));
  }
  return std::move(vals.back());
}

eg::Term termOf(const RelExpr& e, const LGraph& spec, const LGraph& impl) {
  eg::EGraph g(ops::inferData);
  eg::Id root = addRelExpr(g, e, spec, impl);
  g.rebuild();
  auto t = eg::Extractor(g).best(root);
  if (!t) throw InputError(e.loc, "cannot translate '" + e.toString() + "'");
  return std::move(*t);
}

}  // namespace tangle::replay
