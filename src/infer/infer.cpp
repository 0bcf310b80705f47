#include "infer/infer.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <unordered_map>
#include <unordered_set>

#include "ops/ops.h"
#include "ops/shape.h"

namespace tangle {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Tensors a spec operator's expression reads: its operands, except that a
// getitem reads through its (unprocessed) tuple producer's operands.
struct SpecOp {
  int node;           // the tensor whose relation is computed
  int reported;       // the operator named on failure (tuple producer for getitem)
  std::vector<int> reads;
};

class Inference {
 public:
  Inference(const Problem& p, const std::vector<eg::Rule>& lemmas, const InferOptions& o)
      : spec_(*p.spec), impl_(*p.impl), rel_(*p.relation), symbols_(p.symbols), lemmas_(lemmas), opts_(o) {
    rels_.resize(spec_.nodes.size());
    inputRels_.resize(spec_.nodes.size());
    relStamp_.assign(impl_.nodes.size(), 0);
    exploredStamp_.assign(impl_.nodes.size(), 0);
    for (size_t i = 0; i < impl_.nodes.size(); ++i) {
      const LNode& n = impl_.nodes[i];
      if (n.aliasOf < 0 && !n.isInput && n.operands.empty() && !n.def.nodes.empty()) implSources_.push_back(static_cast<int>(i));
    }
  }

  InferResult run() {
    auto start = Clock::now();
    InferResult res;
    loadInputRelations();
    std::vector<int> targets = outputsOfInterest();
    outRels_.resize(spec_.nodes.size());
    isTarget_.assign(spec_.nodes.size(), 0);
    deferredDepth_.assign(spec_.nodes.size(), 0);
    deferredOrigin_.assign(spec_.nodes.size(), -1);
    for (int t : targets) isTarget_[t] = 1;
    strictOutputs_ = rel_.outputs.empty();
    std::vector<SpecOp> order = specOrder(targets);
    res.stats.specOps = countOps(spec_);
    res.stats.implOps = countOps(impl_);
    for (const SpecOp& op : order) {
      if (since(start) > opts_.totalSeconds) {
        Failure f;
        f.node = op.reported;
        f.tensor = op.node;
        f.limitReached = true;
        f.reason = "the run's time limit was reached before this operator";
        res.failure = f;
        break;
      }
      auto failure = processOp(op, res.stats);
      ++res.stats.opsProcessed;
      if (!failure) res.all.push_back(relationsOf(op.node));
      if (failure) {
        res.failure = std::move(failure);
        break;
      }
    }
    if (res.failure)
      for (const Expectation& e : rel_.expectations) res.uncheckedExpectations.push_back(&e);
    if (!res.failure) {
      for (int t : targets) {
        res.outputs.push_back(relationsOf(t));
        if (strictOutputs_ && !outRels_[t].empty()) res.outputs.back().exprs = outRels_[t];
      }
      checkExpectations(res);
    }
    res.verdict = verdictOf(res);
    res.stats.seconds = since(start);
    return res;
  }

 private:
  const LGraph& spec_;
  const LGraph& impl_;
  const RelationFile& rel_;
  const sym::Context* symbols_;  // every e-graph's (null: an empty one each)
  const std::vector<eg::Rule>& lemmas_;
  InferOptions opts_;
  std::vector<std::vector<eg::Term>> rels_;               // computed clean relations per spec node
  std::vector<std::vector<eg::Term>> outRels_;            // graph outputs: relations over impl outputs only
  std::vector<char> isTarget_;
  std::vector<size_t> deferredDepth_;  // > 0: carried as a non-clean expression (see InferOptions::maxDeferred)
  std::vector<int> deferredOrigin_;    // first operator of that chain
  std::unordered_set<int> inlined_;    // spec definitions already added to this operator's e-graph
  std::vector<int> related_;           // T_rel of the current operator, in the order it grew
  bool strictOutputs_ = false;                            // no `output` statement: outputs are the graph's
  std::vector<std::vector<const RelExpr*>> inputRels_;    // user relations per spec node
  std::unordered_map<int, double> specConsts_, implConsts_;
  std::vector<uint32_t> relStamp_, exploredStamp_;        // per impl node: in T_rel / explored for epoch
  uint32_t epoch_ = 0;
  std::vector<int> implSources_;                          // impl nodes computed from no tensor (arange, zeros, ...)

