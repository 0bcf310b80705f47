// Exact reuse of operator results across repeated structure (e.g. the layers
// of a transformer): a later spec operator o_k is given phi(R_j), the
// relations an earlier operator o_j's search found, renamed, instead of a
// search of its own. InferOptions::reuse (`option reuse = 0`) turns it off.
//
// Why it is sound. o_j's e-graph was built from these facts only:
//   (a) for each spec tensor s with a leaf in it: its type, and, if seeded
//       (addSpecTensor), the relations of s (the user's input relations, R[s]
//       found earlier, a declared constant) - true by induction over the walk;
//   (b) the definitions of o_j's output, of its tuple producer and of the spec
//       tensors inlined into it (deferred carrying);
//   (c) for each implementation tensor d with a leaf in it: its type, rank
//       and declared constant value, and, if d was explored, its definition
//       (operator, attributes, operands);
//   (d) the lemmas, which are valid for all tensors of the types they are
//       applied to and do not look at tensor names (they match operators,
//       attributes and types only; the symbolic-size context is the check's);
//   (e) the implEqual facts seeded into it (d = e between implementation
//       tensors, proved by earlier operators: mergeImplEqualities).
// Each r in R_j is an equality root = r derived by congruence closure and
// lemma instances from those facts, i.e. a valid implication
//   facts(a-e) => S.out_j = r,   for all values of the leaves (the variables).
// Renaming variables with a type-preserving substitution phi keeps an
// implication valid: phi(facts) => phi(S.out_j) = phi(r). Reuse is allowed only
// when phi maps every fact of (a)-(c), (e) onto a fact that holds for o_k's
// tensors: same types, ranks and constants, spec and implementation
// definitions identical with operands mapped by phi, the relations of
// each seeded spec tensor mapped exactly (the same expressions, in the same
// order) onto those of its image, and each implEqual fact onto one held now
// (reuse_verify.cpp checks all of this; the
// renaming is built heuristically in reuse_match.cpp and trusted for
// nothing). Then phi(S.out_j) = S.out_k and each phi(r) is a relation of o_k;
// likewise each equality d = e between implementation tensors that o_j's
// search proved (and recorded in implEqual) holds renamed, and is recorded:
// later operators and the expectations need them as they would after a search.
// phi is moreover injective, so the renamed relations say nothing the search
// could not: distinct tensors stay distinct.
//
// What it gives: exactly what the search would give when o_k's neighbourhood
// is a copy of o_j's; extra users of o_k's implementation tensors could let
// the search find other relations. The completeness guard (each related
// tensor's users must compute the same operators as its image's) refuses
// most such cases, and a verdict
// other than `refines` reached after any reuse is recomputed without reuse
// (infer.cpp), so a violation or an inconclusive result is always the
// search's own. A target (a graph output, R_o) reuses only a target, and its
// relations over the implementation's outputs are renamed too: each must stay
// over outputs. Searches that saw type conflicts and failed searches are
// never recorded.
#include "infer/reuse.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "infer/leaf_names.h"
#include "infer/reuse_pipeline.h"

namespace tangle {

namespace {

constexpr size_t kMaxTries = 4;  // earlier candidates tried per operator, most recent first
// With a verifier: the gate runs on the walk's thread until it gave the same
// outcome this many times in a row for a (shape, candidate); a wrong
// prediction costs a sequential rerun.
constexpr int kPredictAfter = 3;

void mix(uint64_t& h, uint64_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); }

void mixData(uint64_t& h, const eg::ClassData& d) {
  mix(h, d.tuple);
  for (const TensorType& t : d.types) {
    mix(h, static_cast<uint64_t>(t.dtype));
    mix(h, t.shape.size());
    for (Dim x : t.shape) mix(h, static_cast<uint64_t>(x));
  }
  mix(h, d.constant ? std::bit_cast<uint64_t>(*d.constant) : 1);
}

// A definition, its operands named by their position among the reads.
void mixDef(uint64_t& h, const LGraph& g, const LNode& n, const std::vector<int>& reads) {
  for (const auto& tn : n.def.nodes) {
    mix(h, tn.op);
    mix(h, eg::internAttrs(tn.attrs));
    for (const auto& r : tn.children) {
      mix(h, static_cast<uint64_t>(r.kind));
      if (r.kind == CanonTerm::Ref::Kind::Operand) {
        auto it = std::find(reads.begin(), reads.end(), g.resolve(r.operand));
        mix(h, static_cast<uint64_t>(it - reads.begin()));
      } else if (r.kind == CanonTerm::Ref::Kind::Local) {
        mix(h, static_cast<uint64_t>(r.local));
      } else {
        mix(h, std::bit_cast<uint64_t>(r.scalar));
      }
    }
  }
}

// Every implementation tensor of t is one its graph returns.
bool overImplOutputs(const InferState& st, const eg::Term& t) {
  for (const eg::Term::Node& n : t.nodes) {
    auto leaf = leaves::leafOf(st.spec, st.impl, n.op, n.attrs);
    if (leaf && !leaf->first && !st.impl.nodes[leaf->second].isOutput) return false;
  }
  return true;
}

}  // namespace

