#include "replay/inputs.h"

#include <algorithm>
#include <cmath>

#include "interp/interp.h"
#include "ops/ops.h"
#include "replay/term_eval.h"

namespace tangle::replay {

std::optional<interp::Shape> concreteShape(const LNode& n) {
  const TensorType* t = n.data.tensor();
  if (!t) return std::nullopt;
  for (Dim d : t->shape)
    if (isSymbolic(d)) return std::nullopt;
  return interp::Shape(t->shape.begin(), t->shape.end());
}

namespace {

bool isIntegral(DType t) {
  return t == DType::I64 || t == DType::I32 || t == DType::I16 || t == DType::I8 || t == DType::U8;
}

// The smallest dim an integer tensor indexes through an index_rows (rows of
// its first operand), gather_rows (last dim of its first operand) or rotary
// (rows of its cos/sin cache, for the positions) user.
std::optional<int64_t> indexBound(const LGraph& lg, int node) {
  std::optional<int64_t> bound;
  static const eg::Symbol indexRows = ops::syms().indexRows, gatherRows = ops::syms().gatherRows,
                          rotary = ops::syms().rotary;
  for (int u : lg.users[static_cast<size_t>(node)]) {
    for (const auto& tn : lg.node(u).def.nodes) {
      bool rows = (tn.op == indexRows || tn.op == gatherRows) && tn.children.size() == 2;
      bool positions = tn.op == rotary && tn.children.size() == 3;
      if (!rows && !positions) continue;
      const auto& idx = positions ? tn.children[0] : tn.children[1];
      const auto& table = positions ? tn.children[2] : tn.children[0];
      if (idx.kind != CanonTerm::Ref::Kind::Operand || lg.resolve(idx.operand) != node) continue;
      if (table.kind != CanonTerm::Ref::Kind::Operand) continue;
      auto shape = concreteShape(lg.node(lg.resolve(table.operand)));
      if (!shape || shape->empty()) continue;
      int64_t dim = tn.op == gatherRows ? shape->back() : shape->front();
      if (dim > 0) bound = bound ? std::min(*bound, dim) : dim;
    }
  }
  return bound;
}

// An integer input that reaches its indexing use only through other integer
// tensors (labels: transposed, copied, masked with index_put, shifted by the
// rank's vocabulary start) is bounded by that use, so its values cover the
// whole indexed domain (every rank's shard of a vocabulary) and not just the
// first few rows. Walks forward over integer-valued users, a few steps deep.
std::optional<int64_t> chainedIndexBound(const LGraph& lg, int node) {
  std::optional<int64_t> bound;
  std::vector<int> frontier{node};
  std::vector<char> seen(lg.nodes.size(), 0);
  seen[static_cast<size_t>(node)] = 1;
  for (int depth = 0; depth < 12 && !frontier.empty(); ++depth) {
    std::vector<int> next;
    for (int n : frontier) {
      if (auto b = indexBound(lg, n)) bound = bound ? std::min(*bound, *b) : *b;
      for (int u : lg.users[static_cast<size_t>(n)]) {
        u = lg.resolve(u);
        const TensorType* t = lg.node(u).data.tensor();
        if (seen[static_cast<size_t>(u)] || !t || !isIntegral(t->dtype)) continue;
        seen[static_cast<size_t>(u)] = 1;
        next.push_back(u);
      }
    }
    frontier = std::move(next);
  }
  return bound;
}

interp::Tensor randomTensor(const interp::Shape& shape, DType dtype, std::optional<int64_t> bound,
                            std::mt19937_64& rng) {
  interp::Tensor t = interp::Tensor::filled(shape, 0);
  if (dtype == DType::Bool) {
    std::uniform_int_distribution<int> d(0, 1);
    for (double& x : t.data) x = d(rng);
  } else if (isIntegral(dtype)) {
    std::uniform_int_distribution<int64_t> d(0, bound.value_or(4) - 1);
    for (double& x : t.data) x = static_cast<double>(d(rng));
  } else {
    std::uniform_real_distribution<double> d(-1, 1);
    for (double& x : t.data) x = d(rng);
  }
  return t;
}

// Inverts one relation term, node by node from the root.
class Inverter {
 public:
  Inverter(const eg::Term& t, const LGraph& impl, std::unordered_map<int, PartialTensor>& leaves, std::mt19937_64& rng)
      : t_(t), impl_(impl), leaves_(leaves), rng_(rng), shapes_(t.size()), gathers_(t.size()), leafIds_(t.size(), -1) {}

