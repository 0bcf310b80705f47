#include "replay/lgraph_eval.h"

#include <utility>

#include "ops/ops.h"

namespace tangle::replay {

std::string whereOf(const LGraph& lg, int node) {
  const Node& n = lg.origin(node);
  return n.loc.file + (n.loc.line > 0 ? ":" + std::to_string(n.loc.line) : "");
}

LGraphEvaluator::LGraphEvaluator(const LGraph& lg) : lg_(lg), values_(lg.nodes.size()) {}

void LGraphEvaluator::set(int node, interp::Value v) { values_[static_cast<size_t>(lg_.resolve(node))] = std::move(v); }

const interp::Value* LGraphEvaluator::known(int node) const {
  auto& v = values_[static_cast<size_t>(lg_.resolve(node))];
  return v ? &*v : nullptr;
}

void LGraphEvaluator::fail(int node, std::string op, std::string reason) {
  failure_ = EvalFailure{node, std::move(op), whereOf(lg_, node), std::move(reason)};
}

const interp::Value* LGraphEvaluator::value(int node) {
  node = lg_.resolve(node);
  if (values_[static_cast<size_t>(node)]) return &*values_[static_cast<size_t>(node)];
  // Iterative post-order over operands; `onStack` detects cycles.
  std::vector<char> onStack(lg_.nodes.size(), 0);
  std::vector<std::pair<int, size_t>> stack{{node, 0}};
  onStack[static_cast<size_t>(node)] = 1;
  while (!stack.empty()) {
    auto& [cur, next] = stack.back();
    const LNode& ln = lg_.node(cur);
    if (next < ln.operands.size()) {
      int op = lg_.resolve(ln.operands[next++]);
      if (values_[static_cast<size_t>(op)]) continue;
      if (onStack[static_cast<size_t>(op)]) {
        fail(op, "", "dependency cycle through " + lg_.node(op).name);
        return nullptr;
      }
      onStack[static_cast<size_t>(op)] = 1;
      stack.push_back({op, 0});
      continue;
    }
    if (!computeOne(cur)) return nullptr;
    onStack[static_cast<size_t>(cur)] = 0;
    stack.pop_back();
  }
  return &*values_[static_cast<size_t>(node)];
}

bool LGraphEvaluator::computeOne(int node) {
  const LNode& ln = lg_.node(node);
  if (ln.isInput || ln.def.nodes.empty()) {
    fail(node, "", "no value for input " + ln.name + " (no input relation or constant gives it)");
    return false;
  }
  std::vector<interp::Value> local;
  local.reserve(ln.def.nodes.size());
  for (const auto& tn : ln.def.nodes) {
    std::vector<interp::Value> kids;
    kids.reserve(tn.children.size());
    for (const auto& r : tn.children) {
      switch (r.kind) {
        case CanonTerm::Ref::Kind::Operand: kids.push_back(*values_[static_cast<size_t>(lg_.resolve(r.operand))]); break;
        case CanonTerm::Ref::Kind::Local: kids.push_back(local[static_cast<size_t>(r.local)]); break;
        case CanonTerm::Ref::Kind::Scalar: kids.push_back(interp::Value::of(interp::Tensor::scalar(r.scalar))); break;
      }
    }
    eg::ENode en{tn.op, eg::internAttrs(tn.attrs), std::vector<eg::Id>(tn.children.size(), 0)};
    if (!ops::hasKernel(tn.op)) {
      fail(node, eg::symbolName(tn.op), eg::symbolName(tn.op) + " has no reference semantics");
      return false;
    }
    auto v = ops::evaluate(en, kids);
    if (!v) {
      std::string shapes;
      for (auto& k : kids) {
        if (!shapes.empty()) shapes += ", ";
        shapes += k.tensor() ? interp::shapeString(k.tensor()->shape) : "tuple";
      }
      fail(node, eg::symbolName(tn.op), eg::symbolName(tn.op) + " does not accept its inputs (" + shapes + ")");
      failure_->refused = true;
      return false;
    }
    local.push_back(std::move(*v));
  }
  // The interpreter must agree with the graph's own annotation of the shape.
  const interp::Tensor* t = local.back().tensor();
  const TensorType* want = ln.data.tensor();
  if (t && want && t->shape != want->shape) {
    bool concrete = true;
    for (Dim d : want->shape) concrete = concrete && !isSymbolic(d);
    if (concrete) {
      fail(node, eg::symbolName(ln.def.nodes.back().op),
           "computed shape " + interp::shapeString(t->shape) + " differs from the annotated " + toString(*want));
      failure_->refused = true;
      return false;
    }
  }
  values_[static_cast<size_t>(node)] = std::move(local.back());
  return true;
}

}  // namespace tangle::replay