  static size_t countOps(const LGraph& g) {
    size_t n = 0;
    for (auto& ln : g.nodes) n += (!ln.isInput && ln.aliasOf < 0) ? 1 : 0;
    return n;
  }

  int specNode(const TensorName& t, const SourceLoc& loc) const {
    auto id = spec_.find(t.toString());
    if (!id) throw InputError(loc, "tensor '" + t.toString() + "' does not exist in the spec graph");
    return spec_.resolve(*id);
  }
  int implNode(const TensorName& t, const SourceLoc& loc) const {
    auto id = impl_.find(t.toString());
    if (!id)
      throw InputError(loc, "tensor '" + t.toString() + "' does not exist in rank " + std::to_string(t.rank) +
                                " of the implementation");
    return impl_.resolve(*id);
  }

  // Validates each user relation once (names, shapes) and indexes it.
  void loadInputRelations() {
    for (auto& c : rel_.constants) {
      if (c.tensor.side == TensorName::Side::Spec) specConsts_[specNode(c.tensor, c.loc)] = c.value;
      else implConsts_[implNode(c.tensor, c.loc)] = c.value;
    }
    for (auto& r : rel_.relations) {
      int s = specNode(r.lhs, r.loc);
      eg::EGraph scratch(ops::inferData, symbols_);
      eg::Id rhs = addRelExpr(scratch, r.rhs, spec_, impl_);
      const TensorType* want = spec_.nodes[s].data.tensor();
      const TensorType* got = scratch.data(rhs).tensor();
      if (want && got && !ops::sameShape(scratch.symbols(), want->shape, got->shape))
        throw InputError(r.loc, "shape mismatch: " + r.lhs.toString() + " is " + toString(*want) + " but '" +
                                    r.rhs.toString() + "' is " + toString(*got));
      inputRels_[s].push_back(&r.rhs);
    }
  }

  std::vector<int> outputsOfInterest() const {
    std::vector<int> out;
    if (!rel_.outputs.empty()) {
      for (auto& t : rel_.outputs) out.push_back(specNode(t, {rel_.path, 0}));
    } else {
      const Graph& g = *spec_.graphs[0];
      for (NodeId id : g.outputNodes()) out.push_back(spec_.resolve(*spec_.find("S." + g.node(id).name)));
    }
    std::vector<int> uniq;
    for (int t : out)
      if (std::find(uniq.begin(), uniq.end(), t) == uniq.end()) uniq.push_back(t);
    return uniq;
  }

  // Spec operators needed for the targets and the expectations, in topological order.
  std::vector<SpecOp> specOrder(const std::vector<int>& targets) const {
    std::vector<char> needed(spec_.nodes.size(), 0);
    std::vector<int> stack(targets.begin(), targets.end());
    for (auto& e : rel_.expectations) collectSpecTensors(e.lhs, stack);
    while (!stack.empty()) {
      int n = spec_.resolve(stack.back());
      stack.pop_back();
      if (needed[n]) continue;
      needed[n] = 1;
      if (!inputRels_[n].empty()) continue;  // given by the user: a cut point
      for (int o : spec_.nodes[n].operands) stack.push_back(o);
    }
    std::vector<SpecOp> order;
    for (size_t i = 0; i < spec_.nodes.size(); ++i) {
      const LNode& n = spec_.nodes[i];
      if (!needed[i] || n.aliasOf >= 0) continue;
      int id = static_cast<int>(i);
      if (n.isInput || !inputRels_[i].empty()) {  // a relation given for an intermediate makes it an input
        if (inputRels_[i].empty() && !specConsts_.count(id))
          throw InputError({rel_.path, 0}, "spec input '" + n.name + "' is needed but the relation file gives no relation for it");
        continue;
      }
      if (n.tuple()) continue;  // computed as part of each getitem that reads it
      SpecOp op{id, id, n.operands};
      if (!n.def.nodes.empty() && n.def.nodes.back().op == ops::syms().getitem && n.operands.size() == 1) {
        const LNode& producer = spec_.nodes[n.operands[0]];
        if (producer.tuple() && !producer.isInput) {
          op.reported = n.operands[0];
          op.reads = producer.operands;
        }
      }
      order.push_back(std::move(op));
    }
    return order;
  }

