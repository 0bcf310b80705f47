#include "replay/dim_classes.h"

#include <set>

#include "ops/ops.h"
#include "replay/term_eval.h"
#include "support/error.h"

namespace tangle::replay::detail {

int DimClasses::of(bool spec, int node, size_t type, size_t dim) const {
  const auto& t = spec ? spec_ : impl_;
  if (node < 0 || static_cast<size_t>(node) >= t.size()) return -1;
  const auto& n = t[static_cast<size_t>(node)];
  if (type >= n.size() || dim >= n[type].size()) return -1;
  return n[type][dim];
}

int DimClasses::find(int occ) const {
  auto i = static_cast<size_t>(occ);
  while (parent_[i] != static_cast<int>(i)) {
    parent_[i] = parent_[static_cast<size_t>(parent_[i])];  // path halving
    i = static_cast<size_t>(parent_[i]);
  }
  return static_cast<int>(i);
}

int DimClasses::add(int64_t value) {
  parent_.push_back(static_cast<int>(value_.size()));
  value_.push_back(value);
  return parent_.back();
}

void DimClasses::unite(int a, int b) {
  a = find(a), b = find(b);
  if (a != b) parent_[static_cast<size_t>(std::max(a, b))] = std::min(a, b);
}

std::map<int64_t, int> DimClasses::classesByValue(int64_t threshold) const {
  std::set<int> roots;
  for (const auto* t : {&spec_, &impl_})
    for (const auto& node : *t)
      for (const auto& type : node)
        for (int o : type)
          if (value(o) > threshold) roots.insert(find(o));
  std::map<int64_t, int> out;
  for (int r : roots) ++out[value(r)];
  return out;
}

namespace {

using Occs = std::vector<int>;

struct Builder {
  DimClasses& dc;
  const LGraph& spec;
  const LGraph& impl;

  void allocate(const LGraph& lg, bool isSpec) {
    auto& t = dc.table(isSpec);
    t.resize(lg.nodes.size());
    for (size_t i = 0; i < lg.nodes.size(); ++i) {
      if (lg.nodes[i].aliasOf >= 0) continue;
      for (const TensorType& ty : lg.nodes[i].data.types) {
        t[i].emplace_back();
        for (Dim d : ty.shape) t[i].back().push_back(dc.add(d));
      }
    }
  }
  // Every dim of every type of an LNode (alias-resolved), in order.
  Occs dimsOf(const LGraph& lg, bool isSpec, int id) {
    Occs out;
    for (const auto& ty : dc.table(isSpec)[static_cast<size_t>(lg.resolve(id))])
      out.insert(out.end(), ty.begin(), ty.end());
    return out;
  }
  Occs fresh(const eg::ClassData& d) {
    Occs out;
    for (const TensorType& ty : d.types)
      for (Dim x : ty.shape) out.push_back(dc.add(x));
    return out;
  }
  // One operator: its operands' and its result's dims of one value are one size.
  void uniteEqual(const Occs& here) {
    std::map<int64_t, int> first;
    for (int o : here) {
      if (dc.value(o) < 0) continue;  // symbolic: not reduced
      auto [it, isNew] = first.emplace(dc.value(o), o);
      if (!isNew) dc.unite(it->second, o);
    }
  }

