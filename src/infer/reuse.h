// Internal to src/infer: exact reuse of an earlier operator's result on a
// later operator with the same structure up to renaming (repeated layers).
// The soundness argument is at the top of reuse.cpp.
//
//   record    after a successful search: the operator's FOOTPRINT (every spec
//             and implementation tensor its e-graph held, which of them had
//             their definitions added) and the relations it found;
//   tryReuse  before a search: finds an earlier footprint with the same
//             spec-side structure, builds a renaming phi from it onto the
//             new operator's tensors (reuse_match.cpp), checks that phi
//             preserves every fact the earlier e-graph was built from
//             (reuse_verify.cpp) and, if so, gives the new operator
//             phi(the earlier relations) without searching.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "infer/operator_search.h"

namespace tangle {

// What one searched operator's e-graph was built from, and what it gave.
struct Footprint {
  SpecOp op;
  std::vector<int> spec;       // spec tensors with a leaf in the e-graph (resolved)
  std::vector<int> impl;       // implementation tensors with a leaf in the e-graph (resolved)
  std::vector<char> implDef;   // parallel to impl: its definition was added (explored)
  std::vector<int> inlined;    // spec tensors whose definitions were inlined (addSpecTensor)
  std::vector<int> related;    // T_rel at the end (completeness guard only)
  std::vector<eg::Term> result;  // st.rels of the output
  // A target (a graph output of interest): its relations over the implementation's outputs
  // (st.outRels), reused only by another target.
  bool target = false;
  std::vector<eg::Term> outResult;
  // implEqual facts (a = b between implementation tensors) seeded into the
  // e-graph, and those its search proved (recorded by conclude; empty when deferred).
  std::vector<std::pair<int, int>> mergedEqual, foundEqual;
  bool deferred = false;         // result is a carried non-clean expression
};

// A map between non-negative ints (node or rank indexes) for renamings:
// open addressing in one array, no allocation per entry (tryReuse builds
// several renamings per operator, each with hundreds of entries).
class IntMap {
 public:
  const int* find(int key) const {
    if (slots_.empty()) return nullptr;
    for (size_t i = slot(key);; i = (i + 1) & mask_) {
      if (slots_[i].first == key) return &slots_[i].second;
      if (slots_[i].first < 0) return nullptr;
    }
  }
  bool count(int key) const { return find(key) != nullptr; }
  // Inserts key -> value unless key is present; the value held, and whether it was inserted.
  std::pair<int, bool> emplace(int key, int value) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    for (size_t i = slot(key);; i = (i + 1) & mask_) {
      if (slots_[i].first == key) return {slots_[i].second, false};
      if (slots_[i].first < 0) {
        slots_[i] = {key, value};
        ++size_;
        return {value, true};
      }
    }
  }
  size_t size() const { return size_; }
  // Room for n entries without growing (a renaming's size is about its footprint's).
  void reserve(size_t n) {
    size_t want = 32;
    while (want < 2 * (n + 1)) want *= 2;
    if (want > slots_.size()) rehash(want);
  }

 private:
  size_t slot(int key) const { return (static_cast<uint64_t>(static_cast<uint32_t>(key)) * 0x9e3779b97f4a7c15ULL >> 20) & mask_; }
  void grow() { rehash(slots_.empty() ? 32 : 2 * slots_.size()); }
  void rehash(size_t slots) {
    std::vector<std::pair<int, int>> old = std::move(slots_);
    slots_.assign(slots, {-1, 0});
    mask_ = slots_.size() - 1;
    size_ = 0;
    for (auto [k, v] : old)
      if (k >= 0) emplace(k, v);
  }
  std::vector<std::pair<int, int>> slots_;  // key -1: empty
  size_t mask_ = 0, size_ = 0;
};

// phi: from an earlier footprint's tensors to the new operator's, injective.
// Implementation tensors may move to other ranks (a later pipeline stage
// repeating an earlier one's layer), by one bijection between rank graphs.
struct Renaming {
  explicit Renaming(const LGraph& implGraph) : implGraph(&implGraph) {}
  // Room for about this many spec and implementation tensors.
  void reserve(size_t specs, size_t impls) {
    spec.reserve(specs);
    specInv.reserve(specs);
    impl.reserve(impls);
    implInv.reserve(impls);
  }
  const LGraph* implGraph;
  IntMap spec, impl;        // earlier -> new
  IntMap specInv, implInv;  // new -> earlier
  IntMap rank, rankInv;     // impl graphs (ranks): earlier -> new, new -> earlier
  bool bindSpec(int from, int to);  // false when it would break the map or injectivity
  bool bindImpl(int from, int to);  // also false when it would break the rank bijection
  bool rankFits(int from, int to) const;  // rank `from` may map to `to`
  const int* specOf(int from) const;
  const int* implOf(int from) const;
};

