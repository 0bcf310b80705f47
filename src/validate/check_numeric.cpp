// The numeric check: random leaf values through the reference interpreter.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>

#include "interp/interp.h"
#include "ops/ops.h"
#include "validate/check.h"
#include "validate/eval_graph.h"

namespace tangle::validate {

namespace {

using interp::Tensor;
using interp::Value;

const std::string* leafName(const eg::ENode& n) {
  return n.children.empty() ? ops::tensorName(n) : nullptr;
}

// Tolerance scaled to the magnitude of the compared tensors.
double scaleOf(const Tensor& a, const Tensor& b) {
  double m = 0;
  for (double v : a.data)
    if (std::isfinite(v)) m = std::max(m, std::abs(v));
  for (double v : b.data)
    if (std::isfinite(v)) m = std::max(m, std::abs(v));
  return m;
}
bool sameElement(double a, double b, double tol) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a == b;
  return std::abs(a - b) <= tol;
}

// Empty when equal, else where they differ.
std::string difference(const Value& a, const Value& b) {
  if (a.tuple != b.tuple || a.items.size() != b.items.size()) return "one is a tuple, the other not (or tuple sizes differ)";
  for (size_t i = 0; i < a.items.size(); ++i) {
    const Tensor &x = a.items[i], &y = b.items[i];
    std::string item = a.tuple ? fmt::format("item {}: ", i) : "";
    if (x.shape != y.shape)
      return item + "shapes differ: " + interp::shapeString(x.shape) + " vs " + interp::shapeString(y.shape);
    double tol = 1e-9 * (1 + scaleOf(x, y));
    for (size_t k = 0; k < x.data.size(); ++k)
      if (!sameElement(x.data[k], y.data[k], tol))
        return item + fmt::format("element {} (flat) differs: {:.12g} vs {:.12g}", k, x.data[k], y.data[k]);
  }
  return {};
}

// What the values of a class must be: valid indices below `bound`, or booleans.
struct Role {
  int64_t bound = -1;
  bool boolean = false;
};

// Roles of classes, from the index / condition operands down through rearrangements.
std::map<eg::Id, Role> rolesOf(const eg::EGraph& g) {
  static const eg::Symbol kIndexRows = ops::syms().indexRows, kGatherRows = ops::syms().gatherRows,
                          kWhere = ops::syms().where;
  std::map<eg::Id, Role> roles;
  std::vector<eg::Id> work;
  auto give = [&](eg::Id c, Role r) {
    c = g.find(c);
    Role& have = roles[c];
    Role merged = have;
    if (r.bound >= 0) merged.bound = have.bound < 0 ? r.bound : std::min(have.bound, r.bound);
    merged.boolean = have.boolean || r.boolean;
    if (merged.bound != have.bound || merged.boolean != have.boolean) {
      have = merged;
      work.push_back(c);
    }
  };
  for (eg::Id c : g.classIds())
    for (const eg::ENode& n : g.eclass(c).nodes) {
      if ((n.op == kIndexRows || n.op == kGatherRows) && n.children.size() == 2) {
        const TensorType* t = g.data(n.children[0]).tensor();
        size_t dim = n.op == kIndexRows ? 0 : 1;
        if (t && t->shape.size() > dim) give(n.children[1], Role{t->shape[dim], false});
      }
      if (n.op == kWhere && n.children.size() == 3) give(n.children[0], Role{-1, true});
    }
  while (!work.empty()) {
    eg::Id c = work.back();
    work.pop_back();
    Role r = roles[c];
    for (const eg::ENode& n : g.eclass(c).nodes)
      if (ops::isGatherOp(n.op))
        for (eg::Id k : n.children) give(k, r);
  }
  return roles;
}

}  // namespace