  void collectSpecTensors(const RelExpr& e, std::vector<int>& out) const {
    if (e.kind == RelExpr::Kind::Tensor && e.tensor.side == TensorName::Side::Spec)
      out.push_back(specNode(e.tensor, e.loc));
    for (auto& a : e.args) collectSpecTensors(a, out);
  }

  // --- building one operator's e-graph -------------------------------------

  eg::Id constNode(eg::EGraph& g, double v) {
    return g.add(eg::ENode{ops::syms().constant, eg::internAttrs({eg::Attr::real(v)}), {}});
  }

  // The class of spec tensor `s`, merged with every relation known for it.
  // A tensor carried without a clean relation is also given its spec
  // definition (over its own inputs, one level further), so that lemmas see
  // its structure (e.g. the range mask a vocab-parallel gather is guarded by).
  eg::Id addSpecTensor(eg::EGraph& g, int s, std::vector<int>& relTensors, int inlineDepth = 0) {
    eg::Id leaf = addLeaf(g, spec_, s);
    const LNode& n = spec_.nodes[s];
    bool inlineDef = (deferredDepth_[s] > 0 || inlineDepth > 0) && !n.isInput && inputRels_[s].empty() &&
                     !n.def.nodes.empty() && !n.tuple() && inlined_.insert(s).second;
    if (inlineDef) {
      int depth = deferredDepth_[s] > 0 ? 1 : inlineDepth - 1;
      for (int o : n.operands) addSpecTensor(g, spec_.resolve(o), relTensors, depth);
      if (auto def = addDefinition(g, spec_, s)) g.merge(leaf, *def);
    }
    for (const RelExpr* e : inputRels_[s]) {
      g.merge(leaf, addRelExpr(g, *e, spec_, impl_));
      collectImplTensors(*e, relTensors);
    }
    for (const eg::Term& t : rels_[s]) {
      g.merge(leaf, addTerm(g, t));
      collectImplTensors(t, relTensors);
    }
    if (auto c = specConsts_.find(s); c != specConsts_.end()) g.merge(leaf, constNode(g, c->second));
    return leaf;
  }

  // Adds a clean term, giving its tensor leaves their types from the graphs.
  eg::Id addTerm(eg::EGraph& g, const eg::Term& t) {
    std::vector<eg::Id> ids(t.size());
    for (size_t i = 0; i < t.size(); ++i) {
      const auto& n = t.nodes[i];
      if (const std::string* name = ops::tensorName(n.op, n.attrs)) {
        const LGraph& lg = name->rfind("S.", 0) == 0 ? spec_ : impl_;
        ids[i] = addLeaf(g, lg, *lg.find(*name));
        continue;
      }
      eg::ENode en{n.op, n.attrs, {}};
      for (uint32_t c : n.children) en.children.push_back(ids[c]);
      ids[i] = g.add(std::move(en));
    }
    return ids.back();
  }

  void collectImplTensors(const RelExpr& e, std::vector<int>& out) const {
    if (e.kind == RelExpr::Kind::Tensor && e.tensor.side == TensorName::Side::Impl)
      out.push_back(implNode(e.tensor, e.loc));
    for (auto& a : e.args) collectImplTensors(a, out);
    for (auto& [k, v] : e.kwargs) collectImplTensors(v, out);
  }
  void collectImplTensors(const eg::Term& t, std::vector<int>& out) const {
    for (auto& n : t.nodes)
      if (const std::string* name = ops::tensorName(n.op, n.attrs); name && name->rfind("S.", 0) != 0)
        if (auto id = impl_.find(*name)) out.push_back(impl_.resolve(*id));
  }

  // The expression of the operator over its inputs' classes.
  std::optional<eg::Id> addSpecOp(eg::EGraph& g, const SpecOp& op) {
    if (op.reported != op.node) {  // getitem of a tuple producer
      auto tuple = addDefinition(g, spec_, op.reported);
      if (!tuple) return std::nullopt;
      // Opaque producers get their element types from the graph's annotations.
      g.merge(*tuple, addLeaf(g, spec_, op.reported));
      g.rebuild();
      const auto& gi = spec_.nodes[op.node].def.nodes.back();
      return g.tryAdd(eg::ENode{gi.op, eg::internAttrs(gi.attrs), {*tuple}});
    }
    auto root = addDefinition(g, spec_, op.node);
    // An opaque definition has no type of its own: give it the annotation, so
    // an implementation value of another type merged with it is a conflict.
    if (root && !g.data(*root).tensor() && spec_.nodes[op.node].data.tensor()) {
      g.merge(*root, addLeaf(g, spec_, op.node));
      g.rebuild();
    }
    return root;
  }

