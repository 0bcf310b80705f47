// E-matching (backtracking over the e-nodes of classes) and instantiation.
#include <stdexcept>

#include "egraph/pattern_impl.h"

namespace tangle::eg {

// ---- Subst ----------------------------------------------------------------

namespace {
template <class Map>
const auto& at(const Map& m, std::string_view v, const char* what) {
  auto it = m.find(v);
  if (it == m.end()) throw std::out_of_range(std::string("unbound ") + what + " variable ?" + std::string(v));
  return it->second;
}
}  // namespace

Id Subst::cls(std::string_view v) const { return at(classes, v, "e-class"); }
const Attr& Subst::attr(std::string_view v) const { return at(attrs, v, "attribute"); }
const std::vector<Id>& Subst::list(std::string_view v) const { return at(lists, v, "list"); }
int64_t Subst::integer(std::string_view v) const {
  const Attr& a = attr(v);
  if (a.kind != Attr::Kind::Int)
    throw std::invalid_argument("attribute variable ?" + std::string(v) + " is " + a.toString() + ", not an integer");
  return a.i;
}

int64_t Subst::dim(std::string_view v) const {
  const Attr& a = attr(v);
  if (a.kind != Attr::Kind::Int && a.kind != Attr::Kind::SymDim)
    throw std::invalid_argument("attribute variable ?" + std::string(v) + " is " + a.toString() + ", not a size");
  return a.i;
}

// ---- Matching -------------------------------------------------------------

// Backtracking matcher writing into a MatchSet (its registers live there too).
class MatchWriter {
 public:
  MatchWriter(const detail::PatternData& p, const EGraph& g, size_t limit, MatchSet& out,
              const std::vector<char>* changed = nullptr)
      : p_(p), g_(g), limit_(limit), out_(out), changed_(changed) {
    out.pat_ = &p;
    out.regs_.resize(p.nodes.size());
    out.curClasses_.resize(p.classVars.size());
    out.curAttrs_.resize(p.attrVars.size());
    out.curLists_.resize(p.listVars.size());
  }

  void matchRoot(Id eclass) {
    if (out_.size() >= limit_) return;
    root_ = g_.find(eclass);
    const PatNode& root = p_.nodes[p_.root];
    if (root.isVar) {
      out_.curClasses_[root.var] = root_;
      emit();
      return;
    }
    out_.regs_[p_.root] = root_;
    step(0);
  }

 private:
  bool sameClass(Id a, Id b) const { return a == b || g_.find(a) == g_.find(b); }

  bool matchAttrs(const PatNode& pn, const ENode& n) {
    if (pn.literalAttrs) return n.attrs == pn.attrsId;
    const AttrList& al = attrs(n.attrs);
    if (al.size() != pn.attrs.size()) return false;
    for (size_t i = 0; i < al.size(); ++i) {
      const PatAttr& pa = pn.attrs[i];
      switch (pa.kind) {
        case PatAttr::Kind::Any: break;
        case PatAttr::Kind::Literal:
          if (!(al[i] == pa.literal)) return false;
          break;
        case PatAttr::Kind::Var:
          if (pa.firstUse) out_.curAttrs_[pa.var] = &al[i];
          else if (!(*out_.curAttrs_[pa.var] == al[i])) return false;
          break;
      }
    }
    return true;
  }

  bool matchChildren(const PatNode& pn, const ENode& n) {
    size_t fixed = pn.children.size();
    if (pn.listVar >= 0 ? n.children.size() < fixed : n.children.size() != fixed) return false;
    for (size_t i = 0; i < fixed; ++i) {
      const PatNode& c = p_.nodes[pn.children[i]];
      Id id = n.children[i];
      if (!c.isVar) out_.regs_[pn.children[i]] = id;
      else if (c.firstUse) out_.curClasses_[c.var] = id;
      else if (!sameClass(out_.curClasses_[c.var], id)) return false;
    }
    if (pn.listVar >= 0) {
      MatchSet::ListRef here{&n.children, fixed};
      if (pn.listFirstUse) {
        out_.curLists_[pn.listVar] = here;
      } else {
        const MatchSet::ListRef& bound = out_.curLists_[pn.listVar];
        size_t len = bound.ids->size() - bound.from;
        if (len != n.children.size() - fixed) return false;
        for (size_t k = 0; k < len; ++k)
          if (!sameClass((*bound.ids)[bound.from + k], n.children[fixed + k])) return false;
      }
    }
    return true;
  }

