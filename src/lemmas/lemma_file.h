// Lemma files: user-written lemmas for custom or fused operators (Entangle
// §6.5), one statement per line (`#` starts a comment; a statement continues
// while its parentheses are open). See docs/lemma-files.md.
//
//   define (aten.leaky_relu.default["<tensor>", ?s] ?x) = (where (gt ?x (const[0])) ?x (mul ?x (const[?s])))
//   opaque aten.my_fused.default
//   lemma leaky-concat: (aten.leaky_relu.default["<tensor>", ?s] (concat[?d] ?a ?b))
//                    => (concat[?d] (aten.leaky_relu.default["<tensor>", ?s] ?a) (aten.leaky_relu.default["<tensor>", ?s] ?b))
//   lemma name: LHS => RHS if ?d != ?e, ?d < 3      # conditions over integer attr variables
//
// A `define` gives an operator (matched by the pattern's root op, attrs and
// arity) a meaning as a term over canonical ops: type inference and the
// reference interpreter expand it, so lemmas about it are validated against
// it. The op itself stays in the e-graph (it is NOT expanded at
// canonicalization: then lemmas over it could never fire). The definition is
// trusted: it is the user's claim about what the op computes.
// An `opaque` op has no meaning: lemmas mentioning it cannot be validated.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "egraph/rewrite.h"
#include "lemmas/lemmas.h"
#include "support/error.h"

namespace tangle::lemmas {

struct CustomOpDef {
  std::string op;                // root operator of `head`
  bool opaque = false;           // `opaque OP`: no head/body
  std::optional<eg::Pattern> head;  // (op[attrs] ?x ...): binds the parameters
  std::optional<eg::Pattern> body;  // canonical term over the head's variables
  SourceLoc loc;
};

// One `if` condition: ?a OP ?b or ?a OP 3 (integer attribute values), where
// an operand may also be ?x:k, the size of dim k of the e-class ?x, or
// ?x:rank, its rank (shape side conditions, e.g. `?b:0 == ?w:1, ?b:rank == 1`).
struct LemmaCondition {
  enum class Cmp { Eq, Ne, Lt, Le, Gt, Ge } cmp = Cmp::Eq;
  std::string lhs;                 // attr variable, or class variable when lhsDim >= 0 (no '?')
  std::optional<std::string> rhsVar;
  int64_t rhsInt = 0;
  int lhsDim = -1, rhsDim = -1;    // >= 0: the variable is an e-class, compare the size of this dim
};
constexpr int kRankDim = -2;       // LemmaCondition::lhsDim/rhsDim of ?x:rank (the e-class's rank)

struct FileLemma {
  Lemma lemma;
  SourceLoc loc;
  std::vector<LemmaCondition> conditions;
  std::vector<std::string> opaqueOps;  // opaque ops it mentions: cannot be validated
};

struct LemmaFile {
  std::string path;
  std::vector<CustomOpDef> ops;
  std::vector<FileLemma> lemmas;
  // The rules, ready for eg::run.
  std::vector<eg::Rule> rules() const;
  const FileLemma* find(const std::string& name) const;
};

// Throws InputError("file:line: error: ...") for bad syntax, a bad pattern, a
// variable of the right side or a condition the left side does not bind, a
// duplicate lemma name or one of a built-in lemma, a define of a canonical op,
// a define body using an undefined custom op.
LemmaFile parseLemmaFile(const std::string& path);
LemmaFile parseLemmaText(const std::string& text, const std::string& path);
// Lemmas of several files; throws InputError for a name defined in two files.
LemmaFile mergeLemmaFiles(std::vector<LemmaFile> files);

// Registers type inference for every defined op (ops::registerCustomOp): the
// type of op(children) is the type of the body instantiated over them.
void registerCustomOpTypes(const LemmaFile& file);

// A define instantiated in a fresh e-graph whose leaves "$0", "$1", ... stand
// for the node's children (with the data `childData`). nullopt when the
// node's attrs/arity do not fit the head (the node is not covered: opaque);
// `root` is nullopt when the body is ill-typed for these children. Used by
// inference (with the inferring e-graph's `symbols`, which must outlive the
// expansion) and by the interpreter hook (src/validate; concrete sizes, null:
// an empty context).
struct Expansion {
  std::unique_ptr<eg::EGraph> graph;
  std::optional<eg::Id> root;
};
std::optional<Expansion> expandDefinition(const CustomOpDef& def, const eg::ENode& n,
                                          const std::vector<eg::ClassData>& childData,
                                          const sym::Context* symbols = nullptr);

}  // namespace tangle::lemmas
