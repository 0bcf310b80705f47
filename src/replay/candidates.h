// Internal to src/replay: the implementation tensors a failing spec operator's
// output should correspond to, for a counterexample. From the implementation
// nodes inference explored for it (closest first) and the tensors named like
// the spec tensor, each name taken on every rank: the tensor of one rank, the
// sum over ranks, and the concatenation over ranks along each dim, whenever
// the shape is the spec tensor's.
#pragma once

#include <string>
#include <vector>

#include "egraph/extract.h"
#include "infer/infer.h"
#include "lower/lower.h"

namespace tangle::replay::detail {

struct Candidate {
  eg::Term term;
  std::string text;  // relation-file syntax
};

struct Candidates {
  std::vector<Candidate> sameShape;     // closest first
  std::vector<std::string> otherShapes; // "D0.mm [2, 3]" for tensors considered but of another shape
};

Candidates candidatesFor(const LGraph& spec, const LGraph& impl, const Failure& f, size_t limit = 24);

}  // namespace tangle::replay::detail
