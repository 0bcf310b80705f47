// Signatures of the relation language's ops (internal to src/relation).
#pragma once

#include <string_view>

#include "relation/relation.h"

namespace tangle::rel {

bool isKnownOp(std::string_view op);

// Checks a parsed call against its op's signature: argument count, kinds
// (tensor expression, integer, integer list), required/unknown/duplicate
// keywords, and simple value constraints. Throws InputError at call.loc.
void checkCall(const RelExpr& call);

}  // namespace tangle::rel