  std::optional<std::string> run(const interp::Tensor& s) {
    if (auto e = computeShapes()) return e;
    if (shapes_[t_.root()] != s.shape)
      return "shape " + interp::shapeString(*shapes_[t_.root()]) + " of the relation differs from the spec value's " +
             interp::shapeString(s.shape);
    PartialTensor all{s, std::vector<char>(s.data.size(), 1)};
    return assign(t_.root(), all);
  }

 private:
  const eg::Term& t_;
  const LGraph& impl_;
  std::unordered_map<int, PartialTensor>& leaves_;
  std::mt19937_64& rng_;
  std::vector<std::optional<interp::Shape>> shapes_;
  std::vector<std::optional<interp::Gather>> gathers_;
  std::vector<int> leafIds_;

  std::optional<std::string> computeShapes() {
    const ops::Syms& s = ops::syms();
    for (uint32_t i = 0; i < t_.size(); ++i) {
      const auto& n = t_.nodes[i];
      if (const std::string* name = leafName(n)) {
        auto owner = ops::tensorOwner(n.op, n.attrs);
        auto id = owner && !owner->isSpec() ? impl_.find(*name) : std::nullopt;
        if (!id) return "'" + *name + "' is not an implementation tensor";
        leafIds_[i] = impl_.resolve(*id);
        shapes_[i] = concreteShape(impl_.node(leafIds_[i]));
        if (!shapes_[i]) return "'" + *name + "' has no concrete shape";
        continue;
      }
      std::vector<interp::Shape> kids;
      for (uint32_t c : n.children) kids.push_back(*shapes_[c]);
      eg::ENode en{n.op, n.attrs, std::vector<eg::Id>(n.children.size(), 0)};
      if (n.op == s.sum && !kids.empty() && std::all_of(kids.begin(), kids.end(), [&](auto& k) { return k == kids[0]; })) {
        shapes_[i] = kids[0];
      } else if (ops::isGatherOp(n.op) && (gathers_[i] = ops::gatherOf(en, kids))) {
        shapes_[i] = gathers_[i]->shape;
      } else {
        return "cannot run " + eg::symbolName(n.op) + " backwards";
      }
    }
    return std::nullopt;
  }

  // What is known of node i so far (values and which elements are set).
  PartialTensor current(uint32_t i) {
    const auto& n = t_.nodes[i];
    const interp::Shape& shape = *shapes_[i];
    PartialTensor p{interp::Tensor::filled(shape, 0), std::vector<char>(static_cast<size_t>(interp::numelOf(shape)), 0)};
    if (leafIds_[i] >= 0) {
      auto it = leaves_.find(leafIds_[i]);
      if (it != leaves_.end()) p = it->second;
      return p;
    }
    std::vector<PartialTensor> kids;
    for (uint32_t c : n.children) kids.push_back(current(c));
    if (gathers_[i]) {
      const interp::Gather& g = *gathers_[i];
      for (size_t e = 0; e < p.set.size(); ++e) {
        const PartialTensor& k = kids[g.child[e]];
        p.value.data[e] = k.value.data[static_cast<size_t>(g.offset[e])];
        p.set[e] = k.set[static_cast<size_t>(g.offset[e])];
      }
      return p;
    }
    for (size_t e = 0; e < p.set.size(); ++e) {  // sum
      p.set[e] = 1;
      for (auto& k : kids) {
        p.value.data[e] += k.value.data[e];
        p.set[e] = p.set[e] && k.set[e];
      }
    }
    return p;
  }

