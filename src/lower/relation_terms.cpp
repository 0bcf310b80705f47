// Relation-language expressions -> e-graph terms (see lower.h: addRelExpr).
#include <string>

#include "lower/lower.h"
#include "ops/ops.h"

namespace tangle {

namespace {

const RelExpr* kwarg(const RelExpr& e, const char* key) {
  for (auto& [k, v] : e.kwargs)
    if (k == key) return &v;
  return nullptr;
}

// The integer argument `key`: keyword if given, else positional `pos`.
int64_t intArg(const RelExpr& e, const char* key, size_t pos, std::optional<int64_t> dflt = std::nullopt) {
  const RelExpr* v = kwarg(e, key);
  if (!v && pos < e.args.size()) v = &e.args[pos];
  if (!v) {
    if (dflt) return *dflt;
    throw InputError(e.loc, e.op + "(...) needs the argument '" + key + "'");
  }
  if (v->kind != RelExpr::Kind::Int) throw InputError(e.loc, e.op + "(...): '" + key + "' must be an integer");
  return v->i;
}

std::vector<int64_t> intsArg(const RelExpr& e, size_t pos, const char* what) {
  if (pos >= e.args.size() || e.args[pos].kind != RelExpr::Kind::IntList)
    throw InputError(e.loc, e.op + "(...) needs an integer list " + what);
  return e.args[pos].ints;
}

const TensorType& tensorOf(const eg::EGraph& g, eg::Id id, const RelExpr& e) {
  const eg::ClassData& d = g.data(id);
  if (!d.tensor()) throw InputError(e.loc, "'" + e.toString() + "' is not a tensor of known type");
  return *d.tensor();
}

int64_t normDim(int64_t d, int64_t rank, const RelExpr& e) {
  if (d < 0) d += rank;
  if (d < 0 || d >= rank)
    throw InputError(e.loc, "dim out of range in '" + e.toString() + "' (tensor has " + std::to_string(rank) + " dims)");
  return d;
}

class RelLowering {
 public:
  RelLowering(eg::EGraph& g, const LGraph& spec, const LGraph& impl) : g_(g), spec_(spec), impl_(impl) {}

  eg::Id lower(const RelExpr& e) {
    switch (e.kind) {
      case RelExpr::Kind::Tensor: return tensor(e);
      case RelExpr::Kind::Call: return call(e);
      default: throw InputError(e.loc, "expected a tensor expression, found '" + e.toString() + "'");
    }
  }

 private:
  eg::EGraph& g_;
  const LGraph& spec_;
  const LGraph& impl_;

  eg::Id tensor(const RelExpr& e) {
    const TensorName& t = e.tensor;
    if (t.allRanks) throw InputError(e.loc, "'" + t.toString() + "' must be expanded to explicit ranks here");
    const LGraph& lg = t.side == TensorName::Side::Spec ? spec_ : impl_;
    std::string name = t.toString();
    auto id = lg.find(name);
    if (!id) {
      std::string where = t.side == TensorName::Side::Spec ? "the spec graph" : "rank " + std::to_string(t.rank) + " of the implementation";
      throw InputError(e.loc, "tensor '" + name + "' does not exist in " + where);
    }
    const LNode& ln = lg.node(lg.resolve(*id));
    if (!ln.data.tensor() && !ln.tuple()) {
      const Node& origin = lg.origin(lg.resolve(*id));
      if (origin.symValue)
        throw InputError(e.loc, "'" + name + "' is not a tensor but the symbolic integer " +
                                    sym::toString(*origin.symValue) + " (relations relate tensors)");
    }
    return addLeaf(g_, lg, *id);
  }

  eg::Id build(const RelExpr& e, eg::Symbol op, eg::AttrList attrs, std::vector<eg::Id> kids) {
    eg::ENode n{op, eg::internAttrs(attrs), std::move(kids)};
    auto id = g_.tryAdd(n);
    if (!id) {
      std::string types;
      for (eg::Id c : n.children) {
        if (!types.empty()) types += ", ";
        const auto* t = g_.data(c).tensor();
        types += t ? toString(*t) : "?";
      }
      throw InputError(e.loc, "shape mismatch in '" + e.toString() + "' (operands: " + types + ")");
    }
    return *id;
  }

  eg::Id call(const RelExpr& e) {
    const ops::Syms& s = ops::syms();
    if (e.op == "concat" || e.op == "sum") {
      std::vector<eg::Id> kids;
      for (auto& a : e.args) kids.push_back(lower(a));
      if (kids.empty()) throw InputError(e.loc, e.op + "(...) needs at least one tensor");
      if (e.op == "sum") return build(e, s.sum, {}, kids);
      int64_t dim = intArg(e, "dim", SIZE_MAX);
      dim = normDim(dim, tensorOf(g_, kids[0], e.args[0]).rank(), e);
      return build(e, s.concat, {eg::Attr::integer(dim)}, kids);
    }
    if (e.args.empty()) throw InputError(e.loc, e.op + "(...) needs a tensor argument");
    eg::Id x = lower(e.args[0]);
    const TensorType& t = tensorOf(g_, x, e.args[0]);
    if (e.op == "slice") {
      int64_t dim = normDim(intArg(e, "dim", 1), t.rank(), e);
      int64_t size = t.shape[static_cast<size_t>(dim)];
      int64_t start = intArg(e, "start", 2, 0), end = intArg(e, "end", 3, size), step = intArg(e, "step", 4, 1);
      if (start < 0) start += size;
      if (end < 0) end += size;
      end = std::min(end, size);
      if (start < 0 || start > end || step < 1)
        throw InputError(e.loc, "bad slice bounds in '" + e.toString() + "'");
      return build(e, s.slice,
                   {eg::Attr::integer(dim), eg::Attr::integer(start), eg::Attr::integer(end), eg::Attr::integer(step)},
                   {x});
    }
    if (e.op == "transpose") {
      int64_t d0 = normDim(intArg(e, "dim0", 1), t.rank(), e), d1 = normDim(intArg(e, "dim1", 2), t.rank(), e);
      return build(e, s.transpose, {eg::Attr::integer(d0), eg::Attr::integer(d1)}, {x});
    }
    if (e.op == "permute") return build(e, s.permute, {eg::Attr::ints(intsArg(e, 1, "of dims"))}, {x});
    if (e.op == "reshape") {
      std::vector<int64_t> shape = intsArg(e, 1, "shape");
      for (int64_t d : shape)
        if (d < 0) throw InputError(e.loc, "reshape(...): the shape must list sizes (no -1), in '" + e.toString() + "'");
      return build(e, s.reshape, {eg::Attr::ints(shape)}, {x});
    }
    throw InputError(e.loc, "unknown function '" + e.op + "' in relation");
  }
};

}  // namespace

eg::Id addRelExpr(eg::EGraph& g, const RelExpr& e, const LGraph& spec, const LGraph& impl) {
  return RelLowering(g, spec, impl).lower(e);
}

}  // namespace tangle
