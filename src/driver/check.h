// One verification run, from file paths to a result: import the graphs,
// parse and expand the relation file, lower, infer. Used by the CLI and the
// benchmarks; throws InputError for bad input.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "infer/infer.h"
#include "relation/relation.h"
#include "replay/replay.h"
#include "report/report.h"

namespace tangle {

struct CheckRequest {
  std::string relationPath;
  std::optional<std::string> specPath;   // overrides the relation file's `spec`
  std::vector<std::string> implPaths;    // overrides the relation file's `impl` when non-empty
  std::optional<replay::ReplayOptions> replay;  // set: replay the result on random inputs (--replay)
};

struct CheckRun {
  RelationFile relation;                 // expanded to the rank count
  Graph spec;
  std::vector<Graph> impl;
  std::unique_ptr<LGraph> specL, implL;
  InferResult result;
  RunInfo info;
  std::optional<replay::ReplayReport> replay;  // when requested
};

std::unique_ptr<CheckRun> runCheck(const CheckRequest& req);

// Process exit code of a verdict: 0 refines, 1 violation, 3 inconclusive.
int exitCodeOf(Verdict v);

}  // namespace tangle