  bool inRel(int d) const {
    if (relStamp_[d] == epoch_) return true;
    const LNode& n = impl_.nodes[d];
    if (n.isInput) return implConsts_.count(d) > 0;
    return n.operands.empty();  // computed from nothing (arange, zeros, ...): related to everything
  }

  void addToRel(int d, std::vector<int>& frontier) {
    d = impl_.resolve(d);
    if (relStamp_[d] == epoch_) return;
    relStamp_[d] = epoch_;
    frontier.push_back(d);
    related_.push_back(d);
  }

  // Merges an explored impl node's leaf with its definition (and constants).
  void explore(eg::EGraph& g, int d) {
    exploredStamp_[d] = epoch_;
    eg::Id leaf = addLeaf(g, impl_, d);
    if (auto def = addDefinition(g, impl_, d)) g.merge(leaf, *def);
    for (int o : impl_.nodes[d].operands) {
      if (auto c = implConsts_.find(o); c != implConsts_.end()) g.merge(addLeaf(g, impl_, o), constNode(g, c->second));
      else if (impl_.nodes[o].operands.empty() && !impl_.nodes[o].isInput && exploredStamp_[o] != epoch_) explore(g, o);
    }
  }

  static bool isCleanDef(const LNode& n) {
    if (n.def.nodes.empty()) return false;
    eg::ENode root{n.def.nodes.back().op, 0, {}};
    const ops::OpInfo* info = ops::find(root.op);
    return info && info->clean;
  }

  // Listing 3: the unexplored implementation nodes all of whose inputs are
  // related, reached from the newly related tensors (and, for a spec operator
  // that reads nothing, the implementation's own source operators).
  //
  // Beyond Listing 3: an implementation node computing the same (non-clean)
  // operator as the spec's, with some inputs related, is explored too, and so
  // are the definitions behind its other inputs, a few levels deep: the
  // implementation may reach the same value by a detour the spec does not take
  // (e.g. writing rotated heads back into a fused buffer and splitting it again).
  std::vector<int> nextBatch(const std::vector<int>& frontier, bool withSources, eg::Symbol specOp) {
    std::vector<int> batch;
    const ops::OpInfo* info = specOp ? ops::find(specOp) : nullptr;
    bool matchOp = info && !info->clean;
    for (int t : frontier)
      for (int u : impl_.users[t]) {
        if (exploredStamp_[u] == epoch_ || impl_.nodes[u].aliasOf >= 0) continue;
        const auto& ops = impl_.nodes[u].operands;
        if (std::all_of(ops.begin(), ops.end(), [&](int o) { return inRel(o); })) {
          exploredStamp_[u] = epoch_;
          batch.push_back(u);
        } else if (matchOp && !impl_.nodes[u].def.nodes.empty() && impl_.nodes[u].def.nodes.back().op == specOp) {
          exploredStamp_[u] = epoch_;
          size_t budget = 32;
          for (int o : ops) backfill(o, 6, budget, batch);
          batch.push_back(u);
        }
      }
    if (withSources)
      for (int d : implSources_)
        if (exploredStamp_[d] != epoch_) {
          exploredStamp_[d] = epoch_;
          batch.push_back(d);
        }
    return batch;
  }

  // Adds the definitions behind an unrelated implementation tensor to `batch`.
  void backfill(int d, int depth, size_t& budget, std::vector<int>& batch) {
    d = impl_.resolve(d);
    if (depth == 0 || budget == 0 || inRel(d) || exploredStamp_[d] == epoch_) return;
    const LNode& n = impl_.nodes[d];
    if (n.isInput || n.def.nodes.empty()) return;
    exploredStamp_[d] = epoch_;
    --budget;
    for (int o : n.operands) backfill(o, depth - 1, budget, batch);
    batch.push_back(d);  // after its operands: their types must be known when it is added
  }

