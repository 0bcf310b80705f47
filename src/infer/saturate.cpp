// Saturation (Listing 1): the lemmas rewrite the operator's e-graph until
// nothing changes or a limit is reached (iterations, e-nodes, the time left
// of the operator's budget). Reaching a limit makes a failure inconclusive.
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "infer/operator_search.h"

namespace tangle {

void saturate(const InferState& st, OperatorSearch& s, InferStats& stats) {
  eg::RunLimits limits;
  limits.maxIterations = st.opts.maxIterations;
  limits.maxNodes = st.opts.maxNodes;
  limits.maxSeconds = std::max(0.01, st.opts.operatorSeconds - s.cpuSpent());
  // Between two saturations of one search the e-graph only gains nodes and merges (all logged),
  // under the same lemmas and size facts: the run resumes where the last one found nothing to do.
  eg::RunReport rep = eg::run(s.g, st.lemmas, limits, s.saturatedAt, &st.lemmaIndex);
  s.saturatedAt = rep.saturatedAt;
  // Only the lemmas that fired (inferOnce lists every lemma once): adding every lemma's zero was a
  // name lookup per lemma and search.
  for (size_t i = 0; i < rep.firings.size(); ++i)
    if (rep.firings[i]) stats.firings[st.lemmas[i].name] += rep.firings[i];
  // Developer aid: TANGLE_TRACE_SATURATE=1 prints every saturation (a search saturates once per batch).
  static const bool trace = std::getenv("TANGLE_TRACE_SATURATE") != nullptr;
  if (trace)
    std::fprintf(stderr, "saturate: %zu e-nodes, %zu iterations, %.4f CPU s, %s\n", s.g.numNodes(), rep.iterations,
                 rep.seconds, eg::toString(rep.stop));
  if (rep.stop != eg::StopReason::Saturated) s.limitHit = true;
  s.clean = cleanRelations(st, s.g, s.root);
}

}  // namespace tangle
