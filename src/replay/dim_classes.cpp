#include "replay/dim_classes.h"

#include <algorithm>
#include <set>

#include "ops/ops.h"
#include "replay/dim_ties.h"
#include "replay/size_roles.h"
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
using Typed = std::vector<Occs>;  // [type][dim]

Occs flat(const Typed& t) {
  Occs out;
  for (const Occs& o : t) out.insert(out.end(), o.begin(), o.end());
  return out;
}

// A step-1 slice's bounds (attributes 1 and 2) are positions, not sizes (size_roles.h).
bool isSliceBound(eg::Symbol op, const eg::AttrList& a, size_t k) {
  return op == ops::syms().slice && (k == 1 || k == 2) && a.size() == 4 && a[3].kind == eg::Attr::Kind::Int &&
         a[3].i == 1;
}

bool tilesOneTensor(const eg::Term& t);

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
  // Every type of an LNode (alias-resolved), dim by dim.
  const Typed& dimsOf(const LGraph& lg, bool isSpec, int id) {
    return dc.table(isSpec)[static_cast<size_t>(lg.resolve(id))];
  }
  // A definition's own result. A tuple of a known operator has no annotation (lower.cpp's
  // fillTupleTypes leaves it to the type rules): its items get occurrences from the rule's types
  // here, so the getitems that read it are tied to the operator's operands through them.
  // Its readers see the tuple as a leaf of those types too (else getitem has nothing to type).
  std::map<std::pair<bool, int>, eg::ClassData> inferredTuples;
  const Typed& ownDims(const LGraph& lg, bool isSpec, int id, const eg::ClassData& inferred) {
    int at = lg.resolve(id);
    Typed& own = dc.table(isSpec)[static_cast<size_t>(at)];
    if (own.empty() && !inferred.types.empty()) {
      own = fresh(inferred);
      inferredTuples[{isSpec, at}] = inferred;
    }
    return own;
  }
  eg::Id leaf(eg::EGraph& g, const LGraph& lg, bool isSpec, int id) {
    int at = lg.resolve(id);
    auto it = inferredTuples.find({isSpec, at});
    if (it == inferredTuples.end()) return addLeaf(g, lg, id);
    const LNode& ln = lg.node(at);
    return g.leaf(ln.leafName, ln.owner, it->second);
  }
  Typed fresh(const eg::ClassData& d) {
    Typed out;
    for (const TensorType& ty : d.types) {
      out.emplace_back();
      for (Dim x : ty.shape) out.back().push_back(dc.add(x));
    }
    return out;
  }
  // Slice and concat keep every dim but one in place: those are tied position by position, and the
  // sliced or concatenated one to nothing here (its size fact relates it). By value, aws_llama's
  // rotary halves (64 = 32 + 32, a concat of [.., 32 heads, 32]) were one class with its 32 heads,
  // which pinned the head count, the head dim and every size with them.
  bool positional(const OpOccs& o) {
    const ops::Syms& s = ops::syms();
    if ((o.op != s.slice && o.op != s.concat) || o.attrs.empty() || o.attrs[0].kind != eg::Attr::Kind::Int ||
        o.result.size() != 1 || o.children.empty())
      return false;
    if (o.op == s.slice && !isSliceBound(o.op, o.attrs, 1)) return false;  // other steps: their bounds are sizes
    const Occs& out = o.result[0];
    int64_t d = o.attrs[0].i < 0 ? o.attrs[0].i + static_cast<int64_t>(out.size()) : o.attrs[0].i;
    if (d < 0 || d >= static_cast<int64_t>(out.size())) return false;
    for (const Typed& c : o.children)
      if (c.size() != 1 || c[0].size() != out.size()) return false;
    for (const Typed& c : o.children)
      for (size_t k = 0; k < out.size(); ++k)
        if (static_cast<int64_t>(k) != d && dc.value(c[0][k]) == dc.value(out[k]) && dc.value(out[k]) >= 0)
          dc.unite(c[0][k], out[k]);
    return true;
  }
  // One operator: dims its structure makes equal (dim_ties.h), else its operands' and its result's
  // dims and its size attributes of one value, are one size.
  int record(eg::Symbol op, const eg::AttrList& attrs, std::vector<Typed> children, Typed result) {
    OpOccs o{op, attrs, std::move(children), std::move(result), {}};
    Occs here = flat(o.result);
    for (const Typed& c : o.children) {
      Occs f = flat(c);
      here.insert(here.end(), f.begin(), f.end());
    }
    bool known = ops::find(op) != nullptr;
    o.attrOccs.resize(attrs.size());
    for (size_t k = 0; k < attrs.size(); ++k) {
      if ((known && !isSizeAttr(op, k)) || isSliceBound(op, attrs, k)) continue;
      if (attrs[k].kind == eg::Attr::Kind::Int) o.attrOccs[k].push_back(dc.add(attrs[k].i));
      if (attrs[k].kind == eg::Attr::Kind::IntList)
        for (int64_t v : attrs[k].list) o.attrOccs[k].push_back(dc.add(v));
      here.insert(here.end(), o.attrOccs[k].begin(), o.attrOccs[k].end());
    }
    if (positional(o) || tieByPosition(dc, o)) {
      dc.ops.push_back(std::move(o));
      return static_cast<int>(dc.ops.size()) - 1;
    }
    std::map<int64_t, int> first;
    for (int x : here) {
      if (dc.value(x) < 0) continue;  // symbolic: not reduced
      auto [it, isNew] = first.emplace(dc.value(x), x);
      if (!isNew) dc.unite(it->second, x);
    }
    dc.ops.push_back(std::move(o));
    return static_cast<int>(dc.ops.size()) - 1;
  }

  void definition(const LGraph& lg, bool isSpec, int id) {
    const LNode& ln = lg.nodes[static_cast<size_t>(id)];
    sym::Context none;
    eg::EGraph g(ops::inferData, &none);
    std::vector<Typed> local;  // per definition node: its result's dims
    std::vector<eg::Id> ids;   // per definition node: its class
    for (size_t k = 0; k < ln.def.nodes.size(); ++k) {
      const CanonTerm::Node& tn = ln.def.nodes[k];
      eg::ENode en{tn.op, eg::internAttrs(tn.attrs), {}};
      std::vector<Typed> children;
      for (const CanonTerm::Ref& r : tn.children) {
        if (r.kind == CanonTerm::Ref::Kind::Operand) {
          en.children.push_back(leaf(g, lg, isSpec, static_cast<int>(r.operand)));
          children.push_back(dimsOf(lg, isSpec, static_cast<int>(r.operand)));
        } else if (r.kind == CanonTerm::Ref::Kind::Local) {
          en.children.push_back(ids[static_cast<size_t>(r.local)]);
          children.push_back(local[static_cast<size_t>(r.local)]);
        } else {
          en.children.push_back(
              g.add(eg::ENode{ops::syms().constant, eg::internAttrs({eg::Attr::real(r.scalar)}), {}}));
          children.emplace_back();
        }
      }
      auto added = g.tryAdd(std::move(en));
      if (!added) return;  // ill-typed here: links nothing
      ids.push_back(*added);
      Typed result = k + 1 == ln.def.nodes.size() ? ownDims(lg, isSpec, id, g.data(*added)) : fresh(g.data(*added));
      dc.defOps[{isSpec, id, k}] = record(tn.op, tn.attrs, std::move(children), result);
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

  // A term's operators as above; with `specNode` >= 0 (a relation S.x = term), its result's dims
  // position by position S.x's.
  void relation(int specNode, const eg::Term& t, bool keep) {
    if (tilesOneTensor(t)) return;
    sym::Context none;
    eg::EGraph g(ops::inferData, &none);
    std::vector<eg::Id> ids;
    std::vector<Typed> occs;
    std::vector<int> where;
    for (const eg::Term::Node& n : t.nodes) {
      if (const std::string* name = leafName(n)) {
        bool isSpec = ops::tensorOwner(n.op, n.attrs).value_or(Owner::spec()).isSpec();
        const LGraph& lg = isSpec ? spec : impl;
        auto id = lg.find(*name);
        if (!id) return;
        ids.push_back(leaf(g, lg, isSpec, *id));
        occs.push_back(dimsOf(lg, isSpec, *id));
        where.push_back(-1);
        continue;
      }
      eg::ENode en{n.op, n.attrs, {}};
      std::vector<Typed> children;
      for (uint32_t c : n.children) {
        en.children.push_back(ids[c]);
        children.push_back(occs[c]);
      }
      auto added = g.tryAdd(std::move(en));
      if (!added) return;
      Typed result = fresh(g.data(*added));
      where.push_back(record(n.op, eg::attrs(n.attrs), std::move(children), result));
      ids.push_back(*added);
      occs.push_back(std::move(result));
    }
    if (keep) dc.termOps[&t] = where;
    if (occs.empty() || specNode < 0) return;
    Occs lhs = flat(dimsOf(spec, true, specNode)), rhs = flat(occs.back());
    if (lhs.size() != rhs.size()) return;
    for (size_t k = 0; k < lhs.size(); ++k)
      if (dc.value(lhs[k]) == dc.value(rhs[k])) dc.unite(lhs[k], rhs[k]);
  }
};

// A concat of k copies of one tensor (aws_llama: a broadcast constant of 64 rows is found equal to
// 16 copies of a rank's 4-row one). It holds because the value is constant along the dim, not by
// the program's structure, so its sizes (64 = 16 x 4) are a coincidence: linking them would pin the
// batch 4 to the head dim 64 and every size with them. Such a relation links nothing here.
bool tilesOneTensor(const eg::Term& t) {
  auto same = [&](uint32_t a, uint32_t b) {
    if (a == b) return true;
    const std::string *x = leafName(t.nodes[a]), *y = leafName(t.nodes[b]);
    return x && y && *x == *y;
  };
  for (const eg::Term::Node& n : t.nodes)
    if (n.op == ops::syms().concat && n.children.size() >= 2 &&
        std::all_of(n.children.begin(), n.children.end(), [&](uint32_t c) { return same(c, n.children[0]); }))
      return true;
  return false;
}

}  // namespace