  // After a round: tensors in the output's clean expressions become related
  // (Listing 3). Beyond it, so does an explored tensor that any expression of
  // the output uses (e.g. the range masks a vocab-parallel lookup is built
  // from), or that the e-graph computes from such expressions (a micro-batch
  // mean = the spec's partial sum / n). This affects completeness only.
  void growRelated(eg::EGraph& g, eg::Id root, const std::vector<eg::Term>& clean, const std::vector<int>& explored,
                   std::vector<int>& frontier) {
    std::vector<int> used;
    for (auto& t : clean) collectImplTensors(t, used);
    for (int d : used) addToRel(d, frontier);
    std::vector<char> below = descendants(g, root);
    auto usesBelow = [&](eg::Id c) {
      for (const eg::ENode& n : g.eclass(c).nodes)
        for (eg::Id k : n.children)
          if (below[g.find(k)]) return true;
      return false;
    };
    for (int u : explored)
      if (relStamp_[u] != epoch_) {
        eg::Id c = g.find(addLeaf(g, impl_, u));
        if (c < below.size() && (below[c] || usesBelow(c))) addToRel(u, frontier);
      }
  }

  // Developer aid: TANGLE_DUMP_EGRAPH=<spec tensor> prints that operator's e-graph.
  void dumpIfAsked(const eg::EGraph& g, eg::Id root, const SpecOp& op) const {
    const char* dump = std::getenv("TANGLE_DUMP_EGRAPH");
    if (!dump || spec_.nodes[op.node].name != std::string("S.") + dump) return;
    std::fprintf(stderr, "e-graph of %s (root e%u):\n", dump, g.find(root));
    for (eg::Id c : g.classIds()) {
      const auto* t = g.data(c).tensor();
      std::fprintf(stderr, "  e%u %s:", c, t ? toString(*t).c_str() : "");
      for (const auto& n : g.eclass(c).nodes) std::fprintf(stderr, " %s", eg::toString(n).c_str());
      std::fprintf(stderr, "\n");
    }
  }

