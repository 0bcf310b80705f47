// Patterns over e-nodes and e-matching.
//
// Text syntax (s-expressions):
//   pattern  := ?var                      matches any e-class, binds it
//             | (op[attrs] child*)        matches an e-node with this op, attrs, children
//             | (op[attrs] child* ?xs...) trailing list variable: binds the remaining children (>= 0)
//   attrs    := attr (',' attr)*          omitted brackets mean: the node has no attrs
//   attr     := integer | float | true | false | none | "string" | [int, int, ...]
//             | ?name                     attribute variable, binds the attr value
//             | _                         matches any attr value
//   op       := any token without ( ) [ ] whitespace, e.g. mm, concat, aten.gelu
// Examples:
//   (mm (concat[1] ?a ?b) (concat[0] ?c ?d))
//   (slice[?dim, ?start, ?end, 1] ?x)
//   (sum ?xs...)
// A variable repeated in a pattern must bind the same e-class (or equal attr).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "egraph/egraph.h"

namespace tangle::eg {

namespace detail {
struct PatternData;  // parsed form (pattern_impl.h)
}

// A few named bindings, searched linearly: a pattern binds a handful of
// variables, and a std::map's node allocations dominated matching time.
template <class V>
class VarMap {
 public:
  using Entry = std::pair<std::string, V>;
  using iterator = typename std::vector<Entry>::iterator;
  using const_iterator = typename std::vector<Entry>::const_iterator;

  iterator begin() { return items_.begin(); }
  iterator end() { return items_.end(); }
  const_iterator begin() const { return items_.begin(); }
  const_iterator end() const { return items_.end(); }
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  iterator find(std::string_view k) {
    for (auto it = items_.begin(); it != items_.end(); ++it)
      if (it->first == k) return it;
    return items_.end();
  }
  const_iterator find(std::string_view k) const { return const_cast<VarMap*>(this)->find(k); }
  size_t count(std::string_view k) const { return find(k) != end() ? 1 : 0; }
  std::pair<iterator, bool> emplace(std::string_view k, V v) {
    if (auto it = find(k); it != end()) return {it, false};
    items_.emplace_back(std::string(k), std::move(v));
    return {items_.end() - 1, true};
  }
  V& operator[](std::string_view k) { return emplace(k, V{}).first->second; }

  // Reuse of one map for match after match (MatchSet::load): keeps the first
  // n entries' storage (their names are usually the same again).
  void truncate(size_t n) {
    if (items_.size() > n) items_.resize(n);
  }
  // Entry i, appended (default-constructed) when i == size().
  Entry& slot(size_t i) { return i < items_.size() ? items_[i] : items_.emplace_back(); }

 private:
  std::vector<Entry> items_;
};

// Bindings produced by a match. Variables are named without the '?'.
struct Subst {
  VarMap<Id> classes;
  VarMap<Attr> attrs;
  VarMap<std::vector<Id>> lists;

  Id cls(std::string_view v) const;              // throws std::out_of_range if unbound
  const Attr& attr(std::string_view v) const;
  int64_t integer(std::string_view v) const;     // attr(v).i, checks kind Int
  int64_t dim(std::string_view v) const;         // attr(v).i, checks kind Int or SymDim (a Dim)
  const std::vector<Id>& list(std::string_view v) const;
};

struct Match {
  Id eclass;            // the class the pattern's root matched in
  Subst subst;
  // Set by MatchSet::load: the pattern whose variable names subst's first entries already hold, so
  // that loading another match of it rewrites only the bound values.
  const void* namesOf = nullptr;
};

// The matches of one pattern, stored flat (no allocation per match): the
// equality-saturation runner keeps thousands per iteration and needs a Subst
// only for one match at a time. Valid while the e-graph is unchanged, except
// that the bindings are copied, so loading after the e-graph changed still
// gives the bindings found at search time.
class MatchSet {
 public:
  size_t size() const { return roots_.size(); }
  bool empty() const { return roots_.empty(); }
  // Inline and a no-op when empty: the runner clears every rule's set in every iteration, and most
  // are empty. (No match means every array is empty: emit and truncate keep them in step.)
  void clear() {
    if (!roots_.empty()) clearAll();
  }
  void truncate(size_t n);  // keeps the first n matches
  // Match i into `m`, reusing m's storage (any extra bindings a guard added are dropped).
  void load(size_t i, Match& m) const;

 private:
  friend class Pattern;
  friend class MatchWriter;
  void clearAll();
  const detail::PatternData* pat_ = nullptr;
  std::vector<Id> roots_;
  std::vector<Id> classes_;          // size() x classVars
  std::vector<const Attr*> attrs_;   // size() x attrVars; interned attributes never move
  std::vector<uint32_t> listEnds_;   // size() x listVars: end offset into listIds_
  std::vector<Id> listIds_;
  // The matcher's registers, kept here so a search reuses their storage.
  struct ListRef {
    const std::vector<Id>* ids = nullptr;
    size_t from = 0;
  };
  std::vector<Id> regs_, curClasses_;
  std::vector<const Attr*> curAttrs_;
  std::vector<ListRef> curLists_;
};

class Pattern {
 public:
  // Throws std::invalid_argument with a message pointing at the bad token.
  static Pattern parse(std::string_view text);

  // All matches in the (clean) e-graph. At most `limit` matches are returned.
  std::vector<Match> search(const EGraph& g, size_t limit = SIZE_MAX) const;
  // Matches rooted at one class.
  std::vector<Match> searchClass(const EGraph& g, Id eclass, size_t limit = SIZE_MAX) const;
  // `search` into a MatchSet (cleared first), the same matches in the same order.
  void search(const EGraph& g, size_t limit, MatchSet& out) const;
  // The matches rooted at the given canonical classes (in their order), into `out` (cleared first).
  // With `changed` (indexed by canonical id): only the matches that touch a marked class (their
  // root, a class an operator node of the pattern matched in, or a class a variable binds).
  void searchRoots(const EGraph& g, const std::vector<Id>& roots, size_t limit, MatchSet& out,
                   const std::vector<char>* changed = nullptr) const;
  // Parent hops from a match's root to the deepest class the match binds (0 for a bare variable).
  // (Kept beside the shared parsed form, like rootOp: the runner asks both of every rule in every
  // iteration.)
  int height() const { return height_; }

  // Builds the pattern under `s`, adding e-nodes as needed (tryAdd: refuses
  // ill-typed nodes -> nullopt). With `mustExist`, every strict sub-node must
  // already be in the e-graph (constrained lemmas, Entangle §4.3.2); only the
  // root may be new.
  std::optional<Id> instantiate(EGraph& g, const Subst& s, bool mustExist = false) const;

  const std::string& text() const;
  // Root operator symbol, or nullopt when the pattern is a bare variable.
  std::optional<Symbol> rootOp() const {
    if (!hasRootOp_) return std::nullopt;
    return rootOp_;
  }

 private:
  std::shared_ptr<const detail::PatternData> impl_;  // null for a default-constructed Pattern
  int height_ = 0;
  bool hasRootOp_ = false;
  Symbol rootOp_ = 0;
};

}  // namespace tangle::eg
