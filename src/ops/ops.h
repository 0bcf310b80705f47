// The canonical operator vocabulary of e-nodes. Every operator is one record
// (OpDef, in op_table.cpp): its name, attribute schema, cleanliness (Entangle
// §3.2: pure rearrangement or cross-rank sum), type rule, reference kernel,
// attribute sampler for lemma validation, and the ATen ops lowered to it
// one-to-one. ATen calls are translated to this vocabulary by src/lower;
// lemmas are written over it. Adding an operator is adding its record (and
// its lemmas): see docs/adding-an-operator.md.
//
// Any other ATen call keeps its full name as op (e.g.
// "aten.native_dropout.default") with its non-tensor arguments as
// attributes: opaque, with its type taken from the graph annotation.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <random>
#include <string>
#include <vector>

#include "egraph/egraph.h"
#include "interp/interp.h"

namespace tangle::ops {

// Type of the result from the children's data and the attributes; nullopt =
// ill-typed (wrong ranks, mismatching dims, bad attrs).
using TypeRule = std::optional<eg::ClassData> (*)(const eg::EGraph&, const eg::ENode&);

// What an attribute sampler sees when lemma validation instantiates a
// pattern: the node's children (built first) and the attempt's randomness.
struct AttrSampling {
  std::mt19937_64& rng;
  std::function<int64_t()> size;                 // a size from the attempt's small alphabet
  std::vector<const eg::ClassData*> children;
  int64_t uniform(int64_t lo, int64_t hi);       // inclusive
  bool chance(double p);
  const std::vector<Dim>* shape(size_t i) const;  // child i's shape when it is a tensor
};
// Attribute `pos` of a new node whose attributes [0, pos) are `filled`;
// nullopt when no valid value exists for these children.
using AttrSampler = std::optional<eg::Attr> (*)(AttrSampling&, size_t pos, const eg::AttrList& filled);

struct OpDef {
  const char* name;
  // Attribute schema: space-separated `name:kind`, kind one of int, dim (a
  // size, maybe symbolic), ints, real, bool, str, number (int or real); ""
  // for none. A trailing `?` marks an optional attribute.
  const char* attrs;
  bool clean;                  // may appear in a clean relation
  TypeRule type;
  interp::Kernel eval;         // reference semantics; nullptr only for the tensor leaf
  interp::GatherFn gather;     // pure rearrangements: the result as a gather of the inputs
  AttrSampler sample;          // nullptr iff the op has no attributes
  const char* aten;            // ATen ops (space-separated) lowered one-to-one: tensor operands in order, no attributes
};

// Every built-in operator, in table order.
const std::vector<const OpDef*>& allOps();
// Registry lookup; nullptr for opaque (and custom) ops.
const OpDef* find(eg::Symbol op);

// One attribute of a schema.
struct AttrSpec {
  std::string name, kind;
  bool optional = false;
};
std::vector<AttrSpec> attrSchema(const OpDef& op);
// True when `a` fits the op's schema (count and kinds).
bool fitsSchema(const OpDef& op, const eg::AttrList& a);

// The DataFn for EGraph: known ops are inferred; leaves and opaque ops give
// nullopt from tryAdd's point of view only when a known op is ill-typed.
// (Leaves get their data from EGraph::leaf; opaque ops get an empty ClassData.)
std::optional<eg::ClassData> inferData(const eg::EGraph& g, const eg::ENode& n);

// The child class `n` is the identity of, when plainly so from its attributes and its
// child's type: a reshape to the child's own shape, transpose[a,a], permute[0..n-1], a
// one-piece concat. The e-graph's IdentityFn (inference e-graphs install it), so that
// such a node never becomes a self-loop in its child's class.
std::optional<eg::Id> identityChild(const eg::EGraph& g, const eg::ENode& n);

// The value of `n` given its children's values (its record's kernel, or a
// custom op's semantics). nullopt when the op has no reference semantics
// (tensor leaves, opaque calls) or the inputs do not fit.
std::optional<interp::Value> evaluate(const eg::ENode& n, const std::vector<interp::Value>& children);
// True when evaluate knows the op.
bool hasKernel(eg::Symbol op);
// The gather of a pure rearrangement node (nullopt for other ops or inputs that do not fit).
std::optional<interp::Gather> gatherOf(const eg::ENode& n, const std::vector<interp::Shape>& childShapes);
bool isGatherOp(eg::Symbol op);

// Custom operators (lemma files, src/lemmas/lemma_file.h): an op given a
// meaning by a user definition gets its type and semantics from these
// instead of being opaque. Registering a name again replaces it. Not
// thread-safe: register before any e-graph is built.
using CustomInfer = std::function<std::optional<eg::ClassData>(const eg::EGraph&, const eg::ENode&)>;
using CustomEval = std::function<std::optional<interp::Value>(const eg::ENode&, const std::vector<interp::Value>&)>;
void registerCustomOp(eg::Symbol op, CustomInfer infer);
void registerCustomEval(eg::Symbol op, CustomEval eval);
bool isCustomOp(eg::Symbol op);

// True for the clean ops and for implementation tensor leaves.
bool isCleanNode(const eg::ENode& n);

// The name of a tensor["S.x"] leaf (an e-node's or a term node's op and
// attrs), else nullptr.
const std::string* tensorName(eg::Symbol op, eg::AttrsId attrs);
inline const std::string* tensorName(const eg::ENode& n) { return tensorName(n.op, n.attrs); }
// The graph of a tensor leaf, else nullopt.
std::optional<Owner> tensorOwner(eg::Symbol op, eg::AttrsId attrs);
inline std::optional<Owner> tensorOwner(const eg::ENode& n) { return tensorOwner(n.op, n.attrs); }
// The attributes of a tensor leaf: [Str name, Int owner.rank].
eg::AttrsId tensorAttrs(std::string_view name, Owner owner);
eg::AttrsId tensorAttrs(eg::Symbol name, Owner owner);  // `name` interned
// tensorAttrs(names[k], owners[k]) into out[k], for many leaves at once (eg::internAttrsAll).
void tensorAttrsAll(std::span<const eg::Symbol> names, std::span<const Owner> owners, eg::AttrsId* out);

// A splat of the number v of dtype dt, shaped `shape`: expand[shape](cast[dt](const v))
// (cast[dt](const v) when 0-d). A bare const has no dtype, so expand of it alone would be one
// class for every dtype: an f16 tensor of zeros and an f32 one would merge through it. dt
// Unknown (an untyped graph) gives expand[shape](const v). nullopt when ill-typed.
std::optional<eg::Id> addSplat(eg::EGraph& g, DType dt, const std::vector<int64_t>& shape, double v);

// The interned symbol of every built-in operator, for code that names one.
struct Syms {
  eg::Symbol tensor, constant, slice, concat, transpose, permute, reshape, sum, getitem, split, expand;
  eg::Symbol add, sub, mul, div, neg, exp, log, gelu, silu, relu, tanh, sigmoid, rsqrt, sqrt, powScalar, cast;
  eg::Symbol logSigmoid, mm, bmm, matmul;
  eg::Symbol sumDim, meanDim, amax, softmax, layerNorm, apexLayerNorm;
  eg::Symbol dropout, where, lt, le, gt, ge, eq, ne, logicalOr, logicalAnd, indexRows, gatherRows, maxDim,
      geluBackward, rmsNorm, rotary, attention, apexLayerNormBwd, rmax, rmin, sdpa, sdpaBackward, safeSoftmax;
};
const Syms& syms();

}  // namespace tangle::ops
