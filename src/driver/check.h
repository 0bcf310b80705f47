// One verification run, from file paths to a result, in three stages:
//   prepareCheck  read every input once (the relation file, lemma files,
//                 graphs), gather the facts about symbolic sizes, lower;
//   infer         inferRelations over the prepared problem;
//   replay        optionally, run the result on random inputs (--replay).
// Used by the CLI and the benchmarks; throws InputError for bad input.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "egraph/rewrite.h"
#include "graph/graph.h"
#include "infer/infer.h"
#include "relation/relation.h"
#include "replay/replay.h"
#include "report/report.h"
#include "sym/context.h"

namespace tangle {

struct CheckRequest {
  std::string relationPath;
  std::optional<std::string> specPath;   // overrides the relation file's `spec`
  std::vector<std::string> implPaths;    // overrides the relation file's `impl` when non-empty
  std::optional<replay::ReplayOptions> replay;  // set: replay the result on random inputs (--replay)
  // Lemma files (docs/lemma-files.md), besides the relation file's `lemmas`
  // statements. Their lemmas are validated first (a wrong one: InputError
  // "FILE:LINE: error: lemma NAME is wrong: ...") and then used with the built-ins.
  std::vector<std::string> lemmaPaths;
  bool trustUnvalidated = false;   // use lemmas that cannot be validated (opaque ops), with a warning
  size_t lemmaCases = 6;           // validation instances per file lemma (quick)
  // Progress of inference (InferOptions::onOperator); the spec LGraph names the node.
  std::function<void(size_t done, size_t total, const LGraph& spec, int specNode)> onOperator;
  std::vector<std::string> options;  // "KEY=VALUE" (--option): set over the relation file's `option` statements
  // Lemmas (built-in or from a lemma file) left out of this check (--without-lemma): to
  // reproduce a gap, e.g. for lemma synthesis. An unknown name is an InputError.
  std::vector<std::string> withoutLemmas;
  size_t jobs = 1;                   // threads (--jobs): the same verdict, relations and report for every value
};

// Everything inference needs, read and checked. It owns the check's
// symbolic-size context: the facts (assumptions, input relations' shapes,
// collectives' equal sizes) are all known once it is prepared, and every
// e-graph of the check refers to `symbols`. Not movable: the LGraphs point
// into `spec` and `impl`.
struct PreparedCheck {
  PreparedCheck() = default;
  PreparedCheck(const PreparedCheck&) = delete;
  PreparedCheck& operator=(const PreparedCheck&) = delete;

  RelationFile relation;                 // parsed once, expanded to the rank count
  InferOptions options;                  // the relation file's `option` statements
  std::vector<eg::Rule> fileRules;       // lemmas of the lemma files (validated), used with the built-ins
  std::vector<std::string> withoutLemmas;  // left out (CheckRequest::withoutLemmas), names checked
  std::string lemmaWarnings;             // one line per trusted unvalidated file lemma (print to stderr)
  size_t fileLemmas = 0;                 // lemmas loaded from lemma files
  Graph spec;
  std::vector<Graph> impl;
  std::unique_ptr<LGraph> specL, implL;
  // What is known of the symbolic sizes; the verdict holds under these facts.
  std::unique_ptr<sym::Context> symbols = std::make_unique<sym::Context>();
  RunInfo info;

  Problem problem() const { return Problem{specL.get(), implL.get(), &relation, symbols.get()}; }
};

std::unique_ptr<PreparedCheck> prepareCheck(const CheckRequest& req);

struct CheckRun {
  std::unique_ptr<PreparedCheck> prepared;
  InferResult result;
  std::optional<replay::ReplayReport> replay;  // when requested
};

std::unique_ptr<CheckRun> runCheck(const CheckRequest& req);

// Process exit code of a verdict: 0 refines, 1 violation, 3 inconclusive.
int exitCodeOf(Verdict v);

}  // namespace tangle