uint64_t specShapeHash(const InferState& st, const SpecOp& op) {
  uint64_t h = 0;
  std::vector<int> reads;
  for (int r : op.reads) reads.push_back(st.spec.resolve(r));
  mixDef(h, st.spec, st.spec.nodes[op.node], reads);
  mixData(h, st.spec.nodes[op.node].data);
  mix(h, st.isTarget[op.node]);  // a target reuses only a target (Footprint::outResult)
  if (op.reported != op.node) mixDef(h, st.spec, st.spec.nodes[op.reported], reads);
  for (int r : reads) {
    mixData(h, st.spec.nodes[r].data);
    mix(h, st.deferredDepth[r]);
    mix(h, st.rels[r].size());
    mix(h, st.inputRels[r].size());
    mix(h, st.specConsts.count(r));
  }
  return h;
}

bool Renaming::bindSpec(int from, int to) {
  if (const int* m = spec.find(from)) return *m == to;
  if (!specInv.emplace(to, from).second) return false;
  spec.emplace(from, to);
  return true;
}

bool Renaming::bindImpl(int from, int to) {
  if (const int* m = impl.find(from)) return *m == to;
  if (implInv.count(to)) return false;
  const int rf = implGraph->nodes[from].graph, rt = implGraph->nodes[to].graph;
  if (!rankFits(rf, rt)) return false;
  rank.emplace(rf, rt);
  rankInv.emplace(rt, rf);
  implInv.emplace(to, from);
  impl.emplace(from, to);
  return true;
}

bool Renaming::rankFits(int from, int to) const {
  if (const int* m = rank.find(from)) return *m == to;
  return !rankInv.count(to);
}

const int* Renaming::specOf(int from) const { return spec.find(from); }

const int* Renaming::implOf(int from) const { return impl.find(from); }

void OperatorReuse::record(const InferState& st, const OperatorSearch& s) {
  if (auto f = footprintOf(st, s)) add(st, std::move(*f));
}

std::optional<std::vector<std::pair<bool, int>>> tensorLeaves(const InferState& st, const eg::EGraph& g) {
  std::vector<std::pair<bool, int>> out;
  const eg::Symbol tensor = ops::syms().tensor;
  for (eg::Id c : g.classesWithOp(tensor))
    for (const eg::ENode& n : g.eclass(c).nodes) {
      if (n.op != tensor) continue;
      auto leaf = leaves::leafOf(st.spec, st.impl, n.op, n.attrs);
      if (!leaf) return std::nullopt;  // a leaf of no graph tensor: nothing to rename it to
      out.push_back(*leaf);
    }
  return out;
}

std::optional<Footprint> OperatorReuse::footprintOf(const InferState& st, const OperatorSearch& s) {
  if (!s.g.conflicts().empty()) return std::nullopt;
  Footprint f;
  f.op = s.op;
  auto tensors = tensorLeaves(st, s.g);
  if (!tensors) return std::nullopt;
  for (auto [spec, node] : *tensors) {
    if (spec) {
      f.spec.push_back(node);
    } else {
      f.impl.push_back(node);
      f.implDef.push_back(st.marks.isExplored(node) ? 1 : 0);
    }
  }
  f.inlined.assign(s.inlined.begin(), s.inlined.end());
  std::sort(f.inlined.begin(), f.inlined.end());
  f.related = s.related;
  f.result = st.rels[s.op.node];
  f.target = st.isTarget[s.op.node] != 0;
  f.outResult = st.outRels[s.op.node];
  f.deferred = st.deferredDepth[s.op.node] > 0;
  f.mergedEqual = s.mergedEqual;
  if (!f.deferred) f.foundEqual = implEqualPairs(st, s.g);  // what conclude recorded
  return f;
}

void OperatorReuse::add(const InferState& st, Footprint f) {
  byShape_[specShapeHash(st, f.op)].push_back(footprints_.size());
  footprints_.push_back(std::move(f));
}