  std::optional<Failure> processOp(const SpecOp& op, InferStats& stats) {
    ++epoch_;
    inlined_.clear();
    related_.clear();
    auto start = Clock::now();
    eg::EGraph g(ops::inferData, symbols_);
    std::vector<int> relTensors;
    for (int s : op.reads) addSpecTensor(g, spec_.resolve(s), relTensors);
    for (auto& [d, v] : implConsts_)
      if (auto leaf = g.lookup(eg::ENode{ops::syms().tensor, eg::internAttrs({eg::Attr::str(impl_.nodes[d].leafName)}), {}}))
        g.merge(*leaf, constNode(g, v));
    auto rootOpt = addSpecOp(g, op);
    if (!rootOpt) {
      Failure f = failureFor(op, g);
      f.reason = "the operator's expression over its inputs' relations is ill-typed";
      return f;
    }
    eg::Id root = *rootOpt;
    std::vector<int> frontier;
    for (int d : relTensors) addToRel(d, frontier);
    if (op.reads.empty())  // a source operator: compare with the implementation's sources
      for (int d : implSources_) addToRel(d, frontier);

    eg::RunLimits limits;
    limits.maxIterations = opts_.maxIterations;
    limits.maxNodes = opts_.maxNodes;
    bool limitHit = false;
    std::vector<int> explored;
    auto saturate = [&]() {
      limits.maxSeconds = std::max(0.01, opts_.operatorSeconds - since(start));
      eg::RunReport rep = eg::run(g, lemmas_, limits);
      for (auto& [k, v] : rep.firings) stats.firings[k] += v;
      if (rep.stop != eg::StopReason::Saturated) limitHit = true;
    };
    const auto& specDef = spec_.nodes[op.node].def.nodes;
    eg::Symbol specRoot = specDef.empty() ? 0 : specDef.back().op;
    saturate();
    std::vector<eg::Term> clean = cleanRelations(g, root);  // kept current after every saturation
    bool detours = false;  // the second phase: same-operator nodes with unrelated inputs (see nextBatch)
    while (true) {
      std::vector<int> batch = nextBatch(frontier, op.reads.empty() && explored.empty(), detours ? specRoot : 0);
      frontier.clear();
      if (batch.empty() && !detours && clean.empty()) {
        // Nothing clean yet: look once more, from every related tensor, allowing detours.
        detours = true;
        for (int d : related_) frontier.push_back(d);
        batch = nextBatch(frontier, false, specRoot);
        frontier.clear();
      }
      if (batch.empty()) break;
      for (int u : batch) {
        explore(g, u);
        explored.push_back(u);
        // A rearrangement of related tensors is itself related (observation (i));
        // a tuple is related so that its getitem users are explored with it.
        if (isCleanDef(impl_.nodes[u]) || impl_.nodes[u].tuple()) addToRel(u, frontier);
      }
      g.rebuild();
      saturate();
      clean = cleanRelations(g, root);
      if (g.numNodes() >= opts_.maxNodes || since(start) > opts_.operatorSeconds) {
        limitHit = true;
        break;
      }
      growRelated(g, root, clean, explored, frontier);
    }
    dumpIfAsked(g, root, op);
    stats.enodesMax = std::max(stats.enodesMax, g.numNodes());
    stats.enodesTotal += g.numNodes();
    stats.exploredImplNodes += explored.size();
    for (auto& c : g.conflicts()) stats.conflicts.push_back(spec_.nodes[op.node].name + ": " + c);
    size_t depth = 0;
    int origin = op.reported;
    for (int s : op.reads) {
      int r = spec_.resolve(s);
      if (deferredDepth_[r] > depth) depth = deferredDepth_[r];
      if (deferredDepth_[r] > 0 && (origin == op.reported || deferredOrigin_[r] < origin)) origin = deferredOrigin_[r];
    }
    if (clean.empty() && !limitHit && !isTarget_[op.node] && depth < opts_.maxDeferred) {
      // Carry the value as a non-clean expression over implementation tensors.
      eg::Extractor any(g, [this](const eg::EGraph&, const eg::ENode& n) { return !isSpecLeaf(n); });
      if (auto t = any.best(root)) {
        rels_[op.node] = {*t};
        deferredDepth_[op.node] = depth + 1;
        deferredOrigin_[op.node] = origin;
        return std::nullopt;
      }
    }
    if (clean.empty()) {
      Failure f = failureFor(op, g);
      if (depth > 0) {  // blame the first operator of the unresolved chain
        f.gaveUpAt = op.reported;
        f.node = f.tensor = origin;
        f.inputRelations.clear();
        for (int s : spec_.nodes[origin].operands) f.inputRelations.push_back(relationsOf(spec_.resolve(s)));
      }
      f.limitReached = limitHit;
      f.nearbyImpl = explored;
      f.reason = limitHit ? "a search limit was reached before a clean expression was found"
                          : "no clean expression over the implementation's tensors computes this operator's output";
      return f;
    }
    if (strictOutputs_ && isTarget_[op.node]) {
      // A graph output must be rebuilt from the implementation's outputs
      // (R_o maps O(G_s) to O(G_d)), not from values it computed and dropped.
      eg::Extractor exOut(g, [this](const eg::EGraph&, const eg::ENode& n) {
        return ops::isCleanNode(n) && (!n.isLeaf() || n.op != ops::syms().tensor || isImplOutputLeaf(n));
      });
      outRels_[op.node] = exOut.alternatives(root, opts_.maxRelationsPerTensor);
      if (outRels_[op.node].empty()) {
        Failure f = failureFor(op, g);
        f.nearbyImpl = explored;
        f.reason = "clean expressions exist only over implementation tensors that its graphs do not return: " +
                   formatTerm(clean.front());
        return f;
      }
    }
    rels_[op.node] = std::move(clean);
    return std::nullopt;
  }

  // The clean expressions kept for a class: the smallest per top-level e-node,
  // plus, for each rank, the smallest one over that rank's tensors alone, so
  // a replicated value keeps a relation on every rank (each rank's own chain
  // of operators is explored from it).
  std::vector<eg::Term> cleanRelations(const eg::EGraph& g, eg::Id root) const {
    eg::Extractor ex(g, [](const eg::EGraph&, const eg::ENode& n) { return ops::isCleanNode(n); });
    std::vector<eg::Term> out = ex.alternatives(root, opts_.maxRelationsPerTensor);
    if (out.empty()) return out;
    for (size_t r = 0; r < impl_.graphs.size() && impl_.graphs.size() > 1; ++r) {
      std::string prefix = "D" + std::to_string(r) + ".";
      eg::Extractor mine(g, [&](const eg::EGraph&, const eg::ENode& n) {
        if (!ops::isCleanNode(n)) return false;
        const std::string* name = ops::tensorName(n);
        return !name || name->rfind(prefix, 0) == 0;
      });
      if (auto t = mine.best(root); t && std::find(out.begin(), out.end(), *t) == out.end()) out.push_back(*t);
    }
    return out;
  }

