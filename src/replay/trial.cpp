#include "replay/trial.h"

#include <cmath>
#include <utility>

namespace tangle::replay::detail {

Trial::Trial(const LGraph& spec, const LGraph& impl, const RelationFile& rel, uint64_t seed)
    : Trial(spec, impl, drawInputs(spec, impl, rel, seed), seed) {}

Trial::Trial(const LGraph& spec, const LGraph& impl, InputValues inputs, uint64_t seed)
    : seed_(seed), inputs_(std::move(inputs)), spec_(spec), impl_(impl) {
  for (auto& [id, v] : inputs_.spec) spec_.set(id, v);
  for (auto& [id, v] : inputs_.impl) impl_.set(id, v);
}

LeafValues Trial::leaves() {
  return [this](const std::string& name, Owner owner) -> const interp::Value* {
    LGraphEvaluator& ev = owner.isSpec() ? spec_ : impl_;
    auto id = ev.graph().find(name);
    return id ? ev.value(*id) : nullptr;
  };
}

std::optional<std::string> Trial::evalError() const {
  for (const LGraphEvaluator* ev : {&spec_, &impl_}) {
    if (!ev->failure()) continue;
    const EvalFailure& f = *ev->failure();
    if (f.op.empty()) return f.reason + " at " + f.where;
    return f.op + " at " + f.where + " (" + ev->graph().node(f.node).name + ": " + f.reason + ")";
  }
  return std::nullopt;
}

Comparison compareTensors(const interp::Tensor& expected, const interp::Tensor& actual) {
  Comparison c;
  c.sameShape = expected.shape == actual.shape;
  if (!c.sameShape) return c;
  double scale = 0;
  for (double x : expected.data)
    if (std::isfinite(x)) scale = std::max(scale, std::abs(x));
  double tol = 1e-6 * (1 + scale);
  for (size_t i = 0; i < expected.data.size(); ++i) {
    double a = expected.data[i], b = actual.data[i];
    if (std::isnan(a) && std::isnan(b)) continue;
    if (a == b) continue;  // also equal infinities
    double err = std::abs(a - b);
    if (!(err <= tol)) {  // NaN against a number fails too
      if (!c.firstDiff) c.firstDiff = i;
      continue;
    }
    c.maxAbsError = std::max(c.maxAbsError, err);
  }
  return c;
}

std::vector<int64_t> unflatten(const interp::Shape& shape, size_t flat) {
  std::vector<int64_t> idx(shape.size());
  auto st = interp::stridesOf(shape);
  int64_t rest = static_cast<int64_t>(flat);
  for (size_t d = 0; d < shape.size(); ++d) {
    idx[d] = st[d] ? rest / st[d] : 0;
    rest -= idx[d] * st[d];
  }
  return idx;
}

}  // namespace tangle::replay::detail
