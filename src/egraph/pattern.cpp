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

namespace {

class Matcher {
 public:
  Matcher(const detail::PatternData& p, const EGraph& g, size_t limit, std::vector<Match>& out)
      : p_(p), g_(g), limit_(limit), out_(out), regs_(p.nodes.size()), classes_(p.classVars.size()),
        attrs_(p.attrVars.size()), lists_(p.listVars.size()) {}

  void matchRoot(Id eclass) {
    if (out_.size() >= limit_) return;
    root_ = g_.find(eclass);
    const PatNode& root = p_.nodes[p_.root];
    if (root.isVar) {
      classes_[root.var] = root_;
      emit();
      return;
    }
    regs_[p_.root] = root_;
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
          if (pa.firstUse) attrs_[pa.var] = &al[i];
          else if (!(*attrs_[pa.var] == al[i])) return false;
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
      if (!c.isVar) regs_[pn.children[i]] = id;
      else if (c.firstUse) classes_[c.var] = id;
      else if (!sameClass(classes_[c.var], id)) return false;
    }
    if (pn.listVar >= 0) {
      ListRef here{&n.children, fixed};
      if (pn.listFirstUse) {
        lists_[pn.listVar] = here;
      } else {
        const ListRef& bound = lists_[pn.listVar];
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
    for (const ENode& n : g_.eclass(regs_[id]).nodes) {
      if (n.op != pn.op || !matchAttrs(pn, n) || !matchChildren(pn, n)) continue;
      step(k + 1);
      if (out_.size() >= limit_) return;
    }
  }

  void emit() {
    Match m;
    m.eclass = root_;
    for (size_t i = 0; i < classes_.size(); ++i) m.subst.classes.emplace(p_.classVars[i], classes_[i]);
    for (size_t i = 0; i < attrs_.size(); ++i) m.subst.attrs.emplace(p_.attrVars[i], *attrs_[i]);
    for (size_t i = 0; i < lists_.size(); ++i)
      m.subst.lists.emplace(p_.listVars[i],
                            std::vector<Id>(lists_[i].ids->begin() + lists_[i].from, lists_[i].ids->end()));
    out_.push_back(std::move(m));
  }

  struct ListRef {
    const std::vector<Id>* ids = nullptr;
    size_t from = 0;
  };

  const detail::PatternData& p_;
  const EGraph& g_;
  size_t limit_;
  std::vector<Match>& out_;
  Id root_ = 0;
  std::vector<Id> regs_;     // pattern node -> the class it is matched against
  std::vector<Id> classes_;  // class variable bindings
  std::vector<const Attr*> attrs_;
  std::vector<ListRef> lists_;
};

}  // namespace

std::vector<Match> Pattern::search(const EGraph& g, size_t limit) const {
  std::vector<Match> out;
  if (!impl_ || limit == 0) return out;
  Matcher m(*impl_, g, limit, out);
  const PatNode& root = impl_->nodes[impl_->root];
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
  return out;
}

std::vector<Match> Pattern::searchClass(const EGraph& g, Id eclass, size_t limit) const {
  std::vector<Match> out;
  if (!impl_ || limit == 0) return out;
  Matcher(*impl_, g, limit, out).matchRoot(eclass);
  return out;
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
      AttrList list;
      list.reserve(pn.attrs.size());
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

std::optional<Symbol> Pattern::rootOp() const {
  if (!impl_) return std::nullopt;
  const PatNode& root = impl_->nodes[impl_->root];
  if (root.isVar) return std::nullopt;
  return root.op;
}

}  // namespace tangle::eg