DimClasses collectDimClasses(const LGraph& spec, const LGraph& impl, const RelationFile& rel,
                             const std::vector<TensorRelations>& certificate, const InferResult* result) {
  DimClasses dc;
  Builder b{dc, spec, impl, {}};
  b.allocate(spec, true);
  b.allocate(impl, false);
  b.graph(spec, true);
  b.graph(impl, false);
  for (const RelationEntry& r : rel.relations) {
    auto lhs = spec.find(r.lhs.toString());
    if (!lhs) continue;
    try {
      b.relation(*lhs, termOf(r.rhs, spec, impl), false);
    } catch (const InputError&) {
      // a constant, not a tensor expression: links nothing
    }
  }
  for (const TensorRelations& tr : certificate)
    for (const eg::Term& t : tr.exprs) b.relation(tr.node, t, result != nullptr);
  if (result) {
    for (const TensorRelations& tr : result->outputs)
      for (const eg::Term& t : tr.exprs) b.relation(tr.node, t, true);
    if (result->failure)
      for (const TensorRelations& tr : result->failure->inputRelations)
        for (const eg::Term& t : tr.exprs) b.relation(tr.node, t, true);
    for (const ExpectationResult& e : result->expectations)
      for (const eg::Term& t : e.known) b.relation(-1, t, true);
  }
  return dc;
}

}  // namespace tangle::replay::detail
