#include "replay/rank_tie.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ops/ops.h"
#include "replay/agree.h"
#include "replay/term_eval.h"

namespace tangle::replay::detail {

namespace {

// One input relation (spec >= 0) or zero region (spec = -1) and the
// implementation inputs it reads.
struct InputTerm {
  int spec = -1;
  eg::Term term;
  std::set<int> leaves;
};

std::set<int> implLeaves(const eg::Term& t, const LGraph& impl) {
  std::set<int> out;
  for (const auto& n : t.nodes)
    if (const std::string* name = leafName(n)) {
      auto owner = ops::tensorOwner(n.op, n.attrs);
      if (!owner || owner->isSpec()) continue;
      if (auto id = impl.find(*name)) out.insert(impl.resolve(*id));
    }
  return out;
}

bool sameTensor(const interp::Tensor& a, const interp::Tensor& b, double tol) {
  if (a.shape != b.shape) return false;
  for (size_t e = 0; e < a.data.size(); ++e)
    if (!agrees(a.data[e], b.data[e], tol)) return false;
  return true;
}

// candidate - spec, element-wise; nullopt when it cannot be evaluated here.
std::optional<interp::Tensor> differenceOf(Trial& t, const Candidate& c, const interp::Tensor& s) {
  auto v = evalTerm(c.term, t.leaves());
  if (!v || !v->tensor() || v->tensor()->shape != s.shape) return std::nullopt;
  interp::Tensor d = *v->tensor();
  for (size_t e = 0; e < d.data.size(); ++e) d.data[e] -= s.data[e];
  return d;
}

}  // namespace

std::optional<InputValues> moveRankInputs(const LGraph& spec, const LGraph& impl, const RelationFile& rel,
                                          const InputValues& base, int rank, uint64_t seed) {
  std::vector<InputTerm> terms;
  try {
    for (const RelationEntry& r : rel.relations) {
      auto id = spec.find(r.lhs.toString());
      if (!id) return std::nullopt;
      eg::Term t = termOf(r.rhs, spec, impl);
      std::set<int> leaves = implLeaves(t, impl);
      terms.push_back({spec.resolve(*id), std::move(t), std::move(leaves)});
    }
    for (const ZeroRegion& z : rel.zeros) {
      eg::Term t = termOf(z.region, spec, impl);
      std::set<int> leaves = implLeaves(t, impl);
      terms.push_back({-1, std::move(t), std::move(leaves)});
    }
  } catch (const InputError&) {
    return std::nullopt;
  }
  std::set<int> constants;
  for (const ConstantDecl& c : rel.constants)
    if (c.tensor.side == TensorName::Side::Impl)
      if (auto id = impl.find(c.tensor.toString())) constants.insert(impl.resolve(*id));

  // Candidates: the rank's floating inputs some relation reads.
  std::mt19937_64 rng(seed * 1000003 + static_cast<uint64_t>(rank));
  std::uniform_real_distribution<double> d(-1, 1);
  std::map<int, interp::Value> moved;
  for (const InputTerm& it : terms)
    for (int id : it.leaves) {
      const TensorType* tt = impl.node(id).data.tensor();
      auto b = base.impl.find(id);
      if (moved.count(id) || constants.count(id) || impl.node(id).graph != rank || !tt || !isFloating(tt->dtype) ||
          b == base.impl.end() || !b->second.tensor())
        continue;
      interp::Tensor t = *b->second.tensor();
      for (double& x : t.data) x += d(rng);
      moved.emplace(id, interp::Value::of(std::move(t)));
    }

  LeafValues leaves = [&](const std::string& name, Owner owner) -> const interp::Value* {
    if (owner.isSpec()) return nullptr;
    auto id = impl.find(name);
    if (!id) return nullptr;
    int r = impl.resolve(*id);
    if (auto m = moved.find(r); m != moved.end()) return &m->second;
    auto b = base.impl.find(r);
    return b == base.impl.end() ? nullptr : &b->second;
  };
  auto touches = [&](const InputTerm& it) {
    return std::any_of(it.leaves.begin(), it.leaves.end(), [&](int id) { return moved.count(id) > 0; });
  };
  // Drop the inputs of every relation the move breaks (copies of a replicated
  // input no longer equal, a padding region no longer zero) until all hold.
  std::map<int, interp::Tensor> specValues;
  for (bool changed = true; changed && !moved.empty();) {
    changed = false;
    specValues.clear();
    std::set<int> broken;  // spec tensors whose relations disagree
    std::vector<const InputTerm*> breaking;
    std::set<int> touched;  // every relation of a spec input one moved input reaches is checked
    for (const InputTerm& it : terms)
      if (it.spec >= 0 && touches(it)) touched.insert(it.spec);
    for (const InputTerm& it : terms) {
      if (it.spec >= 0 ? !touched.count(it.spec) : !touches(it)) continue;
      auto v = evalTerm(it.term, leaves);
      const interp::Tensor* t = v ? v->tensor() : nullptr;
      bool ok = t != nullptr;
      if (ok && it.spec < 0) {
        ok = std::all_of(t->data.begin(), t->data.end(), [](double x) { return x == 0; });
      } else if (ok) {
        auto [s, fresh] = specValues.try_emplace(it.spec, *t);
        ok = fresh || sameTensor(s->second, *t, 1e-9 * (1 + scaleOf(s->second)));
      }
      if (!ok) (it.spec < 0 ? breaking.push_back(&it) : void(broken.insert(it.spec)));
    }
    for (const InputTerm& it : terms)
      if (it.spec >= 0 && broken.count(it.spec)) breaking.push_back(&it);
    for (const InputTerm* it : breaking)
      for (int id : it->leaves) changed = moved.erase(id) > 0 || changed;
  }
  if (moved.empty()) return std::nullopt;

  InputValues out = base;
  for (auto& [id, v] : moved) out.impl[id] = std::move(v);
  for (auto& [id, t] : specValues) out.spec[id] = interp::Value::of(std::move(t));
  return out;
}

std::optional<TieBreak> breakRankTie(const LGraph& spec, const LGraph& impl, const RelationFile& rel, int specTensor,
                                     const std::vector<Candidate>& candidates, Trial& base,
                                     const std::vector<int>& tied) {
  if (tied.size() < 2) return std::nullopt;
  const interp::Value* sv = base.spec().value(specTensor);
  if (!sv || !sv->tensor()) return std::nullopt;
  const interp::Tensor s0 = *sv->tensor();

  // The candidates that differ from the spec tensor, and by how much.
  struct Watched {
    const Candidate* c;
    interp::Tensor diff;
    double tol;
    std::vector<int> movers;  // tied ranks whose moved inputs move the difference
    bool usable = true;
  };
  std::vector<Watched> watched;
  for (const Candidate& c : candidates) {
    auto dd = differenceOf(base, c, s0);
    if (!dd) continue;
    double tol = 1e-9 * (1 + scaleOf(s0) + scaleOf(*dd));
    if (std::all_of(dd->data.begin(), dd->data.end(), [&](double x) { return std::isnan(x) || std::abs(x) <= tol; }))
      continue;  // it agrees: nothing to watch
    watched.push_back({&c, std::move(*dd), tol, {}, true});
  }
  if (watched.empty()) return std::nullopt;

  std::map<int, std::vector<std::string>> movedNames;
  for (int rank : tied) {
    auto inputs = moveRankInputs(spec, impl, rel, base.inputs(), rank, base.seed());
    if (!inputs) return std::nullopt;  // a rank that cannot be probed cannot be cleared either
    std::vector<int> ids;  // in graph order, for a stable message
    for (auto& [id, v] : inputs->impl)
      if (impl.node(id).graph == rank && base.inputs().impl.count(id) && v.tensor() &&
          !sameTensor(*base.inputs().impl.at(id).tensor(), *v.tensor(), 0))
        ids.push_back(id);
    std::sort(ids.begin(), ids.end());
    for (int id : ids) movedNames[rank].push_back(impl.node(id).name);
    Trial t(spec, impl, std::move(*inputs), base.seed());
    const interp::Value* v = t.spec().value(specTensor);
    if (!v || !v->tensor()) return std::nullopt;
    for (Watched& w : watched) {
      if (!w.usable) continue;
      auto dd = differenceOf(t, *w.c, *v->tensor());
      if (!dd) {
        w.usable = false;
        continue;
      }
      if (!sameTensor(w.diff, *dd, w.tol)) w.movers.push_back(rank);
    }
  }

  // Each difference that some tied ranks move and others do not is a vote;
  // the ranks every vote names.
  std::set<int> named(tied.begin(), tied.end());
  const Watched* witness = nullptr;
  for (const Watched& w : watched) {
    if (!w.usable || w.movers.empty() || w.movers.size() == tied.size()) continue;
    std::set<int> both;
    for (int r : w.movers)
      if (named.count(r)) both.insert(r);
    named = std::move(both);
    if (!witness) witness = &w;
  }
  if (!witness || named.size() != 1) return std::nullopt;
  int rank = *named.begin();
  std::vector<int> still;  // the witness's tied ranks that leave it alone
  for (int r : tied)
    if (std::find(witness->movers.begin(), witness->movers.end(), r) == witness->movers.end()) still.push_back(r);
  auto& names = movedNames[rank];
  std::string shown = fmt::format("{}", fmt::join(names.begin(), names.begin() + std::min<size_t>(names.size(), 3), ", "));
  if (names.size() > 3) shown += fmt::format(" and {} more", names.size() - 3);
  return TieBreak{rank, fmt::format("moving rank {}'s inputs ({}) changes how {} differs from {}; moving rank {}'s "
                                    "does not",
                                    rank, shown, witness->c->text, spec.node(specTensor).name,
                                    fmt::join(still, ", "))};
}

}  // namespace tangle::replay::detail
