#include "synth/expr.h"

#include "ops/ops.h"
#include "replay/term_eval.h"

namespace tangle::synth {

bool Expr::operator==(const Expr& o) const {
  return leaf == o.leaf && op == o.op && attrs == o.attrs && kids == o.kids;
}

std::optional<Expr> fromTerm(const eg::Term& t, const LGraph& impl) {
  if (t.nodes.empty()) return std::nullopt;
  std::function<std::optional<Expr>(uint32_t)> build = [&](uint32_t i) -> std::optional<Expr> {
    const eg::Term::Node& n = t.nodes[i];
    Expr e;
    if (const std::string* name = replay::leafName(n)) {
      auto id = impl.find(*name);
      if (!id) return std::nullopt;  // a spec tensor or an unknown name
      e.leaf = impl.resolve(*id);
      return e;
    }
    e.op = n.op;
    e.attrs = eg::attrs(n.attrs);
    for (uint32_t c : n.children) {
      auto k = build(c);
      if (!k) return std::nullopt;
      e.kids.push_back(std::move(*k));
    }
    return e;
  };
  return build(t.root());
}

namespace {

// A CanonTerm as an Expr; `operand` gives the Expr of an operand ref.
std::optional<Expr> fromCanon(const CanonTerm& def, const std::function<std::optional<Expr>(int)>& operand) {
  if (def.nodes.empty()) return std::nullopt;
  std::vector<Expr> local;
  for (const CanonTerm::Node& tn : def.nodes) {
    Expr e;
    e.op = tn.op;
    e.attrs = tn.attrs;
    for (const CanonTerm::Ref& r : tn.children) {
      switch (r.kind) {
        case CanonTerm::Ref::Kind::Operand: {
          auto k = operand(r.operand);
          if (!k) return std::nullopt;
          e.kids.push_back(std::move(*k));
          break;
        }
        case CanonTerm::Ref::Kind::Local: e.kids.push_back(local[static_cast<size_t>(r.local)]); break;
        case CanonTerm::Ref::Kind::Scalar: {
          Expr c;
          c.op = ops::syms().constant;
          c.attrs = {eg::Attr::real(r.scalar)};
          e.kids.push_back(std::move(c));
          break;
        }
      }
    }
    local.push_back(std::move(e));
  }
  return local.back();
}

}  // namespace

std::optional<Expr> definitionOf(const LGraph& impl, int node) {
  const LNode& n = impl.node(impl.resolve(node));
  if (n.isInput || n.tuple() || n.def.nodes.empty()) return std::nullopt;
  return fromCanon(n.def, [&](int operand) -> std::optional<Expr> {
    const LNode& o = impl.node(impl.resolve(operand));
    if (o.tuple()) return std::nullopt;  // getitem of a tuple op: not a tensor leaf
    Expr e;
    e.leaf = impl.resolve(operand);
    return e;
  });
}

std::optional<Expr> specDefinition(const LGraph& spec, int node,
                                   const std::function<std::optional<Expr>(int specNode)>& operand) {
  const LNode& n = spec.node(spec.resolve(node));
  if (n.isInput || n.tuple()) return std::nullopt;
  return fromCanon(n.def, [&](int o) { return operand(spec.resolve(o)); });
}

Expr substitute(const Expr& e, int node, const Expr& by) {
  if (e.isLeaf()) return e.leaf == node ? by : e;
  Expr out = e;
  for (Expr& k : out.kids) k = substitute(k, node, by);
  return out;
}

void leavesOf(const Expr& e, std::set<int>& out) {
  if (e.isLeaf()) out.insert(e.leaf);
  for (const Expr& k : e.kids) leavesOf(k, out);
}

size_t sizeOf(const Expr& e) {
  size_t n = 1;
  for (const Expr& k : e.kids) n += sizeOf(k);
  return n;
}

std::string toText(const Expr& e, const LGraph& impl) {
  if (e.isLeaf()) return impl.node(e.leaf).name;
  std::string out = "(" + eg::symbolName(e.op);
  if (!e.attrs.empty()) out += "[" + eg::toString(e.attrs) + "]";
  for (const Expr& k : e.kids) out += " " + toText(k, impl);
  return out + ")";
}

}  // namespace tangle::synth
