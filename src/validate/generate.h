// Random instances of a lemma's left-hand side: a fresh e-graph where the
// pattern's variables are bound to random small terms (leaves, or concats /
// sums / slices of leaves where a lemma looks inside its operands) and its
// attribute variables to random values in range. Shapes come from a small
// per-attempt alphabet of sizes so that concat pieces, product operands and
// layer-norm weights line up often enough. An attempt fails (nullopt) when a
// random choice does not type-check under ops::inferData.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "egraph/egraph.h"
#include "validate/pattern_tree.h"

namespace tangle::validate {

using Shape = std::vector<int64_t>;

class Gen {
 public:
  Gen(eg::EGraph& g, std::mt19937_64& rng);

  // The pattern, built bottom-up; binds its variables.
  std::optional<eg::Id> instantiate(const PatTree& p);
  // Adds, for some slice[d, s, e, 1] x in the e-graph, the slices [0, s) and
  // [e, size) of x (lemmas over tilings need the other pieces to exist).
  void addComplementarySlices();

  // Building blocks (also for per-lemma builders).
  int64_t uniform(int64_t lo, int64_t hi);  // inclusive
  bool chance(double p);
  int64_t size();                           // a size from the attempt's alphabet
  Shape randomShape();
  eg::Id leaf(const Shape& s);               // a fresh f32 leaf "S.v<k>"
  eg::Id intLeaf(const Shape& s, int64_t lo, int64_t hi);  // a fresh i64 leaf with contents in [lo, hi)
  const std::map<std::string, std::pair<int64_t, int64_t>>& intLeaves() const { return intLeaves_; }
  eg::Id constant(double v);
  std::optional<eg::Id> node(const std::string& op, eg::AttrList attrs, std::vector<eg::Id> children);
  std::optional<eg::Id> classTerm();                 // value of an unbound ?x
  std::optional<std::vector<eg::Id>> listTerm();     // value of an unbound ?xs...
  std::optional<eg::Attr> sampleAttr(const std::string& op, size_t pos, const eg::AttrList& filled,
                                     const std::vector<eg::Id>& children);
  const Shape* shapeOf(eg::Id c) const;
  eg::EGraph& graph() { return g_; }
  const Shape& base() const { return base_; }
  int64_t varyDim() const { return vary_; }

 private:
  std::optional<eg::Id> build(const PatTree& p);
  std::optional<eg::Id> concatOf(const Shape& s, int64_t d, const std::vector<int64_t>& sizes);
  void remember(eg::Id c);

  eg::EGraph& g_;
  std::mt19937_64& rng_;
  std::vector<int64_t> alphabet_;
  Shape base_;
  int64_t vary_ = 0;
  std::vector<Shape> seen_;          // shapes of the classes built so far
  std::vector<int64_t> lastSplit_;   // sizes along varyDim of the last list
  int leaves_ = 0;
  std::map<std::string, std::pair<int64_t, int64_t>> intLeaves_;
  std::map<std::string, eg::Id> classes_;
  std::map<std::string, eg::Attr> attrs_;
  std::map<std::string, std::vector<eg::Id>> lists_;
};

// A hand-written instance builder for a lemma the generic generator cannot
// reach (e.g. a constrained rule rooted at a bare variable).
using Builder = std::function<std::optional<eg::Id>(Gen&)>;
// getitem of sdpa (or sdpa_backward) over pieces along dim d (builders_sdpa.cpp).
Builder sdpaOfPieces(bool backward, int64_t d);
// getitem(sdpa(q, k, v, m)) with q split along the sequence (keys = false) or k/v split alike (keys = true).
Builder sdpaOfSequenceBlocks(bool keys);
// getitem(sdpa[causal](concat[2](q_j), concat[2](k_j), concat[2](v_j), m)), q_j and k_j of equal lengths (mostly).
std::optional<eg::Id> causalSdpaOfBlocks(Gen& gen);
// getitem(sdpa_backward(...)) with the row operands and the keys split into blocks along the sequence
// (builders_sdpa_backward.cpp); causal: rows and keys mostly split alike.
Builder sdpaBackwardOfBlocks(bool causal);
// Sums of attention-backward terms for add-assoc-backward (which 0), add-swap-backward (1) and
// add-commute-backward (2), the later term sorting first (builders_sdpa_backward.cpp).
Builder backwardSumOutOfOrder(int which);
// one_hot of a concat of integral pieces (builders_select.cpp).
std::optional<eg::Id> oneHotOfConcat(Gen& gen);
std::optional<eg::Id> indexRowsOfConcat(Gen& gen);
std::optional<eg::Id> indexRowsOfPrefix(Gen& gen);
// The GQA lemmas' instances (builders_gqa.cpp).
std::optional<eg::Id> concatEqualPieces(Gen& gen);
std::optional<eg::Id> sdpaOfSubgroups(Gen& gen);
// The zero-padding lemmas' instances (builders_zeros.cpp); which: 0 an all-zero
// operand, 1 the rhs / 2 the lhs split along the contracted dim with zero pieces.
Builder productWithZeros(bool batched, int which);
std::optional<eg::Id> reshapeOfSlice(Gen& gen);  // builders_zeros.cpp
Builder splatRearranged(int kind);               // builders_zeros.cpp
std::optional<eg::Id> sumWithZeros(Gen& gen);
std::optional<eg::Id> concatOfScaled(Gen& gen);  // builders_zeros.cpp
Builder withZeroTerm(const std::string& op, bool zerosOnLeft);  // builders_zeros.cpp
std::optional<eg::Id> concatOfConcats(Gen& gen);                  // builders_zeros.cpp
std::optional<eg::Id> addOfDisjointPieces(Gen& gen);              // builders_zeros.cpp
std::optional<eg::Id> concatNextToItsRun(Gen& gen);               // builders_concat.cpp
std::optional<eg::Id> concatWithEmptyPieces(Gen& gen);           // builders_concat.cpp
Builder binaryOfUnitLead(const std::string& op);  // builders_equiv.cpp
Builder binaryDropUnitLead(const std::string& op);  // builders_rotary.cpp
std::optional<eg::Id> arangeSubrange(Gen& gen);  // builders_arange.cpp
Builder arangeShifted(const std::string& op, bool constOnLeft);  // builders_arange.cpp
Builder identityOp(const std::string& op, double e, bool constOnLeft);  // builders_arange.cpp
Builder untypeConst(const std::string& op, size_t arity, size_t pos);  // builders_arange.cpp
Builder broadcastUnitLead(const std::string& op, bool onLeft);  // builders_arange.cpp
std::optional<eg::Id> expandOfUnitLead(Gen& gen);  // builders_rotary.cpp
std::optional<eg::Id> sumNextToAdds(Gen& gen);  // builders_accum.cpp
// merge_out / merge_lse of two atoms, or of a merge and an atom, the later atom sorting first (builders_merge.cpp).
Builder mergeOutOfOrder(bool lse, bool chain);
// Builders by lemma name (nullptr: use the generic one).
const Builder* builderFor(const std::string& lemma);

}  // namespace tangle::validate
