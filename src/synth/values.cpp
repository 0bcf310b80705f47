#include "synth/values.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "interp/tensor.h"
#include "replay/inputs.h"
#include "replay/lgraph_eval.h"

namespace tangle::synth {

namespace {

bool close(const interp::Tensor& a, const interp::Tensor& b) {
  if (a.shape != b.shape) return false;
  double scale = 0;
  for (double x : a.data)
    if (std::isfinite(x)) scale = std::max(scale, std::abs(x));
  double tol = 1e-5 * (1 + scale);
  for (size_t i = 0; i < a.data.size(); ++i)
    if (!(std::abs(a.data[i] - b.data[i]) <= tol) && !(std::isnan(a.data[i]) && std::isnan(b.data[i]))) return false;
  return true;
}

// Pieces concatenated along d (same shape except d).
interp::Tensor concatAlong(const std::vector<const interp::Tensor*>& ps, size_t d) {
  interp::Tensor out;
  out.shape = ps[0]->shape;
  out.shape[d] = 0;
  for (auto* p : ps) out.shape[d] += p->shape[d];
  int64_t outer = 1, inner = 1;
  for (size_t k = 0; k < d; ++k) outer *= out.shape[k];
  for (size_t k = d + 1; k < out.shape.size(); ++k) inner *= out.shape[k];
  for (int64_t o = 0; o < outer; ++o)
    for (auto* p : ps) {
      int64_t run = p->shape[d] * inner;
      out.data.insert(out.data.end(), p->data.begin() + o * run, p->data.begin() + (o + 1) * run);
    }
  return out;
}

std::string baseName(const std::string& n) { return n.substr(n.find('.') + 1); }

// One candidate expression with its value on the current draw.
struct Cand {
  std::string expr;
  interp::Tensor value;
};

std::vector<Cand> candidatesOn(replay::LGraphEvaluator& ev, const LGraph& impl, const interp::Shape& want) {
  std::vector<Cand> out;
  size_t ranks = impl.graphs.size();
  std::map<std::string, std::vector<std::pair<int, const interp::Tensor*>>> byBase;  // base -> (rank, value)
  for (size_t i = 0; i < impl.nodes.size(); ++i) {
    int id = static_cast<int>(i);
    if (impl.resolve(id) != id || impl.node(id).tuple()) continue;
    const interp::Value* v = ev.value(id);
    const interp::Tensor* t = v ? v->tensor() : nullptr;
    if (!t) continue;
    if (t->shape == want) out.push_back({impl.node(id).name, *t});
    byBase[baseName(impl.node(id).name)].push_back({impl.node(id).owner.rank, t});
  }
  if (ranks < 2) return out;
  for (auto& [base, items] : byBase) {
    if (items.size() != ranks) continue;
    std::vector<const interp::Tensor*> ps(ranks, nullptr);
    for (auto& [r, t] : items)
      if (r >= 0 && static_cast<size_t>(r) < ranks) ps[static_cast<size_t>(r)] = t;
    bool ok = true;
    for (auto* p : ps) ok = ok && p && p->shape == ps[0]->shape;
    if (!ok) continue;
    std::string args;
    for (size_t r = 0; r < ranks; ++r) args += (r ? ", D" : "D") + std::to_string(r) + "." + base;
    for (size_t d = 0; d < want.size() && ps[0]->shape.size() == want.size(); ++d) {
      interp::Shape s = ps[0]->shape;
      s[d] *= static_cast<int64_t>(ranks);
      if (s == want) out.push_back({"concat(" + args + ", dim=" + std::to_string(d) + ")", concatAlong(ps, d)});
    }
    if (ps[0]->shape == want) {
      interp::Tensor sum = *ps[0];
      for (size_t r = 1; r < ranks; ++r)
        for (size_t k = 0; k < sum.data.size(); ++k) sum.data[k] += ps[r]->data[k];
      out.push_back({"sum(" + args + ")", sum});
    }
  }
  return out;
}

}  // namespace

ValueCandidates valueCandidates(const LGraph& spec, const LGraph& impl, const RelationFile& relation, int specNode,
                                uint64_t seed, size_t draws, size_t limit) {
  ValueCandidates res;
  std::vector<std::string> alive;
  for (size_t k = 0; k < draws; ++k) {
    auto inputs = replay::drawInputs(spec, impl, relation, seed + k);
    if (inputs.error) {
      res.note = "the inputs cannot be derived: " + *inputs.error;
      return res;
    }
    replay::LGraphEvaluator se(spec), ie(impl);
    for (auto& [id, v] : inputs.spec) se.set(id, v);
    for (auto& [id, v] : inputs.impl) ie.set(id, v);
    const interp::Value* sv = se.value(specNode);
    const interp::Tensor* st = sv ? sv->tensor() : nullptr;
    if (!st) {
      res.note = "the spec tensor cannot be computed by the reference interpreter" +
                 (se.failure() ? ": " + se.failure()->reason : std::string());
      return res;
    }
    std::vector<std::string> agree;
    for (const Cand& c : candidatesOn(ie, impl, st->shape))
      if (close(*st, c.value) && (k == 0 || std::find(alive.begin(), alive.end(), c.expr) != alive.end()))
        agree.push_back(c.expr);
    alive = std::move(agree);
  }
  // Single tensors first (they come first per draw), then concats and sums.
  for (const std::string& e : alive)
    if (res.exprs.size() < limit) res.exprs.push_back(e);
  if (res.exprs.empty()) res.note = "no implementation tensor (or per-rank concat / sum) holds its values";
  return res;
}

}  // namespace tangle::synth