bool OperatorReuse::tryReuse(InferState& st, const SpecOp& op, std::unordered_set<int>& inlined,
                             std::vector<std::pair<int, int>>& added) {
  uint64_t hash = specShapeHash(st, op);
  // TANGLE_TRACE_REUSE: why each candidate was not used (stderr).
  static const bool traceReuse = std::getenv("TANGLE_TRACE_REUSE") != nullptr;
  auto trace = [&](const SpecOp& to, const Footprint& from, const std::string& what) {
    std::fprintf(stderr, "reuse %s from %s: %s\n", st.spec.nodes[to.node].name.c_str(),
                 st.spec.nodes[from.op.node].name.c_str(), what.c_str());
  };
  auto it = byShape_.find(hash);
  if (it == byShape_.end()) {
    if (traceReuse) std::fprintf(stderr, "reuse %s: no earlier operator of its shape\n", st.spec.nodes[op.node].name.c_str());
    return false;
  }
  const std::vector<size_t>& candidates = it->second;
  for (size_t tried = 0; tried < candidates.size() && tried < kMaxTries; ++tried) {
    size_t index = candidates[candidates.size() - 1 - tried];
    const Footprint& f = footprints_[index];
    Renaming phi(st.impl);
    phi.reserve(f.spec.size() + f.inlined.size() + 2, f.impl.size());
    std::string why;
    if (!buildRenaming(st, f, op, phi, traceReuse ? &why : nullptr)) {
      if (traceReuse) trace(op, f, "no renaming: " + why);
      continue;
    }
    if (!preservesMergedEqualities(st, f, phi)) {
      if (traceReuse) trace(op, f, "a seeded implEqual fact does not hold renamed");
      continue;
    }
    // The gate; with a verifier, its outcome is predicted from the last
    // time it ran on this candidate for an operator of the same shape, and
    // the prediction is checked behind the walk (reuse_pipeline.h).
    std::optional<bool> predicted;
    GateSeen* seen = verifier_ ? &gateSeen_[{hash, index}] : nullptr;
    if (seen && seen->streak >= kPredictAfter) predicted = seen->passed;
    if (!predicted) {
      bool passed = preservesFootprint(st, f, op, phi);
      if (seen) *seen = GateSeen{passed, seen->passed == passed ? seen->streak + 1 : 1};
      if (!passed) {
        if (traceReuse) trace(op, f, "the gate refused the renaming");
        continue;
      }
    } else if (!*predicted) {
      verifier_->enqueue({&f, op, std::move(phi), false, position_, hash, index});
      continue;
    }
    std::vector<eg::Term> renamed(f.result.size());
    bool ok = true;
    for (size_t i = 0; i < f.result.size() && ok; ++i) ok = renameTerm(st, phi, f.result[i], renamed[i]);
    // The gate refuses a phi without these; a queued gate has not run yet.
    for (size_t i = 0; i < f.inlined.size() && ok; ++i) ok = phi.specOf(f.inlined[i]) != nullptr;
    // A target's relations over the implementation's outputs must stay over its outputs.
    std::vector<eg::Term> renamedOut(f.outResult.size());
    for (size_t i = 0; i < f.outResult.size() && ok; ++i)
      ok = renameTerm(st, phi, f.outResult[i], renamedOut[i]) && overImplOutputs(st, renamedOut[i]);
    // The equalities the search proved hold renamed, as its relations do.
    std::vector<std::pair<int, int>> equal;
    equal.reserve(f.foundEqual.size());
    for (auto [a, b] : f.foundEqual) {
      const int *x = phi.implOf(a), *y = phi.implOf(b);
      if (!x || !y) ok = false;
      else equal.emplace_back(*x, *y);
    }
    if (!ok) continue;
    st.rels[op.node] = std::move(renamed);
    if (f.target) st.outRels[op.node] = std::move(renamedOut);
    applyImplEqualPairs(st, equal, &added);
    if (f.deferred) {  // the same carry decision: the reads' chain depths were checked equal
      DeferredChain chain = deferredChain(st, op);
      st.deferredDepth[op.node] = chain.depth + 1;
      st.deferredOrigin[op.node] = chain.origin;
    }
    inlined.clear();
    for (int s : f.inlined) inlined.insert(*phi.specOf(s));
    lastSource_ = f.op.node;
    if (predicted) verifier_->enqueue({&f, op, std::move(phi), true, position_, hash, index});
    return true;
  }
  return false;
}

void OperatorReuse::stopPredicting(uint64_t shapeHash, size_t footprint) { gateSeen_[{shapeHash, footprint}].streak = 0; }

}  // namespace tangle
