#include "replay/liveness.h"

#include <algorithm>

namespace tangle::replay {

namespace {

int64_t satAdd(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

int64_t elementsOf(const LNode& n) {
  int64_t all = 0;
  for (const TensorType& t : n.data.types) {
    int64_t k = 1;
    for (Dim d : t.shape) {
      if (isSymbolic(d) || d < 0) {
        k = 0;
        break;
      }
      if (__builtin_mul_overflow(k, d, &k)) k = INT64_MAX;
    }
    all = satAdd(all, k);
  }
  return all;
}

// Distinct resolved operands of a node (a tensor read twice is read by one node).
std::vector<int> operandsOf(const LGraph& lg, const LNode& n) {
  std::vector<int> ops;
  for (int o : n.operands) ops.push_back(lg.resolve(o));
  std::sort(ops.begin(), ops.end());
  ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
  return ops;
}

}  // namespace

std::vector<int> readerCounts(const LGraph& lg) {
  std::vector<int> readers(lg.nodes.size(), 0);
  for (const LNode& n : lg.nodes) {
    if (n.aliasOf >= 0) continue;
    for (int o : operandsOf(lg, n)) ++readers[static_cast<size_t>(o)];
  }
  return readers;
}

EvalCost evalCost(const LGraph& lg) {
  const size_t count = lg.nodes.size();
  std::vector<int> readers = readerCounts(lg), waiting(count, 0);
  std::vector<std::vector<int>> consumers(count);
  for (size_t i = 0; i < count; ++i) {
    if (lg.nodes[i].aliasOf >= 0) continue;
    for (int o : operandsOf(lg, lg.nodes[i])) consumers[static_cast<size_t>(o)].push_back(static_cast<int>(i));
    waiting[i] = static_cast<int>(operandsOf(lg, lg.nodes[i]).size());
  }
  // Kahn's order: cross-rank references make the node order insufficient.
  std::vector<int> ready;
  for (size_t i = 0; i < count; ++i)
    if (lg.nodes[i].aliasOf < 0 && waiting[i] == 0) ready.push_back(static_cast<int>(i));
  EvalCost c;
  int64_t live = 0;
  while (!ready.empty()) {
    int n = ready.back();
    ready.pop_back();
    const LNode& ln = lg.node(n);
    int64_t size = elementsOf(ln);
    live = satAdd(live, size);
    c.computed = satAdd(c.computed, size);
    c.peakLive = std::max(c.peakLive, live);
    for (int o : operandsOf(lg, ln))
      if (--readers[static_cast<size_t>(o)] == 0 && !lg.node(o).isInput) live -= elementsOf(lg.node(o));
    for (int u : consumers[static_cast<size_t>(n)])
      if (--waiting[static_cast<size_t>(u)] == 0) ready.push_back(u);
  }
  return c;
}

}  // namespace tangle::replay
