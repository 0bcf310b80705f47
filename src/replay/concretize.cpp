#include "replay/concretize.h"

#include <algorithm>

#include <fmt/format.h>

namespace tangle::replay::detail {

namespace {

using Assignment = sym::Context::Assignment;

std::optional<Dim> valueOf(Dim d, const Assignment& a, const sym::Context& symbols) {
  if (!isSymbolic(d)) return d;
  auto v = symbols.valueOf(sym::fromDim(d), a);
  if (!v || *v < 0) return std::nullopt;
  return *v;
}

bool concretizeShape(std::vector<Dim>& shape, const Assignment& a, const sym::Context& symbols) {
  for (Dim& d : shape) {
    auto v = valueOf(d, a, symbols);
    if (!v) return false;
    d = *v;
  }
  return true;
}

// SymDim attributes become Int; symbolic entries of size lists become numbers.
std::optional<eg::AttrList> concretizeAttrs(eg::AttrList attrs, const Assignment& a, const sym::Context& symbols) {
  for (eg::Attr& x : attrs) {
    if (x.kind == eg::Attr::Kind::SymDim) {
      auto v = valueOf(x.i, a, symbols);
      if (!v) return std::nullopt;
      x = eg::Attr::integer(*v);
    } else if (x.kind == eg::Attr::Kind::IntList && std::any_of(x.list.begin(), x.list.end(), isSymbolic)) {
      if (!concretizeShape(x.list, a, symbols)) return std::nullopt;
    }
  }
  return attrs;
}

bool concretizeTerm(eg::Term& t, const Assignment& a, const sym::Context& symbols) {
  for (auto& n : t.nodes) {
    auto attrs = concretizeAttrs(eg::attrs(n.attrs), a, symbols);
    if (!attrs) return false;
    n.attrs = eg::internAttrs(*attrs);
  }
  return true;
}

bool concretizeRelations(std::vector<TensorRelations>& rs, const Assignment& a, const sym::Context& symbols) {
  for (auto& r : rs)
    for (auto& t : r.exprs)
      if (!concretizeTerm(t, a, symbols)) return false;
  return true;
}

}  // namespace

std::optional<std::vector<sym::AtomId>> sizeVariables(const std::vector<const LGraph*>& graphs,
                                                      const sym::Context& symbols) {
  std::vector<sym::AtomId> out;
  auto collect = [&](Dim d) {
    if (!isSymbolic(d)) return true;
    for (sym::AtomId v : sym::leaves(symbols.canon(sym::fromDim(d)))) {
      if (sym::atom(v).kind != sym::Atom::Kind::Var) return false;
      if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
    }
    return true;
  };
  for (const LGraph* lg : graphs)
    for (const LNode& n : lg->nodes) {
      for (const TensorType& t : n.data.types)
        for (Dim d : t.shape)
          if (!collect(d)) return std::nullopt;
      for (const CanonTerm::Node& tn : n.def.nodes)
        for (const eg::Attr& x : tn.attrs) {
          if (x.kind == eg::Attr::Kind::SymDim && !collect(x.i)) return std::nullopt;
          if (x.kind == eg::Attr::Kind::IntList)
            for (Dim d : x.list)
              if (!collect(d)) return std::nullopt;
        }
    }
  std::sort(out.begin(), out.end(), [](sym::AtomId x, sym::AtomId y) { return sym::atom(x).name < sym::atom(y).name; });
  return out;
}

std::string describe(const Assignment& a) {
  std::vector<std::string> parts;
  for (auto& [v, x] : a) parts.push_back(sym::atom(v).name + " = " + std::to_string(x));
  std::sort(parts.begin(), parts.end());
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::optional<LGraph> concretize(const LGraph& lg, const Assignment& a, const sym::Context& symbols) {
  LGraph out = lg;
  for (LNode& n : out.nodes) {
    for (TensorType& t : n.data.types)
      if (!concretizeShape(t.shape, a, symbols)) return std::nullopt;
    for (CanonTerm::Node& tn : n.def.nodes) {
      auto attrs = concretizeAttrs(tn.attrs, a, symbols);
      if (!attrs) return std::nullopt;
      tn.attrs = std::move(*attrs);
    }
  }
  return out;
}

std::optional<InferResult> concretize(const InferResult& r, const Assignment& a, const sym::Context& symbols) {
  InferResult out = r;
  if (!concretizeRelations(out.outputs, a, symbols) || !concretizeRelations(out.all, a, symbols)) return std::nullopt;
  if (out.failure && !concretizeRelations(out.failure->inputRelations, a, symbols)) return std::nullopt;
  for (auto& e : out.expectations)
    for (auto& t : e.known)
      if (!concretizeTerm(t, a, symbols)) return std::nullopt;
  return out;
}

}  // namespace tangle::replay::detail
