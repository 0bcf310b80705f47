#include "driver/check.h"

#include <chrono>

#include "import/import.h"
#include "lemmas/lemmas.h"

namespace tangle {

namespace {
double secondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}
}  // namespace

std::unique_ptr<CheckRun> runCheck(const CheckRequest& req) {
  auto run = std::make_unique<CheckRun>();
  RelationFile raw = parseRelationFile(req.relationPath);
  std::string specPath = req.specPath ? *req.specPath : raw.specPath.value_or("");
  std::vector<std::string> implPaths = !req.implPaths.empty() ? req.implPaths : raw.implPaths();
  if (specPath.empty()) throw InputError({req.relationPath, 0}, "no spec graph: give `spec PATH` in the relation file or a SPEC argument");
  if (implPaths.empty())
    throw InputError({req.relationPath, 0}, "no implementation graphs: give `impl PATTERN ranks N` in the relation file or --impl");

  InferOptions options = inferOptionsFrom(raw);  // bad options fail before any graph is read
  auto t0 = std::chrono::steady_clock::now();
  run->spec = importGraph(specPath);
  for (auto& p : implPaths) run->impl.push_back(importGraph(p));
  run->info.importSeconds = secondsSince(t0);
  run->info.relationPath = req.relationPath;
  run->info.specPath = specPath;
  run->info.implPaths = implPaths;

  run->relation = raw.expand(static_cast<int>(implPaths.size()));
  LowerOptions lo;
  lo.groups = run->relation.groups;
  for (auto& t : run->relation.cutInputs) {
    if (t.side == TensorName::Side::Spec) lo.cutSpec.push_back(t.name);
    else lo.cutImpl.push_back({t.rank, t.name});
  }
  run->specL = std::make_unique<LGraph>(lowerSpec(run->spec, lo));
  run->implL = std::make_unique<LGraph>(lowerImpl(run->impl, lo));
  checkAnnotatedShapes(*run->specL);
  checkAnnotatedShapes(*run->implL);

  Problem p{run->specL.get(), run->implL.get(), &run->relation};
  run->result = inferRelations(p, lemmas::allLemmas(), options);
  if (req.replay) run->replay = replay::replayCheck(*run->specL, *run->implL, run->relation, run->result, *req.replay);
  return run;
}

int exitCodeOf(Verdict v) {
  switch (v) {
    case Verdict::Refines: return 0;
    case Verdict::Violation: return 1;
    case Verdict::Inconclusive: return 3;
  }
  return 1;
}

}  // namespace tangle