  void step(size_t k) {
    if (k == p_.bindOrder.size()) {
      emit();
      return;
    }
    int id = p_.bindOrder[k];
    const PatNode& pn = p_.nodes[id];
    for (const ENode& n : g_.eclass(out_.regs_[id]).nodes) {
      if (n.op != pn.op || !matchAttrs(pn, n) || !matchChildren(pn, n)) continue;
      step(k + 1);
      if (out_.size() >= limit_) return;
    }
  }

  // Whether the match being emitted touches a class marked in changed_.
  bool touchesChanged() const {
    const std::vector<char>& c = *changed_;
    auto marked = [&c](Id id) { return id < c.size() && c[id]; };
    for (int id : p_.bindOrder)
      if (marked(out_.regs_[id])) return true;
    for (Id id : out_.curClasses_)
      if (marked(id)) return true;
    for (const MatchSet::ListRef& l : out_.curLists_)
      for (size_t k = l.from; k < l.ids->size(); ++k)
        if (marked((*l.ids)[k])) return true;
    return false;
  }

  void emit() {
    if (changed_ && !touchesChanged()) return;
    out_.roots_.push_back(root_);
    out_.classes_.insert(out_.classes_.end(), out_.curClasses_.begin(), out_.curClasses_.end());
    out_.attrs_.insert(out_.attrs_.end(), out_.curAttrs_.begin(), out_.curAttrs_.end());
    for (const MatchSet::ListRef& l : out_.curLists_) {
      out_.listIds_.insert(out_.listIds_.end(), l.ids->begin() + l.from, l.ids->end());
      out_.listEnds_.push_back(static_cast<uint32_t>(out_.listIds_.size()));
    }
  }