// reuse_match.cpp: builds phi from footprint f onto operator op (heuristic:
// any phi it returns is only used once reuse_verify.cpp accepted it). On
// failure, `why` (if given) says what did not map (TANGLE_TRACE_REUSE).
bool buildRenaming(const InferState& st, const Footprint& f, const SpecOp& op, Renaming& phi,
                   std::string* why = nullptr);

// reuse_verify.cpp: phi preserves every fact of f's e-graph (the soundness gate).
bool preservesFootprint(const InferState& st, const Footprint& f, const SpecOp& op, const Renaming& phi);
// phi maps every implEqual fact f's e-graph was seeded with onto one st holds
// now. Part of the gate, but always run on the walk's thread: implEqual grows
// during the walk (a queued gate must not read it).
bool preservesMergedEqualities(const InferState& st, const Footprint& f, const Renaming& phi);
// Every pair (a, b) has image(b) among image(a)'s implEqual partners (an image null: false).
bool holdRenamed(const InferState& st, const std::vector<std::pair<int, int>>& pairs,
                 const std::function<const int*(int)>& image);
// (c) of the gate for one implementation tensor: b has a's type, constant, zero regions (renamed)
// and, when `explored`, a's definition with operands mapped by phi.
bool sameImplFacts(const InferState& st, Renaming& phi, int a, int b, bool explored);
// reuse_match.cpp: binds explored node a to a user of an operand's image with the same
// definition (operands bound too), or with allowSources to a source of a's rank's image. With
// operandsMapped, only when all of a's operands are bound already (then the image is the user of
// all of theirs, not the first user of one: a gate and an up projection read one activation).
bool matchExplored(const InferState& st, Renaming& phi, int a, bool allowSources, bool operandsMapped = false);
// Every tensor leaf of g as (is spec, lowered node); nullopt when one names no graph tensor.
std::optional<std::vector<std::pair<bool, int>>> tensorLeaves(const InferState& st, const eg::EGraph& g);
// phi applied to a term's tensor leaves; false when a leaf is outside phi.
bool renameTerm(const InferState& st, const Renaming& phi, const eg::Term& in, eg::Term& out);
// Same structure, with phi taking a's tensors to b's. With `bind`, unbound
// tensors are bound (reuse_match.cpp); without, they must already be.
bool sameTermUnder(const InferState& st, Renaming& phi, const eg::Term& a, const eg::Term& b, bool bind);
bool sameRelExprUnder(const InferState& st, Renaming& phi, const RelExpr& a, const RelExpr& b, bool bind);

class ReuseVerifier;

class OperatorReuse {
 public:
  // With a verifier (--jobs > 1), tryReuse queues the soundness gate on it
  // instead of running it (reuse_pipeline.h).
  explicit OperatorReuse(ReuseVerifier* verifier = nullptr) : verifier_(verifier) {}
  // After a successful search of s.op (before the next operator's marks).
  void record(const InferState& st, const OperatorSearch& s);
  // The same in two steps: the footprint (on the searching thread, which
  // holds s and its marks), then its entry (on the walk's, whose st holds
  // the results up to s.op: the shape hash reads its inputs' relations).
  static std::optional<Footprint> footprintOf(const InferState& st, const OperatorSearch& s);
  void add(const InferState& st, Footprint f);
  // Gives op the relations of an earlier isomorphic operator. True if it did
  // (st.rels and the deferred state of op.node are set; `inlined` is phi of
  // the earlier operator's inlined set).
  // It also records phi of the earlier search's implEqual pairs; `added`
  // receives those st did not hold yet (to undo them on a rollback).
  bool tryReuse(InferState& st, const SpecOp& op, std::unordered_set<int>& inlined,
                std::vector<std::pair<int, int>>& added);
  // The earlier operator the last successful tryReuse used (for traces).
  int lastSource() const { return lastSource_; }
  // With a verifier: the walk position of the next tryReuse (for its queued
  // gates), and, after a wrong prediction, run that gate on the walk's thread again.
  void at(size_t position) { position_ = position; }
  void stopPredicting(uint64_t shapeHash, size_t footprint);

 private:
  std::deque<Footprint> footprints_;  // a deque: queued checks point into it
  ReuseVerifier* verifier_ = nullptr;
  size_t position_ = 0;
  struct PairHash {
    size_t operator()(const std::pair<uint64_t, size_t>& p) const noexcept { return p.first ^ (p.second * 0x9e3779b97f4a7c15ULL); }
  };
  // With a verifier: the gate's last outcome on the walk's thread and how many
  // times in a row it was that, per (spec-side shape hash, footprint).
  struct GateSeen {
    bool passed = false;
    int streak = 0;
  };
  std::unordered_map<std::pair<uint64_t, size_t>, GateSeen, PairHash> gateSeen_;
  std::unordered_map<uint64_t, std::vector<size_t>> byShape_;  // spec-side hash -> footprints
  int lastSource_ = -1;
};

// The spec-side structure of an operator, hashed: candidates for reuse.
uint64_t specShapeHash(const InferState& st, const SpecOp& op);

}  // namespace tangle
