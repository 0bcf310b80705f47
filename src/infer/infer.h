// Entangle's relation inference (ASPLOS'26 §4, Listings 1-3).
//
// For every spec operator in topological order: express its output over
// implementation tensors through the relations known for its inputs (all of
// them at once: the spec input leaf is merged with each of its relations),
// saturate with lemmas, add the implementation nodes related to it (T_rel
// exploration, Listing 3) and keep the clean expressions of its output. The
// first operator whose output has no clean expression is the violation.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "egraph/extract.h"
#include "egraph/rewrite.h"
#include "lower/lower.h"
#include "relation/relation.h"

namespace tangle {

struct InferOptions {
  size_t maxIterations = 30;        // lemma iterations per exploration round
  size_t maxNodes = 200000;         // e-nodes per operator's e-graph
  double operatorSeconds = 60;      // CPU seconds per spec operator (of the thread searching it)
  double totalSeconds = 1800;       // CPU seconds of the whole run (all threads); past it: inconclusive
  size_t maxRelationsPerTensor = 8; // clean expressions kept per spec tensor (smallest first)
  // Besides those, the clean expressions over each rank's tensors alone kept
  // per rank: a replicated value keeps its relations on every rank, however
  // many equal copies each rank computes (each rank's chain is explored from them).
  size_t maxRelationsPerRank = 4;
  // A spec intermediate with no clean relation (e.g. a mask over the full
  // vocabulary that no rank computes) may be carried as a non-clean
  // expression over implementation tensors for up to this many consecutive
  // operators, waiting for a consumer that is clean again (e.g. the masked
  // lookup the mask feeds). Outputs must always be clean; 0 disables this.
  size_t maxDeferred = 8;
  // Called before each spec operator is searched, with the operators done so
  // far, their total and the spec LNode about to be searched (progress lines).
  std::function<void(size_t done, size_t total, int specNode)> onOperator;
  // Give a spec operator the relations of an earlier one whose e-graph it
  // repeats up to renaming (repeated layers; src/infer/reuse.cpp) instead of
  // searching. `option reuse = 0` turns it off.
  bool reuse = true;
  // Block search (src/infer/blocks.cpp): an operator whose inputs are related as concats of at
  // least blockMin pieces along one dim (data-parallel replicas x microbatches) is searched on one
  // block of them, the result renamed onto the others and assembled. `option block_min = 0`
  // turns it off.
  size_t blockMin = 4;
  // Rearrangement folding of the implementation graph (src/lower/fold_rearrange.h);
  // `option fold = 0` turns it off.
  bool fold = true;
  // Threads (--jobs): above 1, reuse's soundness gate runs on a second
  // thread behind the walk (reuse_pipeline.h) and, with concrete sizes, a
  // third searches operators ahead of the walk (search_ahead.h). The result is the same.
  size_t jobs = 1;
};

// Parses `option key = value` entries into options; unknown keys are InputErrors.
InferOptions inferOptionsFrom(const RelationFile& rel);

struct Problem {
  const LGraph* spec = nullptr;
  const LGraph* impl = nullptr;
  const RelationFile* relation = nullptr;  // expanded to the implementation's rank count
  // What is known of the symbolic sizes (the e-graphs' context); null: nothing.
  const sym::Context* symbols = nullptr;
};

enum class Verdict { Refines, Violation, Inconclusive };
const char* toString(Verdict v);

struct TensorRelations {
  int node = -1;                  // spec LNode
  std::string tensor;             // "S.x"
  std::vector<eg::Term> exprs;    // clean expressions, smallest first
  bool deferred = false;          // exprs is one non-clean expression (InferOptions::maxDeferred)
  int reusedFrom = -1;            // spec operator whose relations were renamed for it (reuse), else -1
};

struct Failure {
  int node = -1;                  // the spec operator (for a getitem: the tuple producer)
  int tensor = -1;                // the spec tensor left without a clean relation
  int gaveUpAt = -1;              // when deferred: the operator where the search stopped
  bool limitReached = false;      // the search stopped at a limit: inconclusive, not a violation
  std::string reason;
  std::vector<TensorRelations> inputRelations;  // known relations of the operator's inputs
  std::vector<int> nearbyImpl;    // implementation nodes explored for it (closest first)
  size_t enodes = 0;
};

struct ExpectationResult {
  const Expectation* expectation = nullptr;
  bool holds = false;
  bool limitReached = false;      // not shown to hold and the search stopped at a limit: inconclusive
  std::vector<eg::Term> known;    // clean relations of the lhs that were found
};

struct InferStats {
  double seconds = 0;
  size_t specOps = 0, implOps = 0, opsProcessed = 0;
  size_t enodesMax = 0, enodesTotal = 0;
  size_t exploredImplNodes = 0;
  size_t operatorsReused = 0;   // given an earlier operator's relations, renamed (reuse.cpp)
  size_t operatorsBlocked = 0;  // searched block by block (blocks.cpp)
  bool reuseRerun = false;      // the verdict was not `refines` after reuse: recomputed without it
  bool blocksRerun = false;     // the same after a block search
  std::map<std::string, size_t> firings;
  std::vector<std::string> conflicts;
  // Dims that merges showed equal (EGraph::mergedSizes), with the spec
  // operator whose search merged them; the driver learns those of unbacked symbols.
  struct MergedSize {
    int64_t a = 0, b = 0;
    int specNode = -1;
  };
  std::vector<MergedSize> mergedSizes;
};

// A relation between closed constant tensors, proved by evaluating both
// (src/infer/closed.h): S.x = D_r.y, or reshape(D_r.y, shape) when the
// values agree in row-major order under another shape.
struct EvaluatedRelation {
  std::string spec;        // "S.where"
  eg::Term expr;           // over one implementation tensor
  std::string type;        // "f32[1, 1, 8, 8]"
  int64_t elements = 0;
};

struct InferResult {
  Verdict verdict = Verdict::Refines;
  // Closed spec tensors the walk reads, related by evaluation instead of searched.
  std::vector<EvaluatedRelation> evaluated;
  // Closed spec tensors the walk reads that were not evaluated, and why (an
  // operator that may round, a symbolic size, the element cap, no equal value).
  std::vector<std::string> notEvaluated;
  std::vector<TensorRelations> outputs;           // R_o: one entry per spec output of interest
  std::vector<TensorRelations> all;               // every spec tensor processed, in order (R)
  std::optional<Failure> failure;
  std::vector<ExpectationResult> expectations;
  std::vector<const Expectation*> uncheckedExpectations;  // when a failure stopped inference first
  InferStats stats;
};

InferResult inferRelations(const Problem& p, const std::vector<eg::Rule>& lemmas, const InferOptions& opts);

// A clean term in relation-file syntax: concat(D0.x, D1.x, dim=0), sum(...), D0.y.
std::string formatTerm(const eg::Term& t);

}  // namespace tangle
