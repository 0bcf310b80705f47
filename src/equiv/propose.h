// Relations between two frameworks' tensors proposed from their VALUES on the
// same input (Emerge's value-driven candidates): `tangle propose`.
//
// Both graphs were run on one random input at capture time and every tensor's
// value recorded (python/tangle/vllm_capture.py writes STEM.values.json). For
// each spec tensor that needs a relation -- every input, and the
// intermediates the user asks for (cut points) -- this finds an implementation tensor and a rearrangement
// (equal, reshape, transpose, slice, concat of two copies) whose values agree.
// The result is relation-file text for the user to review; the checker then
// proves everything downstream of it. A proposal is only a hint: a tensor whose
// values cannot tell candidates apart (constant values, or several matches) is
// reported as ambiguous rather than guessed.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tangle::equiv {

struct Tensor {
  std::vector<int64_t> shape;
  std::vector<double> data;
  std::string kind;           // placeholder, get_attr, call_function
  bool dataDependent = true;  // reads the token ids (directly or not)
  bool feedsData = true;      // is the token ids or read by an operator that depends on them
  std::vector<std::string> inputs;  // the tensors its operator reads
  std::string source;               // the model source line it comes from
};

struct Values {
  std::string graph;                    // the graph file these values belong to
  std::vector<std::string> order;       // tensor names in graph order
  std::map<std::string, Tensor> tensors;
  std::vector<std::string> frontier;    // constant-only tensors a data-dependent operator reads
};

// Reads STEM.values.json; throws InputError naming the file on bad input.
Values readValues(const std::string& path);

struct Proposal {
  std::string spec;        // spec tensor name (without S.)
  std::string expr;        // relation expression over D0 tensors, empty when none found
  std::string note;        // what matched / why none (one line)
  bool cut = false;        // an intermediate taken as given (computed from constants only)
  bool evaluated = false;  // computed from constants alone: left to the checker's exact evaluation
};

// Spec tensors that need a relation: inputs (placeholders); spec.frontier (computed from constants
// alone) is listed with a note only, the checker relating it by exact evaluation.
// extra: spec intermediates to relate as well (cut points the user asks for, e.g. to check one segment).
std::vector<Proposal> propose(const Values& spec, const Values& impl, double tol = 1e-6,
                              const std::vector<std::string>& extra = {});

// The relation file text: spec/impl lines, then one statement per proposal.
std::string relationText(const std::vector<Proposal>& ps, const std::string& specGraph, const std::string& implGraph,
                         const std::map<std::string, std::string>& specNames,
                         const std::map<std::string, std::string>& implNames);

// Emerge's failure localization, from values: the first spec tensor (graph order) computed from the
// data whose values no implementation tensor holds up to a rearrangement (same multiset of values),
// and nothing computed from it does either (an intermediate only one framework materializes, such as
// HF's q * cos, is not a divergence when its consumers meet the implementation again); with the
// implementation tensor of its size that reads the counterparts of its inputs (where the other
// framework should have computed it). A diagnosis from one input, not a proof.
struct Divergence {
  std::string spec, impl;              // impl empty when no candidate reads the matched inputs
  std::string specSource, implSource;  // model source lines
  std::vector<std::string> matchedInputs;  // "S.x ~ D0.y"
};
std::optional<Divergence> firstDivergence(const Values& spec, const Values& impl, double tol = 1e-5);
std::string divergenceText(const Divergence& d, const std::string& specGraph, const std::string& implGraph);

}  // namespace tangle::equiv
