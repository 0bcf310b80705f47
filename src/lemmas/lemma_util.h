// Internal to src/lemmas: building blocks of lemma guards and appliers.
#pragma once

#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "egraph/rewrite.h"
#include "lemmas/lemmas.h"
#include "ops/ops.h"
#include "ops/shape.h"

namespace tangle::lemmas::detail {

using eg::Attr;
using eg::AttrList;
using eg::EGraph;
using eg::ENode;
using eg::Id;
using eg::Match;
using eg::Subst;
using Shape = ops::Shape;

// Symbols of the ops the lemmas talk about (one set for every layer).
inline const ops::Syms& op() { return ops::syms(); }

// ---- reading the e-graph --------------------------------------------------
const TensorType* typeOf(const EGraph& g, Id c);
// Concrete sizes of the pieces along `dim`; nullopt when a piece is untyped,
// has too small a rank, or a symbolic size there.
std::optional<std::vector<int64_t>> sizesAlong(const EGraph& g, const std::vector<Id>& xs, int64_t dim);
// Concrete size of dim `dim` of class c.
std::optional<int64_t> sizeOf(const EGraph& g, Id c, int64_t dim);
// Dims along `dim` / of class c, symbolic ones included (sym/expr.h). Code
// that only compares them (sym::dimEqual) or adds them (sym::dimAdd) uses
// these; code doing other arithmetic uses the concrete sizesAlong / sizeOf.
std::optional<std::vector<Dim>> dimsAlong(const EGraph& g, const std::vector<Id>& xs, int64_t dim);
std::optional<Dim> dimOf(const EGraph& g, Id c, int64_t dim);
// Elementwise sym::dimEqual of equally long lists.
bool sameDims(const sym::Context& symbols, const std::vector<Dim>& a, const std::vector<Dim>& b);
Dim totalDim(const sym::Context& symbols, const std::vector<Dim>& sizes);
// A snapshot list of e-node pointers, its first few held inline: nodesOf's vector was ~70k
// allocations in a check, and a class rarely has more than a couple of nodes of one operator.
class NodeList {
 public:
  void push_back(const ENode* n) {
    if (heap_.empty() && size_ < kInline) {
      inline_[size_++] = n;
      return;
    }
    if (heap_.empty()) heap_.assign(inline_, inline_ + size_);
    heap_.push_back(n);
    ++size_;
  }
  const ENode* const* begin() const { return heap_.empty() ? inline_ : heap_.data(); }
  const ENode* const* end() const { return begin() + size_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const ENode* operator[](size_t i) const { return begin()[i]; }

 private:
  static constexpr size_t kInline = 4;
  const ENode* inline_[kInline] = {};
  size_t size_ = 0;
  std::vector<const ENode*> heap_;  // all of them, once more than kInline
};
// Nodes of class c with operator `sym` (canonical children), as they are now.
NodeList nodesOf(const EGraph& g, Id c, eg::Symbol sym);
// Attributes of a node as a list.
inline const AttrList& attrsOf(const ENode& n) { return eg::attrs(n.attrs); }

// The value of a 0-d constant class (a python scalar or a declared constant), else nullopt.
std::optional<double> scalarConstant(const EGraph& g, Id c);
// Whether dtype t represents the number c exactly (cast[t](c) == c; typed_const.cpp).
bool holdsExactly(DType t, double c);
// Search control: c is the identity operand of `sym` on its side (x + 0, 0 + x,
// x - 0, x * 1, 1 * x, x / 1). Moving such an operand through a rearrangement
// only copies a no-op onto every view of x; the identity lemmas remove it instead.
bool isIdentityOperand(const EGraph& g, eg::Symbol sym, Id c, bool onLeft);
// Search control: c is a tensor of zeros (slice_backward's padding) added to
// (or subtracted from) the other operand. add-zeros-* merges x + zeros into x,
// so x's class holds add(x, zeros); splitting that add over x's slices or
// concats pairs every tensor a slice of x came from with every tensor a slice
// of the zeros came from (sums that mean nothing to the search, each with
// slices of its own): the e-graph grows by the square per round.
bool isZeroTermOperand(const EGraph& g, eg::Symbol sym, Id c, bool onLeft);

// ---- building (tryAdd: ill-typed => nullopt) -------------------------------
// const[v]: a 0-d scalar constant.
Id makeConstant(EGraph& g, double v);
std::optional<Id> make(EGraph& g, eg::Symbol sym, const AttrList& attrs, std::vector<Id> children);
// The same for a braced attribute list ({Attr::integer(d)}, {}), interned where it stands: a
// vector of it per call was the check's most frequent allocation.
std::optional<Id> make(EGraph& g, eg::Symbol sym, std::initializer_list<Attr> attrs, std::vector<Id> children);
// A splat of v of type t (its dtype and concrete shape): expand[shape](cast[dtype](const v)),
// see ops::addSplat. nullopt for a symbolic shape.
std::optional<Id> makeSplat(EGraph& g, const TensorType& t, double v);
// slice[dim, start, end, 1] x; the full range gives x itself. Bounds may be
// symbolic Dims (type inference checks they are provably in range).
std::optional<Id> makeSlice(EGraph& g, Id x, int64_t dim, Dim start, Dim end);
// concat[dim] xs; one piece gives the piece itself.
std::optional<Id> makeConcat(EGraph& g, int64_t dim, const std::vector<Id>& xs);
// sum xs; one term gives the term itself.
std::optional<Id> makeSum(EGraph& g, const std::vector<Id>& xs);
// sum(op(a_i, b_i)) over equally long lists; nullopt when lengths differ or a term is ill-typed.
std::optional<Id> zipSum(EGraph& g, eg::Symbol op, const std::vector<Id>& as, const std::vector<Id>& bs);
// Maps f over the pieces; nullopt when any application fails.
std::optional<std::vector<Id>> mapPieces(const std::vector<Id>& xs, const std::function<std::optional<Id>(Id)>& f);
// The pieces of y along `dim` with the given sizes: the children of a
// concat[dim] node of y split exactly so, else (when allowSlices) new slices.
std::optional<std::vector<Id>> piecesOf(EGraph& g, Id y, int64_t dim, const std::vector<Dim>& sizes,
                                        bool allowSlices = true);
// y has a concat[dim] node split exactly into `sizes`.
bool hasConcatSplit(const EGraph& g, Id y, int64_t dim, const std::vector<Dim>& sizes);
// Splitting y along dy into pieces of `sizes` next to the pieces xs (along
// dx) would pair two windows of one tensor at different offsets (x[1:] - x[:-1]
// around a prepended concat): each such split only creates another shifted
// pair, so distributing over it never ends. Lemmas decline these splits.
bool shiftedSelfOverlap(const EGraph& g, const std::vector<Id>& xs, int64_t dx, Id y, int64_t dy,
                        const std::vector<Dim>& sizes);
// An elementwise op whose child `pos` is concat[d](xs) (list var "xs", attr
// var "d"; the other children are the class vars `args[k]`) distributed over
// the pieces: concat[D](op(.., x_i, ..)), each other operand broadcast along
// D (no such dim, or size 1) or split into pieces of the same sizes.
std::optional<Id> distributeOverConcat(EGraph& g, const Match& m, eg::Symbol sym, const AttrList& attrs,
                                       const std::vector<std::string>& args, size_t pos);
// The children xs with every child that holds an op(ys..) node (same op and,
// when `dim` is set, concat dim) replaced by ys; nullopt when nothing is nested.
// Used to flatten nested concat and sum.
std::optional<std::vector<Id>> spliceNested(const EGraph& g, const std::vector<Id>& xs, eg::Symbol sym,
                                            std::optional<int64_t> dim);
// attrs "?a0".."?a{n-1}" of a match, as a list (to rebuild the matched node).
AttrList boundAttrs(const Subst& s, size_t n);
// Pattern text for "(op[?a0, ...] child)" with n attribute variables.
std::string opPattern(const std::string& opName, size_t nAttrs, const std::string& child);

// Pieces of the attention mask m (right-aligned against the [B, H, L, S]
// scores) for pieces of `sizes` along scores dim d: m itself where it
// broadcasts along d, else its slices (sdpa.cpp).
std::optional<std::vector<Id>> maskPieces(EGraph& g, Id m, int64_t d, const std::vector<int64_t>& sizes);

// ---- rule constructors ------------------------------------------------------
using Guard = std::function<bool(const EGraph&, Subst&)>;
using Apply = std::function<std::optional<Id>(EGraph&, const Match&)>;
Lemma rewrite(std::string name, std::string doc, const std::string& lhs, const std::string& rhs, Guard guard = nullptr);
Lemma applier(std::string name, std::string doc, const std::string& lhs, Apply apply, Guard guard = nullptr);
// Declares that the lemma reads only its match (eg::Rule::local): its guard and applier read the
// data and e-nodes of the matched classes only, and build from them.
Lemma readsOnlyMatch(Lemma l);

// ---- the families -------------------------------------------------------------
void addRearrangeLemmas(std::vector<Lemma>& out);
void addSumLemmas(std::vector<Lemma>& out);
void addElementwiseLemmas(std::vector<Lemma>& out);
void addMatmulLemmas(std::vector<Lemma>& out);
void addNormLemmas(std::vector<Lemma>& out);
void addModelLemmas(std::vector<Lemma>& out);
void addSdpaLemmas(std::vector<Lemma>& out);
void addSdpaSequenceLemmas(std::vector<Lemma>& out);  // sdpa_sequence.cpp
void addSdpaMergeLemmas(std::vector<Lemma>& out);  // sdpa_merge.cpp
void addSdpaBackwardRingLemmas(std::vector<Lemma>& out);  // sdpa_backward_ring.cpp
void addSdpaBackwardSumLemmas(std::vector<Lemma>& out);  // sdpa_backward_sum.cpp
// c holds getitem(sdpa_backward(..)) or a sum of such (nested at most `depth` deep) (sdpa_backward_sum.cpp).
bool isAttentionBackwardSum(const EGraph& g, Id c, int depth = 4);
void addRegroupLemmas(std::vector<Lemma>& out);
void addVocabLemmas(std::vector<Lemma>& out);
void addScaleLemmas(std::vector<Lemma>& out);  // scale.cpp
void addArithLemmas(std::vector<Lemma>& out);
void addSelectLemmas(std::vector<Lemma>& out);
void addGqaLemmas(std::vector<Lemma>& out);
void addZeroLemmas(std::vector<Lemma>& out);
void addMoeLemmas(std::vector<Lemma>& out);  // moe.cpp
void addCompareLemmas(std::vector<Lemma>& out);  // compare.cpp
void addSignLemmas(std::vector<Lemma>& out);  // sign.cpp
void addEquivLemmas(std::vector<Lemma>& out);
void addRotaryLemmas(std::vector<Lemma>& out);  // rotary.cpp
void addArangeLemmas(std::vector<Lemma>& out);  // arange.cpp
void addTypedConstLemmas(std::vector<Lemma>& out);  // typed_const.cpp
void addAccumLemmas(std::vector<Lemma>& out);  // accum.cpp
void addPadSliceLemmas(std::vector<Lemma>& out);  // pad_slices.cpp

}  // namespace tangle::lemmas::detail
