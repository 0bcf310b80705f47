#include "replay/lgraph_eval.h"

#include <algorithm>
#include <utility>

#include "ops/ops.h"
#include "replay/liveness.h"

namespace tangle::replay {

std::string whereOf(const LGraph& lg, int node) {
  const Node& n = lg.origin(node);
  return n.loc.file + (n.loc.line > 0 ? ":" + std::to_string(n.loc.line) : "");
}

namespace {
int64_t elementsOf(const interp::Value& v) {
  int64_t n = 0;
  for (const auto& t : v.items) n += t.numel();
  return n;
}
}  // namespace

LGraphEvaluator::LGraphEvaluator(const LGraph& lg)
    : lg_(lg), values_(lg.nodes.size()), readers_(readerCounts(lg)), kept_(lg.nodes.size(), 0),
      computed1_(lg.nodes.size(), 0) {}

void LGraphEvaluator::store(int node, interp::Value v) {
  auto& slot = values_[static_cast<size_t>(node)];
  if (slot) live_ -= elementsOf(*slot);
  live_ += elementsOf(v);
  peak_ = std::max(peak_, live_);
  slot = std::move(v);
}

void LGraphEvaluator::set(int node, interp::Value v) {
  node = lg_.resolve(node);
  kept_[static_cast<size_t>(node)] = 1;
  store(node, std::move(v));
}

const interp::Value* LGraphEvaluator::known(int node) {
  node = lg_.resolve(node);
  if (!values_[static_cast<size_t>(node)] && !computed1_[static_cast<size_t>(node)]) return nullptr;
  return value(node);
}

void LGraphEvaluator::release(int node) {
  if (computed1_[static_cast<size_t>(node)]) return;  // a recomputation: its operands were counted down already
  computed1_[static_cast<size_t>(node)] = 1;
  std::vector<int> ops;
  for (int o : lg_.node(node).operands) ops.push_back(lg_.resolve(o));
  std::sort(ops.begin(), ops.end());
  ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
  for (int o : ops) {
    auto i = static_cast<size_t>(o);
    if (--readers_[i] > 0 || kept_[i] || !values_[i]) continue;
    live_ -= elementsOf(*values_[i]);
    values_[i].reset();
  }
}

void LGraphEvaluator::fail(int node, std::string op, std::string reason) {
  failure_ = EvalFailure{node, std::move(op), whereOf(lg_, node), std::move(reason)};
}

const interp::Value* LGraphEvaluator::value(int node) {
  node = lg_.resolve(node);
  kept_[static_cast<size_t>(node)] = 1;  // the caller holds it from now on
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
    // An operand present when visited may have been freed since by its last
    // other reader (only when `cur` is recomputed): visit the operands again.
    bool ready = true;
    for (int o : ln.operands) ready = ready && values_[static_cast<size_t>(lg_.resolve(o))];
    if (!ready) {
      next = 0;
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
    // The operands are moved into the kernel's input list and back after it (a
    // copy per operand was most of the replay's memory traffic); an operand
    // read twice by one kernel is moved once and copied for its other uses.
    std::vector<interp::Value> kids;
    std::vector<interp::Value*> from(tn.children.size(), nullptr);  // where kids[i] was moved from
    kids.reserve(tn.children.size());
    for (size_t i = 0; i < tn.children.size(); ++i) {
      const auto& r = tn.children[i];
      interp::Value* src = nullptr;
      switch (r.kind) {
        case CanonTerm::Ref::Kind::Operand: src = &*values_[static_cast<size_t>(lg_.resolve(r.operand))]; break;
        case CanonTerm::Ref::Kind::Local: src = &local[static_cast<size_t>(r.local)]; break;
        case CanonTerm::Ref::Kind::Scalar: kids.push_back(interp::Value::of(interp::Tensor::scalar(r.scalar))); continue;
      }
      size_t first = std::find(from.begin(), from.begin() + static_cast<std::ptrdiff_t>(i), src) - from.begin();
      if (first < i) {
        kids.push_back(kids[first]);
        continue;
      }
      from[i] = src;
      kids.push_back(std::move(*src));
    }
    auto restore = [&] {
      for (size_t i = 0; i < kids.size(); ++i)
        if (from[i]) *from[i] = std::move(kids[i]);
    };
    eg::ENode en{tn.op, eg::internAttrs(tn.attrs), std::vector<eg::Id>(tn.children.size(), 0)};
    if (!ops::hasKernel(tn.op)) {
      restore();
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
      restore();
      fail(node, eg::symbolName(tn.op), eg::symbolName(tn.op) + " does not accept its inputs (" + shapes + ")");
      failure_->refused = true;
      return false;
    }
    restore();
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
  int64_t n = elementsOf(local.back());
  computed_ += n;
  store(node, std::move(local.back()));
  release(node);
  return true;
}

}  // namespace tangle::replay
