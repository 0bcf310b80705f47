#include "replay/term_eval.h"

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
    std::vector<interp::Value> kids;
    kids.reserve(n.children.size());
    for (uint32_t c : n.children) kids.push_back(vals[c]);
    eg::ENode en{n.op, n.attrs, std::vector<eg::Id>(n.children.size(), 0)};
    auto v = ops::evaluate(en, kids);
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
