// The symbolic check: each leaf element is a Z3 real constant; the
// rearrangements move expressions (interp::gatherOf), sum adds them; Z3 must
// find no assignment where two nodes of a class differ somewhere.
#include <fmt/format.h>
#include <z3++.h>

#include <cmath>

#include "interp/interp.h"
#include "ops/ops.h"
#include "ops/shape.h"
#include "validate/check.h"
#include "validate/eval_graph.h"

namespace tangle::validate {

namespace {

struct Sym {
  interp::Shape shape;
  std::vector<z3::expr> data;
};

z3::context& ctx() {
  static z3::context c;
  return c;
}

}  // namespace

bool isPureRearrangement(const eg::EGraph& g) {
  const ops::Syms& s = ops::syms();
  for (eg::Id c : g.classIds())
    for (const eg::ENode& n : g.eclass(c).nodes)
      if (n.op != s.tensor && n.op != s.constant && n.op != s.sum && (!ops::isGatherOp(n.op) || n.op == s.expand))
        return false;
  return true;
}

std::optional<CheckResult> checkSymbolic(const eg::EGraph& g) {
  z3::context& z = ctx();
  const eg::Symbol kTensor = ops::syms().tensor, kSum = ops::syms().sum;
  auto eval = [&](const eg::ENode& n, const std::vector<const Sym*>& kids) -> std::optional<Sym> {
    if (n.op == kTensor) {
      const TensorType* t = g.data(g.lookup(n).value_or(0)).tensor();
      const std::string* leaf = ops::tensorName(n);
      if (!t || !leaf) return std::nullopt;
      const std::string& name = *leaf;
      Sym s{t->shape, {}};
      for (int64_t i = 0; i < interp::numelOf(t->shape); ++i)
        s.data.push_back(z.real_const(fmt::format("{}[{}]", name, i).c_str()));
      return s;
    }
    if (n.op == ops::syms().constant) {
      auto v = n.children.empty() ? ops::attrNumber(eg::attrs(n.attrs), 0) : std::nullopt;
      if (!v || !std::isfinite(*v)) return std::nullopt;
      return Sym{{}, {z.real_val(fmt::format("{:.17f}", *v).c_str())}};
    }
    if (n.op == kSum) {
      if (kids.empty()) return std::nullopt;
      Sym s = *kids[0];
      for (size_t i = 1; i < kids.size(); ++i) {
        if (kids[i]->shape != s.shape) return std::nullopt;
        for (size_t k = 0; k < s.data.size(); ++k) s.data[k] = s.data[k] + kids[i]->data[k];
      }
      return s;
    }
    std::vector<interp::Shape> shapes;
    for (const Sym* k : kids) shapes.push_back(k->shape);
    auto gather = ops::gatherOf(n, shapes);
    if (!gather) return std::nullopt;
    Sym s{gather->shape, {}};
    s.data.reserve(gather->offset.size());
    for (size_t i = 0; i < gather->offset.size(); ++i) s.data.push_back(kids[gather->child[i]]->data[gather->offset[i]]);
    return s;
  };
  auto cv = evaluateClasses<Sym>(g, eval);

  // One query: some element of some node differs from its class's value.
  z3::expr_vector diffs(z);
  std::vector<std::pair<eg::Id, const eg::ENode*>> where;  // per diff, for the counterexample
  CheckResult r;
  for (eg::Id c : g.classIds()) {
    const Sym* v = cv.of(g, c);
    if (!v) {
      r.ok = false;
      r.counterexample = "cannot evaluate class e" + std::to_string(c) + " symbolically";
      return r;
    }
  }
  for (eg::Id c : g.classIds()) {
    const Sym* v = cv.of(g, c);
    for (const eg::ENode& n : g.eclass(c).nodes) {
      if (&n == cv.def[c]) continue;
      std::vector<const Sym*> kids;
      for (eg::Id k : n.children) kids.push_back(cv.of(g, k));
      auto w = eval(n, kids);
      if (!w || w->shape != v->shape) {
        r.ok = false;
        r.counterexample = fmt::format("  {}\n  = {}\n  but {}", nodeTerm(g, cv, *cv.def[c]), nodeTerm(g, cv, n),
                                       w ? "shapes differ: " + interp::shapeString(v->shape) + " vs " +
                                               interp::shapeString(w->shape)
                                         : std::string("the node cannot be evaluated"));
        return r;
      }
      for (size_t k = 0; k < v->data.size(); ++k) {
        diffs.push_back(v->data[k] != w->data[k]);
        where.push_back({c, &n});
      }
    }
  }
  if (diffs.empty()) return r;
  z3::solver solver(z);
  solver.add(z3::mk_or(diffs));
  switch (solver.check()) {
    case z3::unsat: return r;
    case z3::unknown: return std::nullopt;
    case z3::sat: break;
  }
  z3::model m = solver.get_model();
  for (unsigned i = 0; i < diffs.size(); ++i) {
    if (!m.eval(diffs[i], true).is_true()) continue;
    auto [c, n] = where[i];
    r.ok = false;
    r.counterexample = fmt::format("  {}\n  = {}\n  but Z3 found leaf contents where they differ: {}",
                                   nodeTerm(g, cv, *cv.def[c]), nodeTerm(g, cv, *n), diffs[i].to_string());
    return r;
  }
  r.ok = false;
  r.counterexample = "Z3 found a difference (model not decoded)";
  return r;
}

}  // namespace tangle::validate
