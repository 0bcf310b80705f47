// Printing terms in the relation-file language, so that a reported relation
// can be pasted back into a relation file.
#include <string>

#include "infer/infer.h"
#include "ops/ops.h"

namespace tangle {

namespace {

std::string formatNode(const eg::Term& t, uint32_t i) {
  const auto& n = t.nodes[i];
  const ops::Syms& s = ops::syms();
  const eg::AttrList& a = eg::attrs(n.attrs);
  auto kids = [&](std::string out) {
    for (size_t k = 0; k < n.children.size(); ++k) {
      if (k) out += ", ";
      out += formatNode(t, n.children[k]);
    }
    return out;
  };
  if (const std::string* name = ops::tensorName(n.op, n.attrs)) return *name;
  if (n.op == s.constant) return a.empty() ? "const" : a[0].toString();
  if (n.op == s.concat) return kids("concat(") + ", dim=" + a.at(0).toString() + ")";
  if (n.op == s.sum) return kids("sum(") + ")";
  if (n.op == s.slice) {
    std::string out = kids("slice(") + ", dim=" + a.at(0).toString() + ", start=" + a.at(1).toString() +
                      ", end=" + a.at(2).toString();
    if (a.size() > 3 && !(a[3].kind == eg::Attr::Kind::Int && a[3].i == 1)) out += ", step=" + a[3].toString();
    return out + ")";
  }
  if (n.op == s.transpose) return kids("transpose(") + ", " + a.at(0).toString() + ", " + a.at(1).toString() + ")";
  if (n.op == s.permute || n.op == s.reshape)
    return kids(eg::symbolName(n.op) + "(") + ", " + a.at(0).toString() + ")";
  std::string out = kids(eg::symbolName(n.op) + "(");
  for (size_t k = 0; k < a.size(); ++k) out += (n.children.empty() && k == 0 ? "" : ", ") + a[k].toString();
  return out + ")";
}

}  // namespace

std::string formatTerm(const eg::Term& t) {
  if (t.nodes.empty()) return "<empty>";
  return formatNode(t, t.root());
}

}  // namespace tangle
