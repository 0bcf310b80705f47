// evalNode: dispatch by operator family.
#include <unordered_map>

#include "interp/detail.h"

namespace tangle::interp {

namespace {
using detail::Inputs;
using detail::Result;
using Family = Result (*)(const eg::ENode&, const Inputs&);

const std::unordered_map<eg::Symbol, Family>& families() {
  static const std::unordered_map<eg::Symbol, Family> m = [] {
    std::unordered_map<eg::Symbol, Family> f;
    for (const char* op : {"slice", "concat", "transpose", "permute", "reshape", "expand", "sum", "rmax", "rmin",
                           "split", "getitem"})
      f[eg::intern(op)] = detail::evalRearrange;
    for (const char* op : {"const", "add", "sub", "mul", "div", "neg", "exp", "log", "gelu", "silu", "relu", "tanh",
                           "sigmoid", "rsqrt", "sqrt", "pow_scalar", "cast"})
      f[eg::intern(op)] = detail::evalElementwise;
    for (const char* op : {"mm", "bmm", "matmul"}) f[eg::intern(op)] = detail::evalLinalg;
    for (const char* op : {"sum_dim", "mean_dim", "amax", "softmax", "native_layer_norm", "apex_layer_norm"})
      f[eg::intern(op)] = detail::evalReduce;
    for (const char* op : {"dropout", "where", "lt", "le", "gt", "ge", "eq", "ne", "or", "and", "index_rows",
                           "gather_rows", "max_dim", "gelu_backward", "apex_layer_norm_bwd", "rms_norm", "rotary", "attention"})
      f[eg::intern(op)] = detail::evalModel;
    return f;
  }();
  return m;
}
}  // namespace

static std::unordered_map<eg::Symbol, CustomEval>& customs() {
  static std::unordered_map<eg::Symbol, CustomEval> m;
  return m;
}

void registerCustomEval(eg::Symbol op, CustomEval eval) { customs()[op] = std::move(eval); }

bool supports(eg::Symbol op) { return families().count(op) != 0 || customs().count(op) != 0; }

std::optional<Value> evalNode(const eg::ENode& n, const std::vector<Value>& children) {
  if (children.size() != n.children.size()) return std::nullopt;
  auto it = families().find(n.op);
  if (it != families().end()) return it->second(n, children);
  if (auto c = customs().find(n.op); c != customs().end()) return c->second(n, children);
  return std::nullopt;
}

}  // namespace tangle::interp
