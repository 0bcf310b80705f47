// Rules for the rank wildcard D* (internal to src/relation).
//
// A D* tensor is legal in exactly two places:
//  * as a whole side of a statement (`S.w = D*.w`, `expect S.a = D*.a`,
//    `const D*.c = 0`, `input D*.t`): the statement is repeated per rank, and
//    every other free D* in it means that same rank;
//  * inside shard(...) or sum(...), which range over all ranks themselves.
// Anywhere else (a plain concat, slice, ...) it is ambiguous and rejected.
#pragma once

#include <string>

#include "relation/relation.h"

namespace tangle::rel {

inline bool isStarTensor(const RelExpr& e) {
  return e.kind == RelExpr::Kind::Tensor && e.tensor.allRanks;
}

// True if `e` names D* outside any shard/sum of its own.
bool hasFreeStar(const RelExpr& e);

// Throws InputError at the offending tensor when a D* is misplaced.
// `perRank`: the enclosing statement is repeated per rank.
void checkStars(const RelExpr& e, bool perRank);

}  // namespace tangle::rel
