// Relation files: the clean input relation R_i, expectations and run options.
//
// Syntax (one statement per line, `#` starts a comment; see README "Relation files"):
//
//   spec ../path/to/spec.py                # graph paths, relative to this file
//   impl ../path/to/fw.g0.r{rank}.py ranks 2  # {rank} is replaced by 0..ranks-1
//   S.x = concat(D0.x, D1.x, dim=0)        # input relation (one of several for S.x)
//   S.w = D*.w                             # D* = every rank: one relation per rank
//   S.a = shard(D*.a, dim=1)               # = concat(D0.a, ..., D{N-1}.a, dim=1)
//   S.p = sum(D*.p)                        # partial sums: sum over all ranks
//   S.y = slice(D0.y, dim=0, start=0, end=4)   # optional step=1
//   S.t = transpose(D1.t, 0, 1)   S.u = permute(D0.u, [1, 0, 2])   S.v = reshape(D0.v, [4, 8])
//   S.q = concat(shard(D*.q0, dim=0), D0.k, dim=0)  # expressions nest
//   const S._tensor_constant0 = 0          # a tensor holding a scalar constant
//   const D*._tensor_constant0 = 0
//   input S.tangents_21, D*.tangents_21    # cut points: treat these tensors as inputs
//   output S.mm_7                          # outputs of interest (default: the graph outputs)
//   expect S.div_2 = D*.div_2              # expectation (Entangle §4.4), one per rank
//   group 12 = 0 1                         # ranks of a process group (default: all ranks)
//   option max_iterations = 30             # run options (see RunOptions in src/infer)
//   lemmas my_ops.lemmas                   # a lemma file (docs/lemma-files.md), relative to this file
//   assume S.s0 == 2*D*.s0                 # a fact about symbolic sizes (==, <=, <, >=, >), one per rank
//   zero slice(D3.w, dim=0, start=1, end=3)  # zero padding in an implementation input
//
// Rank wildcards (D*) are expanded by `expand` once the rank count is known.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/error.h"

namespace tangle {

// Which graph a tensor name refers to.
struct TensorName {
  enum class Side { Spec, Impl } side = Side::Spec;
  int rank = 0;            // Impl only
  bool allRanks = false;   // D*: expanded by expand()
  std::string name;        // FX node name
  std::string toString() const;  // "S.x", "D1.x", "D*.x"
};

// An expression of the relation language.
struct RelExpr {
  enum class Kind { Tensor, Call, Int, Float, IntList } kind = Kind::Tensor;
  TensorName tensor;                                   // Kind::Tensor
  std::string op;                                      // Kind::Call: concat, shard, sum, slice, transpose, permute, reshape
  std::vector<RelExpr> args;                           // Kind::Call positional args
  std::vector<std::pair<std::string, RelExpr>> kwargs; // Kind::Call keyword args (dim=0)
  int64_t i = 0;                                       // Kind::Int
  double f = 0;                                        // Kind::Float
  std::vector<int64_t> ints;                           // Kind::IntList
  SourceLoc loc;
  // Defined in relation.cpp, where RelExpr is complete: `kwargs` holds pairs of
  // this type, which clang refuses to destroy or copy inline (fuzz/ builds with it).
  RelExpr();
  RelExpr(const RelExpr&);
  RelExpr(RelExpr&&) noexcept;
  RelExpr& operator=(const RelExpr&);
  RelExpr& operator=(RelExpr&&) noexcept;
  ~RelExpr();
  std::string toString() const;
  // Keyword argument `name` of a call, or nullptr when absent.
  const RelExpr* kwarg(std::string_view name) const;
};

struct RelationEntry {   // lhs = rhs  (lhs is a spec tensor)
  TensorName lhs;
  RelExpr rhs;
  SourceLoc loc;
};

struct Expectation {     // expect lhs = rhs; both sides are expressions
  RelExpr lhs;           // usually a spec tensor
  RelExpr rhs;           // over implementation tensors
  SourceLoc loc;
};

struct ConstantDecl {
  TensorName tensor;
  double value = 0;
  SourceLoc loc;
};

struct ZeroRegion {      // zero EXPR: the implementation tensors' region EXPR holds zeros (padding)
  RelExpr region;        // an impl input, or slice(...) of one
  SourceLoc loc;
};
struct Assumption {      // assume <lhs> <op> <rhs> over symbolic sizes, kept as text
  std::string lhs, op, rhs;  // op: "==", "<=", "<", ">=", ">"
  SourceLoc loc;
};

struct RelationFile {
  std::string path;
  std::optional<std::string> specPath;           // resolved relative to the file's folder
  std::optional<std::string> implPattern;        // may contain {rank}
  int implRanks = 0;                             // from `impl ... ranks N`; 0 = unset
  std::vector<RelationEntry> relations;
  std::vector<ConstantDecl> constants;
  std::vector<TensorName> cutInputs;             // `input` statements
  std::vector<SourceLoc> cutInputLocs;           // parallel to cutInputs
  std::vector<TensorName> outputs;               // `output` statements (spec tensors)
  std::vector<SourceLoc> outputLocs;             // parallel to outputs
  std::vector<Expectation> expectations;
  std::map<std::string, std::vector<int>> groups;
  std::map<std::string, SourceLoc> groupLocs;    // where each group was declared
  std::map<std::string, std::string> options;    // raw `option key = value`
  std::map<std::string, SourceLoc> optionLocs;   // where each option was set (for error messages)
  std::vector<std::string> lemmaPaths;           // `lemmas PATH` statements, resolved relative to the file
  std::vector<SourceLoc> lemmaLocs;              // parallel to lemmaPaths
  std::vector<Assumption> assumptions;           // `assume` statements
  std::vector<ZeroRegion> zeros;                 // `zero` statements

  // Impl paths for ranks 0..implRanks-1 (pattern with {rank} substituted).
  // A pattern without {rank} (one SPMD program, e.g. HLO) is repeated per rank.
  // Without `ranks N`: 1 path if there is no {rank}, else one per existing
  // file for ranks 0, 1, 2, ... (stops at the first missing one).
  std::vector<std::string> implPaths() const;
  // Replaces every D* by explicit ranks 0..nranks-1: a statement whose top
  // level names D*.x is repeated per rank; shard/sum over D* become
  // concat/sum over all ranks. Throws InputError if a rank >= nranks is named.
  RelationFile expand(int nranks) const;
};

// Parses a relation file. Throws InputError("file:line: ...") on syntax errors.
RelationFile parseRelationFile(const std::string& path);
RelationFile parseRelationText(const std::string& text, const std::string& path);

}  // namespace tangle