  std::optional<std::string> assign(uint32_t i, const PartialTensor& target) {
    const auto& n = t_.nodes[i];
    if (leafIds_[i] >= 0) {
      auto [it, fresh] = leaves_.try_emplace(leafIds_[i]);
      PartialTensor& p = it->second;
      if (fresh) p = {interp::Tensor::filled(*shapes_[i], 0), std::vector<char>(target.set.size(), 0)};
      // An element already set keeps its value: if it differs, the forward
      // check of the relations reports the conflict.
      for (size_t e = 0; e < target.set.size(); ++e)
        if (target.set[e] && !p.set[e]) {
          p.value.data[e] = target.value.data[e];
          p.set[e] = 1;
        }
      return std::nullopt;
    }
    std::vector<PartialTensor> kids;
    for (uint32_t c : n.children) {
      const interp::Shape& cs = *shapes_[c];
      kids.push_back({interp::Tensor::filled(cs, 0), std::vector<char>(static_cast<size_t>(interp::numelOf(cs)), 0)});
    }
    if (gathers_[i]) {
      const interp::Gather& g = *gathers_[i];
      for (size_t e = 0; e < target.set.size(); ++e) {
        if (!target.set[e]) continue;
        PartialTensor& k = kids[g.child[e]];
        k.value.data[static_cast<size_t>(g.offset[e])] = target.value.data[e];
        k.set[static_cast<size_t>(g.offset[e])] = 1;
      }
    } else {  // sum: free summands random but the last, which takes the rest
      std::vector<PartialTensor> now;
      for (uint32_t c : n.children) now.push_back(current(c));
      std::uniform_real_distribution<double> d(-1, 1);
      for (size_t e = 0; e < target.set.size(); ++e) {
        if (!target.set[e]) continue;
        double rest = target.value.data[e];
        int last = -1;
        for (size_t k = 0; k < now.size(); ++k) {
          if (now[k].set[e]) {
            rest -= now[k].value.data[e];
          } else {
            if (last >= 0) {
              double r = d(rng_);
              kids[static_cast<size_t>(last)].value.data[e] = r;
              kids[static_cast<size_t>(last)].set[e] = 1;
              rest -= r;
            }
            last = static_cast<int>(k);
          }
        }
        if (last < 0) continue;  // all summands known: the forward check decides
        kids[static_cast<size_t>(last)].value.data[e] = rest;
        kids[static_cast<size_t>(last)].set[e] = 1;
      }
    }
    for (size_t k = 0; k < kids.size(); ++k)
      if (std::find(kids[k].set.begin(), kids[k].set.end(), 1) != kids[k].set.end())
        if (auto e = assign(n.children[k], kids[k])) return e;
    return std::nullopt;
  }
};

double tolerance(const interp::Tensor& t) {
  double m = 0;
  for (double x : t.data) m = std::max(m, std::abs(x));
  return 1e-9 * (1 + m);
}

}  // namespace

std::optional<std::string> invertRelation(const eg::Term& rhs, const interp::Tensor& s, const LGraph& impl,
                                          std::unordered_map<int, PartialTensor>& leaves, std::mt19937_64& rng) {
  return Inverter(rhs, impl, leaves, rng).run(s);
}

InputValues drawInputs(const LGraph& spec, const LGraph& impl, const RelationFile& rel, uint64_t seed) {
  InputValues out;
  std::mt19937_64 rng(seed);
  auto specValue = [&](int id) -> const interp::Tensor* {
    id = spec.resolve(id);
    if (auto it = out.spec.find(id); it != out.spec.end()) return it->second.tensor();
    const LNode& n = spec.node(id);
    auto shape = concreteShape(n);
    if (!shape) return nullptr;
    auto [it, _] =
        out.spec.emplace(id, interp::Value::of(randomTensor(*shape, n.data.tensor()->dtype, chainedIndexBound(spec, id), rng)));
    return it->second.tensor();
  };
  auto constantOf = [](const LNode& n, double v) {
    auto shape = concreteShape(n);
    return interp::Value::of(interp::Tensor::filled(shape.value_or(interp::Shape{}), v));
  };
  for (auto& c : rel.constants) {
    const LGraph& lg = c.tensor.side == TensorName::Side::Spec ? spec : impl;
    auto id = lg.find(c.tensor.toString());
    if (!id) continue;  // inference already reported it
    int r = lg.resolve(*id);
    (c.tensor.side == TensorName::Side::Spec ? out.spec : out.impl)[r] = constantOf(lg.node(r), c.value);
  }
  for (size_t i = 0; i < spec.nodes.size(); ++i)
    if (spec.nodes[i].isInput && spec.nodes[i].aliasOf < 0) specValue(static_cast<int>(i));

  std::unordered_map<int, PartialTensor> leaves;
  std::vector<std::pair<const RelationEntry*, eg::Term>> terms;
  for (auto& r : rel.relations) {
    std::string where = r.loc.file + ":" + std::to_string(r.loc.line);
    auto id = spec.find(r.lhs.toString());
    const interp::Tensor* s = id ? specValue(*id) : nullptr;
    if (!s) {
      out.error = r.lhs.toString() + " has no concrete shape (" + where + ")";
      return out;
    }
    try {
      terms.emplace_back(&r, termOf(r.rhs, spec, impl));
    } catch (const InputError& e) {
      out.error = e.what();
      return out;
    }
    if (auto e = invertRelation(terms.back().second, *s, impl, leaves, rng)) {
      out.error = "cannot derive the implementation inputs of '" + r.lhs.toString() + " = " + r.rhs.toString() +
                  "' (" + where + "): " + *e;
      return out;
    }
  }
  for (auto& [id, p] : leaves) {
    if (out.impl.count(id)) continue;  // a declared constant wins
    size_t unset = static_cast<size_t>(std::count(p.set.begin(), p.set.end(), 0));
    if (unset)
      out.notes.push_back(impl.node(id).name + ": " + std::to_string(unset) + " of " + std::to_string(p.set.size()) +
                          " elements constrained by no relation, set to 0");
    out.impl[id] = interp::Value::of(std::move(p.value));
  }

  // An input declared zero as a whole (a rank holding padding only) may appear in no relation's inverse.
  for (auto& z : rel.zeros) {
    if (z.region.kind != RelExpr::Kind::Tensor) continue;
    if (auto id = impl.find(z.region.tensor.toString()); id && !out.impl.count(impl.resolve(*id)))
      out.impl[impl.resolve(*id)] = constantOf(impl.node(impl.resolve(*id)), 0);
  }

  // Every relation must hold forwards on the derived values.
  LeafValues implLeaves = [&](const std::string& name, Owner owner) -> const interp::Value* {
    if (owner.isSpec()) return nullptr;
    auto id = impl.find(name);
    if (!id) return nullptr;
    auto it = out.impl.find(impl.resolve(*id));
    return it == out.impl.end() ? nullptr : &it->second;
  };
  for (auto& [r, term] : terms) {
    const interp::Tensor& s = *out.spec.at(spec.resolve(*spec.find(r->lhs.toString()))).tensor();
    std::string why;
    auto v = evalTerm(term, implLeaves, &why);
    const interp::Tensor* d = v ? v->tensor() : nullptr;
    bool holds = d && d->shape == s.shape;
    const double tol = tolerance(s);  // once: per element it made this quadratic in the tensor's size
    for (size_t e = 0; holds && e < s.data.size(); ++e)
      holds = std::abs(s.data[e] - d->data[e]) <= tol;
    if (!holds) {
      out.error = "input relation '" + r->lhs.toString() + " = " + r->rhs.toString() + "' (" + r->loc.file + ":" +
                  std::to_string(r->loc.line) + ") cannot hold together with the others on random values" +
                  (why.empty() ? "" : ": " + why);
      return out;
    }
  }
  // Zero padding: elements no relation constrains are already 0; a `zero`
  // region that a relation fills with the spec's (random) values cannot hold.
  for (auto& z : rel.zeros) {
    std::string why;
    std::optional<interp::Value> v;
    try {
      v = evalTerm(termOf(z.region, spec, impl), implLeaves, &why);
    } catch (const InputError& e) {
      why = e.what();
    }
    const interp::Tensor* t = v ? v->tensor() : nullptr;
    bool zero = t != nullptr;
    for (size_t e = 0; zero && e < t->data.size(); ++e) zero = t->data[e] == 0;
    if (!zero) {
      out.error = "zero region '" + z.region.toString() + "' (" + z.loc.file + ":" + std::to_string(z.loc.line) +
                  ") is not zero on values that satisfy the input relations" + (why.empty() ? "" : ": " + why);
      return out;
    }
  }
  return out;
}

}  // namespace tangle::replay
