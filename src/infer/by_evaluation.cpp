// Closed constant tensors related by their values (closed.h), before the walk.
//
// Only the frontier of each closed spec region is related: a closed tensor
// that an operator computing on inputs reads (HF's causal mask, read by the
// attention scores), or a target. What lies behind it is then never searched:
// proving HF's packed-sequence arithmetic with lemmas (diff of an arange,
// cumsum of zeros, ...) exhausted the e-node limit. The relation holds on
// every run because both sides compute one value from nothing; a frontier
// tensor with no equal implementation value, or refused by the exact
// evaluation, is left to the walk as before.
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <tuple>

#include "infer/closed.h"
#include "infer/infer_state.h"
#include "ops/ops.h"

namespace tangle {

namespace {

// S.x = D_r.y, or reshape(D_r.y, x's shape) when only the shapes differ.
eg::Term relationTerm(const LNode& y, const interp::Shape& yShape, const interp::Shape& xShape) {
  eg::Term t;
  t.nodes.push_back({ops::syms().tensor, y.leafAttrs, {}});
  if (yShape != xShape)
    t.nodes.push_back({ops::syms().reshape, eg::internAttrs({eg::Attr::ints(xShape)}), {0}});
  return t;
}

size_t hashOf(const interp::Tensor& t) {
  size_t h = t.data.size();
  for (double v : t.data) h = h * 1000003u ^ std::hash<double>{}(v);
  return h;
}

bool tracing() { return std::getenv("TANGLE_TRACE_OPS") != nullptr; }

int64_t numelOf(const TensorType& t) {
  int64_t n = 1;
  for (Dim d : t.shape) n *= isSymbolic(d) ? -1 : d;
  return n;
}

}  // namespace

void relateClosedByEvaluation(InferState& st, const std::vector<int>& targets, InferResult& res) {
  const LGraph& spec = st.spec;
  closed::ClosedTensors specClosed(spec, st.specConsts);
  std::vector<char> needed = neededTensors(st, targets);
  std::vector<int> frontier;
  for (size_t i = 0; i < spec.nodes.size(); ++i) {
    const LNode& n = spec.nodes[i];
    int id = static_cast<int>(i);
    if (!needed[i] || n.aliasOf >= 0 || n.isInput || !st.inputRels[i].empty() || !specClosed.closed(id)) continue;
    bool readByData = st.isTarget[i] != 0;
    for (int u : spec.users[i]) readByData = readByData || (needed[u] && !specClosed.closed(u));
    if (readByData) frontier.push_back(id);
  }
  if (frontier.empty()) return;
  // Implementation closed tensors, indexed by (dtype, element count): only
  // those that could hold a frontier value are evaluated.
  closed::ClosedTensors implClosed(st.impl, st.implConsts);
  std::map<std::pair<DType, int64_t>, std::vector<int>> implBySize;
  for (size_t d = 0; d < st.impl.nodes.size(); ++d) {
    const LNode& n = st.impl.nodes[d];
    const TensorType* t = n.data.tensor();
    if (n.aliasOf >= 0 || n.isInput || !t || !implClosed.closed(static_cast<int>(d))) continue;
    implBySize[{t->dtype, numelOf(*t)}].push_back(static_cast<int>(d));
  }
  std::unordered_map<int, size_t> implHash;
  for (int s : frontier) {
    const interp::Tensor* x = specClosed.value(s);
    if (!x) {
      res.notEvaluated.push_back(specClosed.refusal(s));
      continue;
    }
    auto it = implBySize.find({specClosed.dtype(s), x->numel()});
    size_t h = hashOf(*x);
    std::vector<eg::Term> found;
    for (int d : it == implBySize.end() ? std::vector<int>{} : it->second) {
      const interp::Tensor* y = implClosed.value(d);
      if (!y) {
        if (tracing()) std::fprintf(stderr, "closed: %s not evaluated: %s\n", st.impl.nodes[d].name.c_str(), implClosed.refusal(d).c_str());
        continue;
      }
      auto [hit, fresh] = implHash.emplace(d, 0);
      if (fresh) hit->second = hashOf(*y);
      if (hit->second != h || y->data != x->data) continue;
      found.push_back(relationTerm(st.impl.nodes[d], y->shape, x->shape));
      res.evaluated.push_back({spec.nodes[s].name, found.back(), toString(*spec.nodes[s].data.tensor()), x->numel()});
    }
    if (found.empty()) {
      res.notEvaluated.push_back(spec.nodes[s].name + ": no implementation tensor computed from constants holds its " +
                                 std::to_string(x->numel()) + " values");
      continue;
    }
    st.rels[s] = std::move(found);
    st.byEvaluation[s] = 1;
  }
  if (tracing()) {
    for (const auto& e : res.evaluated) std::fprintf(stderr, "closed: %s = %s by evaluation\n", e.spec.c_str(), formatTerm(e.expr).c_str());
    for (const auto& w : res.notEvaluated) std::fprintf(stderr, "closed: not related by evaluation: %s\n", w.c_str());
  }
}

}  // namespace tangle