  void definition(const LGraph& lg, bool isSpec, int id) {
    const LNode& ln = lg.nodes[static_cast<size_t>(id)];
    sym::Context none;
    eg::EGraph g(ops::inferData, &none);
    std::vector<Occs> local;   // per definition node: its result's dims
    std::vector<eg::Id> ids;   // per definition node: its class
    for (size_t k = 0; k < ln.def.nodes.size(); ++k) {
      const CanonTerm::Node& tn = ln.def.nodes[k];
      eg::ENode en{tn.op, eg::internAttrs(tn.attrs), {}};
      Occs here;
      for (const CanonTerm::Ref& r : tn.children) {
        if (r.kind == CanonTerm::Ref::Kind::Operand) {
          en.children.push_back(addLeaf(g, lg, static_cast<int>(r.operand)));
          Occs d = dimsOf(lg, isSpec, static_cast<int>(r.operand));
          here.insert(here.end(), d.begin(), d.end());
        } else if (r.kind == CanonTerm::Ref::Kind::Local) {
          en.children.push_back(ids[static_cast<size_t>(r.local)]);
          here.insert(here.end(), local[static_cast<size_t>(r.local)].begin(), local[static_cast<size_t>(r.local)].end());
        } else {
          en.children.push_back(
              g.add(eg::ENode{ops::syms().constant, eg::internAttrs({eg::Attr::real(r.scalar)}), {}}));
        }
      }
      auto added = g.tryAdd(std::move(en));
      if (!added) return;  // ill-typed here: links nothing
      ids.push_back(*added);
      Occs result = k + 1 == ln.def.nodes.size() ? dimsOf(lg, isSpec, id) : fresh(g.data(*added));
      here.insert(here.end(), result.begin(), result.end());
      uniteEqual(here);
      local.push_back(std::move(result));
    }
  }
  void graph(const LGraph& lg, bool isSpec) {
    for (size_t i = 0; i < lg.nodes.size(); ++i) {
      const LNode& n = lg.nodes[i];
      if (n.aliasOf >= 0 || n.isInput || n.def.nodes.empty()) continue;
      definition(lg, isSpec, static_cast<int>(i));
    }
  }

  // A relation S.x = term: the term's operators as above, its result's dims position by position S.x's.
  void relation(int specNode, const eg::Term& t) {
    sym::Context none;
    eg::EGraph g(ops::inferData, &none);
    std::vector<eg::Id> ids;
    std::vector<Occs> occs;
    for (const eg::Term::Node& n : t.nodes) {
      if (const std::string* name = leafName(n)) {
        bool isSpec = ops::tensorOwner(n.op, n.attrs).value_or(Owner::spec()).isSpec();
        const LGraph& lg = isSpec ? spec : impl;
        auto id = lg.find(*name);
        if (!id) return;
        ids.push_back(addLeaf(g, lg, *id));
        occs.push_back(dimsOf(lg, isSpec, *id));
        continue;
      }
      eg::ENode en{n.op, n.attrs, {}};
      Occs here;
      for (uint32_t c : n.children) {
        en.children.push_back(ids[c]);
        here.insert(here.end(), occs[c].begin(), occs[c].end());
      }
      auto added = g.tryAdd(std::move(en));
      if (!added) return;
      Occs result = fresh(g.data(*added));
      here.insert(here.end(), result.begin(), result.end());
      uniteEqual(here);
      ids.push_back(*added);
      occs.push_back(std::move(result));
    }
    if (occs.empty()) return;
    Occs lhs = dimsOf(spec, true, specNode);
    if (lhs.size() != occs.back().size()) return;
    for (size_t k = 0; k < lhs.size(); ++k)
      if (dc.value(lhs[k]) == dc.value(occs.back()[k])) dc.unite(lhs[k], occs.back()[k]);
  }
};

}  // namespace

DimClasses collectDimClasses(const LGraph& spec, const LGraph& impl, const RelationFile& rel,
                             const std::vector<TensorRelations>& certificate) {
  DimClasses dc;
  Builder b{dc, spec, impl};
  b.allocate(spec, true);
  b.allocate(impl, false);
  b.graph(spec, true);
  b.graph(impl, false);
  for (const RelationEntry& r : rel.relations) {
    auto lhs = spec.find(r.lhs.toString());
    if (!lhs) continue;
    try {
      b.relation(*lhs, termOf(r.rhs, spec, impl));
    } catch (const InputError&) {
      // a constant, not a tensor expression: links nothing
    }
  }
  for (const TensorRelations& tr : certificate)
    for (const eg::Term& t : tr.exprs) b.relation(tr.node, t);
  return dc;
}

}  // namespace tangle::replay::detail
