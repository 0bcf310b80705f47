#include "infer/symbol_facts.h"

#include <algorithm>
#include <set>

#include "lower/lower.h"
#include "ops/ops.h"
#include "ops/shape.h"

namespace tangle {

void noteSymbolicSizes(const Graph& g, sym::Context& ctx) {
  for (const Node& n : g.nodes)
    if (n.type)
      for (Dim d : n.type->shape)
        if (isSymbolic(d)) ctx.noteSize(sym::fromDim(d));
}

namespace {

std::set<std::string> symbolNames(const Graph& spec, const std::vector<Graph>& impl) {
  std::set<std::string> out;
  auto collect = [&](sym::ExprId e) {
    for (sym::AtomId a : sym::leaves(e))
      if (sym::atom(a).kind == sym::Atom::Kind::Var) out.insert(sym::atom(a).name);
  };
  auto scan = [&](const Graph& g) {
    for (const Node& n : g.nodes) {
      if (n.symValue) collect(*n.symValue);
      if (n.type)
        for (Dim d : n.type->shape)
          if (isSymbolic(d)) collect(sym::fromDim(d));
    }
  };
  scan(spec);
  for (const Graph& g : impl) scan(g);
  return out;
}

std::string keep(std::string_view name) { return std::string(name); }

}  // namespace

void addAssumptions(const RelationFile& rel, const Graph& spec, const std::vector<Graph>& impl, sym::Context& ctx) {
  if (rel.assumptions.empty()) return;
  const std::set<std::string> known = symbolNames(spec, impl);
  for (const Assumption& a : rel.assumptions) {
    std::string why;
    auto side = [&](const std::string& text) {
      auto e = sym::parse(text, keep, &why);
      if (!e) throw InputError(a.loc, "assume: " + why);
      for (sym::AtomId v : sym::leaves(*e)) {
        const std::string& name = sym::atom(v).name;
        if (sym::atom(v).kind == sym::Atom::Kind::Var && !known.count(name))
          throw InputError(a.loc, "assume names the symbol '" + name +
                                      "', which no graph has (write S.<symbol> or D<rank>.<symbol>, e.g. S.s0)");
      }
      return *e;
    };
    sym::ExprId l = side(a.lhs), r = side(a.rhs);
    std::string origin = "assume at " + a.loc.file + ":" + std::to_string(a.loc.line);
    bool ok = a.op == "==" ? ctx.assumeEqual(l, r, &why, origin)
              : a.op == "<=" ? ctx.assumeLE(l, r, false, &why, origin)
              : a.op == "<"  ? ctx.assumeLE(l, r, true, &why, origin)
              : a.op == ">=" ? ctx.assumeLE(r, l, false, &why, origin)
                             : ctx.assumeLE(r, l, true, &why, origin);
    if (!ok) throw InputError(a.loc, "assume: " + why);
  }
}

void addRelationShapeFacts(const Problem& p, sym::Context& ctx) {
  for (const RelationEntry& r : p.relation->relations) {
    auto id = p.spec->find(r.lhs.toString());
    if (!id) continue;  // reported by inference with the relation's line
    const TensorType* want = p.spec->nodes[p.spec->resolve(*id)].data.tensor();
    if (!want || ops::allConcrete(want->shape)) continue;
    eg::EGraph scratch(ops::inferData, &ctx);
    const TensorType* got = scratch.data(addRelExpr(scratch, r.rhs, *p.spec, *p.impl)).tensor();
    if (!got || got->rank() != want->rank()) continue;  // reported by inference
    for (size_t d = 0; d < want->shape.size(); ++d) {
      if (!isSymbolic(want->shape[d]) && !isSymbolic(got->shape[d])) continue;
      std::string why;
      std::string origin = "input relation at " + r.loc.file + ":" + std::to_string(r.loc.line);
      if (!ctx.assumeEqual(sym::fromDim(want->shape[d]), sym::fromDim(got->shape[d]), &why, origin))
        throw InputError(r.loc, "shape mismatch: " + r.lhs.toString() + " is " + toString(*want) + " but '" +
                                    r.rhs.toString() + "' is " + toString(*got) + " (" + why + ")");
    }
  }
}

}  // namespace tangle
