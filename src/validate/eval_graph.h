// Evaluation of every e-class of a small e-graph in some value domain
// (float tensors, or Z3 expressions), and the search for a class whose
// e-nodes disagree. A class takes the value of the first of its nodes that
// can be evaluated (a fixpoint over the classes, so the cycles that merges
// create, e.g. x = slice(x), are fine); then every node of every class is
// evaluated again and compared with its class's value.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "egraph/egraph.h"
#include "ops/ops.h"

namespace tangle::validate {

template <class V>
struct ClassValues {
  std::vector<std::optional<V>> value;   // by class id (canonical ids only are set)
  std::vector<const eg::ENode*> def;      // the node that gave the value
  const V* of(const eg::EGraph& g, eg::Id c) const {
    eg::Id r = g.find(c);
    return value[r] ? &*value[r] : nullptr;
  }
};

// eval(node, children values) -> optional<V>; leaves have no children.
template <class V, class Eval>
ClassValues<V> evaluateClasses(const eg::EGraph& g, Eval&& eval) {
  ClassValues<V> cv;
  cv.value.resize(g.numIds());
  cv.def.resize(g.numIds(), nullptr);
  std::vector<eg::Id> pending = g.classIds();
  for (bool progress = true; progress && !pending.empty();) {
    progress = false;
    std::vector<eg::Id> still;
    for (eg::Id c : pending) {
      bool done = false;
      for (const eg::ENode& n : g.eclass(c).nodes) {
        std::vector<const V*> kids;
        for (eg::Id k : n.children) {
          const V* v = cv.of(g, k);
          if (!v) break;
          kids.push_back(v);
        }
        if (kids.size() != n.children.size()) continue;
        if (auto v = eval(n, kids)) {
          cv.value[c] = std::move(*v);
          cv.def[c] = &n;
          done = progress = true;
          break;
        }
      }
      if (!done) still.push_back(c);
    }
    pending = std::move(still);
  }
  return cv;
}

// A readable term for class c: its defining node, recursively (depth-limited).
template <class V>
std::string termOf(const eg::EGraph& g, const ClassValues<V>& cv, eg::Id c, int depth = 6);

// The term of one node with its children as terms.
template <class V>
std::string nodeTerm(const eg::EGraph& g, const ClassValues<V>& cv, const eg::ENode& n, int depth = 6) {
  const std::string& op = eg::symbolName(n.op);
  std::string out;
  if (const std::string* name = n.children.empty() ? ops::tensorName(n) : nullptr) return *name;
  out = "(" + op;
  if (n.attrs != eg::kNoAttrs) out += "[" + eg::toString(eg::attrs(n.attrs)) + "]";
  for (eg::Id k : n.children) out += " " + termOf(g, cv, k, depth - 1);
  return out + ")";
}

template <class V>
std::string termOf(const eg::EGraph& g, const ClassValues<V>& cv, eg::Id c, int depth) {
  eg::Id r = g.find(c);
  if (depth <= 0 || !cv.def[r]) return "e" + std::to_string(r);
  return nodeTerm(g, cv, *cv.def[r], depth);
}

}  // namespace tangle::validate
