// The HTML report of a check (tangle check REL --html OUT.html): one
// self-contained page (no script, no network): the verdict, the output
// relation of a refinement, the stats, and for a violation the failing
// operator's neighbourhood drawn by Graphviz (report/neighbourhood.h) with the
// known relations of its inputs and the model source lines.
#pragma once

#include <string>

#include "infer/infer.h"
#include "report/report.h"

namespace tangle {

// `textReport`: the text the CLI printed, included at the end of the page.
std::string htmlReport(const InferResult& r, const LGraph& spec, const LGraph& impl, const RunInfo& info,
                       const std::string& textReport);

}  // namespace tangle
