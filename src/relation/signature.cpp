#include "relation/signature.h"

#include <algorithm>
#include <array>
#include <vector>

#include "relation/stars.h"

namespace tangle::rel {

namespace {

enum class ArgType { Tensor, Int, IntList };

struct KwParam {
  std::string_view name;
  bool required;
};

struct OpSignature {
  std::string_view op;
  std::string_view usage;
  std::vector<ArgType> positional;  // when variadic: at least one, all tensors
  bool variadic;
  std::vector<KwParam> keywords;  // all integers
};

const std::array<OpSignature, 7>& signatures() {
  static const std::array<OpSignature, 7> sigs = {{
      {"concat", "concat(x1, x2, ..., dim=d)", {}, true, {{"dim", true}}},
      {"shard", "shard(D*.x, dim=d)", {ArgType::Tensor}, false, {{"dim", true}}},
      {"sum", "sum(x1, x2, ...) or sum(D*.x)", {}, true, {}},
      {"slice",
       "slice(x, dim=d, start=a, end=b) or slice(x, dim=d, start=a, end=b, step=s)",
       {ArgType::Tensor},
       false,
       {{"dim", true}, {"start", true}, {"end", true}, {"step", false}}},
      {"transpose", "transpose(x, d0, d1)", {ArgType::Tensor, ArgType::Int, ArgType::Int}, false, {}},
      {"permute", "permute(x, [d0, d1, ...])", {ArgType::Tensor, ArgType::IntList}, false, {}},
      {"reshape", "reshape(x, [s0, s1, ...])", {ArgType::Tensor, ArgType::IntList}, false, {}},
  }};
  return sigs;
}

const OpSignature* find(std::string_view op) {
  for (const auto& s : signatures())
    if (s.op == op) return &s;
  return nullptr;
}

bool hasType(const RelExpr& e, ArgType t) {
  switch (t) {
    case ArgType::Tensor: return e.kind == RelExpr::Kind::Tensor || e.kind == RelExpr::Kind::Call;
    case ArgType::Int: return e.kind == RelExpr::Kind::Int;
    case ArgType::IntList: return e.kind == RelExpr::Kind::IntList;
  }
  return false;
}

const char* typeName(ArgType t) {
  switch (t) {
    case ArgType::Tensor: return "a tensor expression";
    case ArgType::Int: return "an integer";
    case ArgType::IntList: return "an integer list like [1, 0]";
  }
  return "?";
}

[[noreturn]] void fail(const RelExpr& call, const OpSignature& sig, const std::string& msg) {
  throw InputError(call.loc, msg + " (usage: " + std::string(sig.usage) + ")");
}

void checkValues(const RelExpr& call) {
  if (call.op == "slice") {
    if (const RelExpr* step = call.kwarg("step"); step && step->i <= 0)
      throw InputError(step->loc, "slice step must be positive, got " + std::to_string(step->i));
  } else if (call.op == "permute") {
    const auto& dims = call.args[1].ints;
    const int64_t rank = static_cast<int64_t>(dims.size());
    std::vector<bool> seen(dims.size(), false);
    for (int64_t d : dims) {
      int64_t k = d < 0 ? d + rank : d;
      if (k < 0 || k >= rank || seen[k])
        throw InputError(call.args[1].loc,
                         "permute dims " + call.args[1].toString() + " are not a permutation");
      seen[k] = true;
    }
  } else if (call.op == "reshape") {
    const auto& shape = call.args[1].ints;
    if (std::any_of(shape.begin(), shape.end(), [](int64_t s) { return s < -1; }) ||
        std::count(shape.begin(), shape.end(), int64_t{-1}) > 1)
      throw InputError(call.args[1].loc, "bad reshape shape " + call.args[1].toString() +
                                             " (sizes are >= 0, at most one -1)");
  } else if (call.op == "shard") {
    if (!hasFreeStar(call.args[0]))
      throw InputError(call.args[0].loc, "shard(" + call.args[0].toString() +
                                             ", ...) names no D* tensor; write shard(D*.x, dim=d)");
  }
}

}  // namespace

bool isKnownOp(std::string_view op) { return find(op) != nullptr; }

void checkCall(const RelExpr& call) {
  const OpSignature* sig = find(call.op);
  if (!sig) throw InputError(call.loc, "unknown op '" + call.op + "'");
  const std::string op(sig->op);

  if (sig->variadic) {
    if (call.args.empty()) fail(call, *sig, op + " needs at least one tensor");
    for (size_t k = 0; k < call.args.size(); ++k)
      if (!hasType(call.args[k], ArgType::Tensor))
        fail(call, *sig, "argument " + std::to_string(k + 1) + " of " + op +
                             " must be a tensor expression, got " + call.args[k].toString());
  } else {
    if (call.args.size() != sig->positional.size())
      fail(call, *sig, op + " takes " + std::to_string(sig->positional.size()) +
                           " positional argument" + (sig->positional.size() == 1 ? "" : "s") +
                           ", got " + std::to_string(call.args.size()));
    for (size_t k = 0; k < call.args.size(); ++k)
      if (!hasType(call.args[k], sig->positional[k]))
        fail(call, *sig, "argument " + std::to_string(k + 1) + " of " + op + " must be " +
                             typeName(sig->positional[k]) + ", got " + call.args[k].toString());
  }

  for (size_t k = 0; k < call.kwargs.size(); ++k) {
    const std::string& name = call.kwargs[k].first;  // not a structured binding: clang 14 (fuzz/) cannot capture one
    const RelExpr& value = call.kwargs[k].second;
    auto it = std::find_if(sig->keywords.begin(), sig->keywords.end(),
                           [&](const KwParam& p) { return p.name == name; });
    if (it == sig->keywords.end()) fail(call, *sig, "unknown argument '" + name + "' to " + op);
    for (size_t j = 0; j < k; ++j)
      if (call.kwargs[j].first == name)
        fail(call, *sig, "argument '" + name + "' given twice to " + op);
    if (!hasType(value, ArgType::Int))
      fail(call, *sig, op + " argument " + name + "= must be an integer, got " + value.toString());
  }
  for (const KwParam& p : sig->keywords)
    if (p.required && !call.kwarg(p.name))
      fail(call, *sig, op + " needs " + std::string(p.name) + "=");

  checkValues(call);
}

}  // namespace tangle::rel
