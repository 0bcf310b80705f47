// What one check knows about its symbolic integers, and the questions it
// can answer about them (the paper's section 5, "Handling Symbolic Scalars").
//
// Facts come from the user (`assume` statements of a relation file) and from
// the programs themselves: a spec input rebuilt by an input relation has the
// shape of that expression, and a collective needs equal shapes on every
// rank. An equality that can be solved for a variable (unit coefficient,
// linear) becomes a substitution, so afterwards canon() gives equal values
// one ExprId and plain id comparison sees them equal; the other facts go to
// Z3, which answers proveEqual/proveLE when the normal form cannot.
//
// Every symbolic tensor size is >= 0; that fact is always present.
// A proof that Z3 does not finish counts as not proved: guards refuse.
//
// A check owns one Context and passes it explicitly: the e-graph holds a
// const reference (EGraph::symbols()) through which type rules and lemma
// guards ask their questions; only the driver's preparation step (and the
// lowering of collectives) adds facts. Questions are const: they only fill
// caches. A Context is not thread-safe; two checks use two Contexts.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "sym/expr.h"

namespace z3 {
class solver;
}

namespace tangle::sym {

class Context {
 public:
  Context();
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  // Adds a == b. Returns false when it contradicts what is known (then
  // nothing is added and `why` says what it contradicts). `origin` says where
  // the fact comes from, for reports ("assume at check.rel:7").
  bool assumeEqual(ExprId a, ExprId b, std::string* why, const std::string& origin = {});
  // Adds a <= b (a < b with strict). Returns false when it contradicts.
  bool assumeLE(ExprId a, ExprId b, bool strict, std::string* why, const std::string& origin = {});
  // Every symbolic Dim of a tensor shape is >= 0; call for each one seen.
  void noteSize(ExprId e);

  // The normal form of e under the substitutions learnt so far.
  ExprId canon(ExprId e) const;
  int64_t canonDim(int64_t d) const;

  bool proveEqual(ExprId a, ExprId b) const;
  bool proveLE(ExprId a, ExprId b) const;  // a <= b
  bool proveLT(ExprId a, ExprId b) const;  // a < b

  // Up to `count` distinct values of `vars` (variables left after
  // substitution) in [lo, hi] that satisfy every fact, for running graphs at
  // concrete sizes. Fewer when fewer exist (or Z3 gives up).
  using Assignment = std::unordered_map<AtomId, int64_t>;
  std::vector<Assignment> sample(const std::vector<AtomId>& vars, int count, int64_t lo, int64_t hi) const;
  // The value of e under `a` (e in any form: it is normalized first).
  std::optional<int64_t> valueOf(ExprId e, const Assignment& a) const;

  // "S.s0 = D0.s0 + D1.s0  (input relation at x.rel:3)", one line per
  // substitution and fact, for reports.
  std::vector<std::string> describe() const;
  bool empty() const { return subst_.empty() && facts_.empty(); }

 private:
  struct Fact {
    ExprId lhs;  // lhs == 0 (kind Eq), lhs >= 0 (Ge), lhs > 0 (Gt)
    enum Kind { Eq, Ge, Gt } kind;
    std::string origin;
  };
  struct Z3State;
  enum class Answer { Yes, No, Unknown };

  std::unordered_map<AtomId, ExprId> subst_;  // variable -> its value (in normal form)
  std::unordered_map<AtomId, std::string> substOrigin_;
  std::vector<Fact> facts_;                    // what the substitution cannot express
  std::vector<ExprId> sizes_;                  // symbolic sizes seen (each >= 0)
  mutable std::unordered_map<ExprId, ExprId> canonCache_;
  mutable std::unordered_map<uint64_t, bool> proofCache_;
  mutable std::unique_ptr<Z3State> z3_;  // created by the first question that needs Z3

  // Is `diff` (canonical) provably >= 0 (> 0 with strict)?
  bool proveNonNegative(ExprId diff, bool strict) const;
  z3::solver solverWithFacts() const;
  Answer satisfiable(ExprId d, Fact::Kind kind) const;
  bool add(ExprId d, Fact::Kind kind, const std::string& what, std::string* why, const std::string& origin);
  bool solveFor(ExprId diff, const std::string& origin);  // diff == 0 as a substitution; false when no variable is solvable
  void invalidate();
};

// Dim helpers under a context: concrete dims compare as integers, symbolic
// ones through `ctx`.
bool dimEqual(const Context& ctx, int64_t a, int64_t b);
bool dimLE(const Context& ctx, int64_t a, int64_t b);
// a + b, a - b, a * b as Dims; nullopt when the result is not provably >= 0.
std::optional<int64_t> dimAdd(const Context& ctx, int64_t a, int64_t b);
std::optional<int64_t> dimSub(const Context& ctx, int64_t a, int64_t b);
std::optional<int64_t> dimMul(const Context& ctx, int64_t a, int64_t b);

}  // namespace tangle::sym
