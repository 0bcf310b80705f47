// Rewrite rules (lemmas) and the runner that applies them to saturation or
// until a limit. A rule is a searcher (LHS pattern), an optional guard
// (condition; may also bind derived attributes such as a shifted slice bound),
// and an applier: an RHS pattern or a C++ function.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "egraph/pattern.h"

namespace tangle::eg {

struct Rule {
  std::string name;      // debug name, shown in reports ("mm-concat-inner")
  Pattern lhs;
  // Conditioned lemma: return false to reject a match. May add derived
  // bindings to the Subst for the RHS to use. Null = universal lemma.
  std::function<bool(const EGraph&, Subst&)> guard;
  // Exactly one of rhs / apply is set.
  std::optional<Pattern> rhs;
  // Builds the right-hand side; returns its class (merged with the match by
  // the runner) or nullopt when it does not apply after all.
  std::function<std::optional<Id>(EGraph&, const Match&)> apply;
  // Constrained lemma (Entangle §4.3.2): the RHS's strict sub-nodes must
  // already exist as e-nodes; only used with `rhs`.
  bool constrained = false;
  // Also applied to a class known to be a splat of one constant (the runner
  // skips every other rule there: see rewrite.cpp).
  bool onConstants = false;
  // The rule reads only its match: applying a match again cannot change the e-graph unless a
  // class the match touches (its root, a class an operator node of the LHS matched in, a class a
  // variable binds) changed since the match was last applied. It reads those classes' data and
  // e-nodes, no others' (no lookup of an existing parent, no e-nodes below the match), and what it
  // builds is typed from them alone. The runner then leaves it out of the full search that
  // confirms saturation (rewrite.cpp). Implied for an RHS rule without guard that is not
  // constrained (see isLocal).
  bool local = false;
  // The RHS has an operator the DataFn cannot type (an opaque one, typed only where the lowering
  // put it): instantiating it fails until such an e-node exists, which its match does not see.
  // Never local, then.
  bool opaqueRhs = false;
};

// Whether the runner may treat `r` as reading only its match (Rule::local).
bool isLocal(const Rule& r);

struct RunLimits {
  size_t maxIterations = 30;
  size_t maxNodes = 200000;
  double maxSeconds = 30.0;  // CPU seconds of the running thread (rewrite.cpp)
  // Matches applied per rule in one iteration, at first. A rule that has more
  // gets twice as many in the next iteration (up to maxMatchesGrowth times
  // this): truncating it to the same first matches every time would leave
  // the rest unapplied forever (they may be the only merges left), while the
  // other rules keep building on the unmerged classes.
  size_t maxMatchesPerRule = 10000;
  size_t maxMatchesGrowth = 64;
};

// MatchLimit: an iteration changed nothing, but some rule had more matches
// than its largest allowance (maxMatchesPerRule * maxMatchesGrowth), so the
// e-graph is not known to be saturated.
enum class StopReason { Saturated, IterationLimit, NodeLimit, TimeLimit, MatchLimit };
const char* toString(StopReason r);

struct RunReport {
  StopReason stop = StopReason::Saturated;
  size_t iterations = 0;
  double seconds = 0;
  // Per rule, in the order given: merges that changed the e-graph. (By index: a map by name,
  // built for every run, was a twentieth of a check's CPU.)
  std::vector<size_t> firings;
  // When saturated: the change-log position (EGraph::changeCount) of the search that found
  // nothing to do. A later run of the same rules on this e-graph may resume from it.
  std::optional<size_t> saturatedAt;
};

// What the runner derives from a rule set before its first iteration: the rules grouped by their
// LHS's root operator, the local flags and the tallest LHS. Build it once for rules that many runs
// share (a check's lemmas): per run it was a few loops over a few hundred rules. Throws
// std::invalid_argument for a rule with neither or both of rhs / apply.
class RuleIndex {
 public:
  explicit RuleIndex(const std::vector<Rule>& rules);
  // The rules that may match in g (rooted at a variable or at an operator some class holds),
  // ascending, into `out` (`mask`: scratch). A rule rooted at an operator no class holds finds
  // nothing, and cannot have been cut short by its cap in this e-graph: operators never leave it.
  void mayMatch(const EGraph& g, std::vector<uint64_t>& mask, std::vector<uint32_t>& out) const;
  size_t size() const { return local_.size(); }
  bool local(size_t i) const { return local_[i] != 0; }
  int maxHeight() const { return maxHeight_; }

 private:
  // Per root operator (ascending), its rules as a bit mask over rule indices (words_ words each);
  // anyRoot_: the rules rooted at a variable.
  std::vector<Symbol> rootOps_;
  std::vector<uint64_t> masks_, anyRoot_;
  size_t words_ = 0;
  std::vector<char> local_;
  int maxHeight_ = 0;
};

// Applies all rules, iteration by iteration (search all, then apply all, then
// rebuild), until nothing changes (and no rule's matches were cut short) or a
// limit is hit. Leaves the e-graph clean.
// Node and time limits are also checked during the apply phase (every 64
// matches), so one iteration overshoots them only slightly. Throws
// std::invalid_argument for a rule with neither or both of rhs / apply.
//
// `resumeFrom`: the saturatedAt of an earlier run of the same rules on this e-graph, when all
// that happened to it since is in its change log (adds, merges, new data: not a change of the
// symbolic-size context). The first search then looks only where that log says matches may be
// new, like the runner's partial searches, instead of searching everything again.
//
// `index`: RuleIndex(rules), when the caller keeps one (else it is built for this run).
RunReport run(EGraph& g, const std::vector<Rule>& rules, const RunLimits& limits,
              std::optional<size_t> resumeFrom = std::nullopt, const RuleIndex* index = nullptr);

}  // namespace tangle::eg