  // Classes reachable from `root` through e-node children (by canonical id).
  static std::vector<char> descendants(const eg::EGraph& g, eg::Id root) {
    std::vector<char> seen(g.numIds(), 0);
    std::vector<eg::Id> stack{g.find(root)};
    seen[stack.back()] = 1;
    while (!stack.empty()) {
      eg::Id c = stack.back();
      stack.pop_back();
      for (const eg::ENode& n : g.eclass(c).nodes)
        for (eg::Id k : n.children) {
          eg::Id kc = g.find(k);
          if (!seen[kc]) {
            seen[kc] = 1;
            stack.push_back(kc);
          }
        }
    }
    return seen;
  }

  static bool isSpecLeaf(const eg::ENode& n) {
    const std::string* name = ops::tensorName(n);
    return name && name->rfind("S.", 0) == 0;
  }

  bool isImplOutputLeaf(const eg::ENode& n) const {
    const std::string* name = ops::tensorName(n);
    if (!name || name->rfind("S.", 0) == 0) return false;
    auto id = impl_.find(*name);
    return id && impl_.nodes[impl_.resolve(*id)].isOutput;
  }

  Failure failureFor(const SpecOp& op, const eg::EGraph& g) const {
    Failure f;
    f.node = op.reported;
    f.tensor = op.node;
    f.enodes = g.numNodes();
    for (int s : op.reads) f.inputRelations.push_back(relationsOf(spec_.resolve(s)));
    return f;
  }

  TensorRelations relationsOf(int s) const {
    TensorRelations tr;
    tr.node = s;
    tr.tensor = spec_.nodes[s].name;
    tr.exprs = rels_[s];
    tr.deferred = deferredDepth_[s] > 0;
    if (tr.exprs.empty() && !inputRels_[s].empty()) {
      // Input relations are shown through a scratch e-graph so they print like the others.
      eg::EGraph scratch(ops::inferData, symbols_);
      for (const RelExpr* e : inputRels_[s]) {
        eg::Id id = addRelExpr(scratch, *e, spec_, impl_);
        scratch.rebuild();
        eg::Extractor ex(scratch);
        if (auto t = ex.best(id)) tr.exprs.push_back(*t);
      }
    }
    return tr;
  }

  void checkExpectations(InferResult& res) {
    for (const Expectation& e : rel_.expectations) {
      eg::EGraph g(ops::inferData, symbols_);
      std::vector<int> specTensors, ignored;
      collectSpecTensors(e.lhs, specTensors);
      for (int s : specTensors) addSpecTensor(g, s, ignored);
      eg::Id lhs = addRelExpr(g, e.lhs, spec_, impl_);
      eg::Id rhs = addRelExpr(g, e.rhs, spec_, impl_);
      g.rebuild();
      eg::RunLimits limits;
      limits.maxIterations = opts_.maxIterations;
      limits.maxNodes = opts_.maxNodes;
      limits.maxSeconds = opts_.operatorSeconds;
      eg::run(g, lemmas_, limits);
      ExpectationResult r;
      r.expectation = &e;
      r.holds = g.find(lhs) == g.find(rhs);
      if (!specTensors.empty()) r.known = relationsOf(specTensors[0]).exprs;
      res.expectations.push_back(std::move(r));
    }
  }

  static Verdict verdictOf(const InferResult& res) {
    if (res.failure) return res.failure->limitReached ? Verdict::Inconclusive : Verdict::Violation;
    for (auto& e : res.expectations)
      if (!e.holds) return Verdict::Violation;
    // Classes of different types were merged (dumps that contradict each
    // other, or a wrong lemma): the relations found cannot be trusted.
    if (!res.stats.conflicts.empty()) return Verdict::Inconclusive;
    return Verdict::Refines;
  }
};

}  // namespace

const char* toString(Verdict v) {
  switch (v) {
    case Verdict::Refines: return "refines";
    case Verdict::Violation: return "violation";
    case Verdict::Inconclusive: return "inconclusive";
  }
  return "?";
}

InferResult inferRelations(const Problem& p, const std::vector<eg::Rule>& lemmas, const InferOptions& opts) {
  return Inference(p, lemmas, opts).run();
}

}  // namespace tangle