  const detail::PatternData& p_;
  const EGraph& g_;
  size_t limit_;
  MatchSet& out_;
  const std::vector<char>* changed_;
  Id root_ = 0;
};

namespace {
// Whether every operator below the pattern's root occurs in the e-graph (else it has no match).
bool innerOpsPresent(const detail::PatternData& p, const EGraph& g) {
  for (Symbol op : p.innerOps)
    if (g.classesWithOp(op).empty()) return false;
  return true;
}
}  // namespace

void MatchSet::clearAll() {
  roots_.clear();
  classes_.clear();
  attrs_.clear();
  listEnds_.clear();
  listIds_.clear();
}

void MatchSet::truncate(size_t n) {
  if (n >= size()) return;
  roots_.resize(n);
  if (!pat_) return;
  classes_.resize(n * pat_->classVars.size());
  attrs_.resize(n * pat_->attrVars.size());
  size_t lists = pat_->listVars.size();
  if (lists) {
    listEnds_.resize(n * lists);
    listIds_.resize(n ? listEnds_.back() : 0);
  }
}

void MatchSet::load(size_t i, Match& m) const {
  const detail::PatternData& p = *pat_;
  m.eclass = roots_[i];
  size_t nc = p.classVars.size(), na = p.attrVars.size(), nl = p.listVars.size();
  // The names are those of the last match loaded when it came from the same pattern (guards only
  // append derived bindings, which the truncations drop).
  bool named = m.namesOf == &p;
  m.namesOf = &p;
  m.subst.classes.truncate(nc);
  for (size_t v = 0; v < nc; ++v) {
    auto& e = m.subst.classes.slot(v);
    if (!named && e.first != p.classVars[v]) e.first = p.classVars[v];
    e.second = classes_[i * nc + v];
  }
  m.subst.attrs.truncate(na);
  for (size_t v = 0; v < na; ++v) {
    auto& e = m.subst.attrs.slot(v);
    if (!named && e.first != p.attrVars[v]) e.first = p.attrVars[v];
    e.second = *attrs_[i * na + v];
  }
  m.subst.lists.truncate(nl);
  for (size_t v = 0; v < nl; ++v) {
    auto& e = m.subst.lists.slot(v);
    if (!named && e.first != p.listVars[v]) e.first = p.listVars[v];
    size_t k = i * nl + v;
    uint32_t from = k ? listEnds_[k - 1] : 0;
    e.second.assign(listIds_.begin() + from, listIds_.begin() + listEnds_[k]);
  }
}

void Pattern::search(const EGraph& g, size_t limit, MatchSet& out) const {
  out.clear();
  if (!impl_ || limit == 0) return;
  const PatNode& root = impl_->nodes[impl_->root];
  // No class holds the root's operator (most rules, in a small e-graph): nothing to set up.
  if (!root.isVar && g.classesWithOp(root.op).empty()) return;
  if (!innerOpsPresent(*impl_, g)) return;
  MatchWriter m(*impl_, g, limit, out);
  if (root.isVar) {
    for (Id c : g.classIds()) {
      m.matchRoot(c);
      if (out.size() >= limit) break;
    }
  } else {
    for (Id c : g.classesWithOp(root.op)) {
      m.matchRoot(c);
      if (out.size() >= limit) break;
    }
  }
}

void Pattern::searchRoots(const EGraph& g, const std::vector<Id>& roots, size_t limit, MatchSet& out,
                          const std::vector<char>* changed) const {
  out.clear();
  if (!impl_ || limit == 0 || roots.empty() || !innerOpsPresent(*impl_, g)) return;
  MatchWriter m(*impl_, g, limit, out, changed);
  for (Id c : roots) {
    m.matchRoot(c);
    if (out.size() >= limit) break;
  }
}


namespace {
std::vector<Match> toMatches(const MatchSet& set) {
  std::vector<Match> out(set.size());
  for (size_t i = 0; i < set.size(); ++i) set.load(i, out[i]);
  return out;
}
}  // namespace

std::vector<Match> Pattern::search(const EGraph& g, size_t limit) const {
  MatchSet set;
  search(g, limit, set);
  return toMatches(set);
}

std::vector<Match> Pattern::searchClass(const EGraph& g, Id eclass, size_t limit) const {
  MatchSet set;
  if (!impl_ || limit == 0) return {};
  MatchWriter(*impl_, g, limit, set).matchRoot(eclass);
  return toMatches(set);
}

// ---- Instantiation --------------------------------------------------------

namespace {

struct Builder {
  const detail::PatternData& p;
  EGraph& g;
  const Subst& s;
  bool mustExist;

  std::optional<Id> build(int id, bool isRoot) {
    const PatNode& pn = p.nodes[id];
    if (pn.isVar) return s.cls(p.classVars[pn.var]);
    ENode n;
    n.op = pn.op;
    n.children.reserve(pn.children.size());
    for (int c : pn.children) {
      std::optional<Id> child = build(c, false);
      if (!child) return std::nullopt;
      n.children.push_back(*child);
    }
    if (pn.listVar >= 0) {
      const std::vector<Id>& rest = s.list(p.listVars[pn.listVar]);
      n.children.insert(n.children.end(), rest.begin(), rest.end());
    }
    if (pn.literalAttrs) {
      n.attrs = pn.attrsId;
    } else {
      // One scratch list per thread, interned at once (the children are built above, so no nested
      // build uses it meanwhile): a list per instantiated node was an allocation each.
      thread_local AttrList list;
      list.clear();
      for (const PatAttr& a : pn.attrs) {
        if (a.kind == PatAttr::Kind::Any)
          throw std::logic_error("pattern \"" + p.text + "\": '_' cannot be instantiated");
        list.push_back(a.kind == PatAttr::Kind::Var ? s.attr(p.attrVars[a.var]) : a.literal);
      }
      n.attrs = internAttrs(list);
    }
    if (mustExist && !isRoot) return g.lookup(std::move(n));
    return g.tryAdd(std::move(n));
  }
};

}  // namespace

std::optional<Id> Pattern::instantiate(EGraph& g, const Subst& s, bool mustExist) const {
  if (!impl_) throw std::logic_error("instantiate: empty pattern");
  return Builder{*impl_, g, s, mustExist}.build(impl_->root, true);
}

const std::string& Pattern::text() const {
  static const std::string kEmpty;
  return impl_ ? impl_->text : kEmpty;
}

}  // namespace tangle::eg
