// Evaluation of e-graph terms (relations found by inference, relation-file
// expressions) on tensor values, and their shapes.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "egraph/extract.h"
#include "interp/interp.h"
#include "lower/lower.h"
#include "relation/relation.h"

namespace tangle::replay {

// Value of a leaf tensor by name ("S.x", "D0.x") in the graph of `owner`; nullptr when unknown.
using LeafValues = std::function<const interp::Value*(const std::string& name, Owner owner)>;

// Name of a tensor leaf node, or nullptr for other nodes.
const std::string* leafName(const eg::Term::Node& n);

// The value of a term; nullopt (with `error` set) when a leaf has no value
// or an op does not accept its inputs.
std::optional<interp::Value> evalTerm(const eg::Term& t, const LeafValues& leaves, std::string* error = nullptr);

// A relation-language expression as a term (dims normalized, slice bounds
// clamped), through the same translation inference uses. Throws InputError.
eg::Term termOf(const RelExpr& e, const LGraph& spec, const LGraph& impl);

}  // namespace tangle::replay