CheckResult checkNumeric(const eg::EGraph& g, std::mt19937_64& rng, bool positive, const IntLeaves& ints,
                         const std::vector<eg::ENode>& original) {
  std::map<std::string, Tensor> leaves;
  std::uniform_real_distribution<double> dist(positive ? 0.25 : -2.0, 2.0);
  auto roles = rolesOf(g);
  auto draw = [&](const std::string& name, eg::Id c) -> double {
    if (auto it = ints.find(name); it != ints.end())
      return static_cast<double>(std::uniform_int_distribution<int64_t>(it->second.first, it->second.second - 1)(rng));
    if (auto it = roles.find(c); it != roles.end()) {
      if (it->second.bound > 0)
        return static_cast<double>(std::uniform_int_distribution<int64_t>(0, it->second.bound - 1)(rng));
      if (it->second.boolean) return std::uniform_int_distribution<int>(0, 1)(rng);
    }
    return dist(rng);
  };
  auto eval = [&](const eg::ENode& n, const std::vector<const Value*>& kids) -> std::optional<Value> {
    if (const std::string* name = leafName(n)) {
      auto it = leaves.find(*name);
      if (it == leaves.end()) {
        eg::Id c = g.lookup(n).value_or(0);
        const TensorType* t = g.data(c).tensor();
        if (!t) return std::nullopt;
        Tensor v = Tensor::filled(t->shape, 0);
        for (double& x : v.data) x = draw(*name, c);
        it = leaves.emplace(*name, std::move(v)).first;
      }
      return Value::of(it->second);
    }
    std::vector<Value> in;
    in.reserve(kids.size());
    for (const Value* k : kids) in.push_back(*k);
    return ops::evaluate(n, in);
  };
  auto cv = evaluateClasses<Value>(g, eval);

  // The instance's nodes, canonicalized like the e-graph's.
  std::vector<eg::ENode> orig = original;
  for (eg::ENode& n : orig)
    for (eg::Id& k : n.children) k = g.find(k);
  auto isOriginal = [&](const eg::ENode& n) { return std::find(orig.begin(), orig.end(), n) != orig.end(); };

  CheckResult r;
  auto leafText = [&]() {
    std::string s;
    for (const auto& [name, t] : leaves) s += "\n    " + name + " = " + interp::toString(t, 12);
    return s;
  };
  std::string refused;  // the first node the rule added that the interpreter refuses
  for (eg::Id c : g.classIds()) {
    const Value* v = cv.of(g, c);
    for (const eg::ENode& n : g.eclass(c).nodes) {
      if (v && &n == cv.def[c]) continue;
      std::vector<const Value*> kids;
      for (eg::Id k : n.children) kids.push_back(cv.of(g, k));
      bool ready = std::all_of(kids.begin(), kids.end(), [](const Value* k) { return k != nullptr; });
      auto w = ready ? eval(n, kids) : std::nullopt;
      if (!w) {
        if (isOriginal(n)) r.outOfDomain = true;
        else if (refused.empty() && ready) refused = nodeTerm(g, cv, n);
        continue;
      }
      if (!v) continue;
      std::string diff = difference(*v, *w);
      if (diff.empty()) continue;
      r.ok = false;
      r.counterexample = fmt::format("  {}\n  = {}\n  but {}\n  leaves:{}", nodeTerm(g, cv, *cv.def[c]), nodeTerm(g, cv, n),
                                     diff, leafText());
      return r;
    }
  }
  if (r.outOfDomain) return r;
  if (!refused.empty()) {
    r.ok = false;
    r.counterexample = fmt::format("  the interpreter refused {} (added by the rule) where the instance is "
                                   "defined\n  leaves:{}",
                                   refused, leafText());
    return r;
  }
  for (eg::Id c : g.classIds())
    if (!cv.of(g, c)) {
      r.ok = false;
      r.counterexample = fmt::format("  cannot evaluate {}\n  leaves:{}", nodeTerm(g, cv, g.eclass(c).nodes.front()),
                                     leafText());
      return r;
    }
  return r;
}

}  // namespace tangle::validate
