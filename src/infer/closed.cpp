#include "infer/closed.h"

#include <cmath>
#include <set>
#include <string_view>

#include "ops/ops.h"
#include "ops/shape.h"

namespace tangle::closed {

namespace {

bool integral(DType t) {
  return t == DType::I64 || t == DType::I32 || t == DType::I16 || t == DType::I8 || t == DType::U8 || t == DType::Bool;
}

// Whether v is a value of a binary float format with `mant` significand bits
// (hidden bit included) and normal exponents up to `emax` (smallest normal
// 2^(1 - emax)): zero, infinities, normals and subnormals.
bool inFloatFormat(double v, int mant, int emax) {
  if (v == 0 || std::isinf(v)) return true;
  if (std::isnan(v)) return false;
  int e;
  double m = std::frexp(std::fabs(v), &e);  // |v| = m * 2^e, m in [0.5, 1)
  int emin = 2 - emax;                      // exponent (frexp's) of the smallest normal
  if (e > emax + 1) return false;
  int bits = e >= emin ? mant : mant - (emin - e);  // subnormals keep fewer bits
  if (bits <= 0) return false;
  double scaled = std::ldexp(m, bits);
  return scaled == std::floor(scaled);
}

// A term node's type as far as exactness needs it: a tensor dtype, or a
// python scalar ("weak": it takes the tensor operand's dtype).
struct Ty {
  DType dtype = DType::Unknown;
  bool weak = false;
};

// PyTorch's promotion for the cases met here (same category, or a scalar
// of a higher category: the default float dtype).
Ty promote(Ty a, Ty b) {
  if (a.weak && b.weak) return {isFloating(a.dtype) || isFloating(b.dtype) ? DType::F64 : DType::I64, true};
  if (a.weak) std::swap(a, b);
  if (b.weak) return isFloating(b.dtype) && !isFloating(a.dtype) ? Ty{DType::F32, false} : a;
  return {ops::promote(a.dtype, b.dtype), false};
}

bool isIntegral(Ty t) { return integral(t.dtype); }

// A python literal: an integer when integral and exact as one (-3.4e38 is a float).
Ty literal(double v) {
  bool integer = v == std::floor(v) && std::fabs(v) <= 9007199254740992.0;
  return {integer ? DType::I64 : DType::F64, true};
}

// Operators whose result is exact whatever the dtype: they select, move or
// compare values, never combine them into a new one.
const std::set<std::string_view>& selecting() {
  static const std::set<std::string_view> s{"slice", "concat", "transpose", "permute", "reshape", "expand",
                                            "where", "index_rows", "gather_rows", "index_nd", "tril", "lt",
                                            "le", "gt", "ge", "eq", "ne", "or", "and", "neg", "abs",
                                            "amax", "rmax", "rmin", "const", "arange", "cast", "one_hot"};
  return s;
}

// Integer arithmetic: exact in float64 while every value stays below 2^53
// (checked on the values); refused on float operands, where it may round.
const std::set<std::string_view>& integerArithmetic() {
  static const std::set<std::string_view> s{"add", "sub", "mul", "cumsum", "sum", "sum_dim"};
  return s;
}

bool isComparison(std::string_view op) {
  return op == "lt" || op == "le" || op == "gt" || op == "ge" || op == "eq" || op == "ne" || op == "or" || op == "and";
}

std::string typeName(Ty t) {
  if (t.weak) return isFloating(t.dtype) ? "a float literal" : "an integer literal";
  return std::string("a ") + dtypeName(t.dtype);
}

}  // namespace

bool representable(double v, DType t) {
  switch (t) {
    case DType::Bool: return v == 0 || v == 1;
    case DType::U8: return v == std::floor(v) && v >= 0 && v <= 255;
    case DType::I8: return v == std::floor(v) && v >= -128 && v <= 127;
    case DType::I16: return v == std::floor(v) && v >= -32768 && v <= 32767;
    case DType::I32: return v == std::floor(v) && v >= -2147483648.0 && v <= 2147483647.0;
    // int64 values beyond 2^53 are not all exact in float64: refused.
    case DType::I64: return v == std::floor(v) && std::fabs(v) <= 9007199254740992.0;
    case DType::F64: return !std::isnan(v);
    case DType::F32: return inFloatFormat(v, 24, 127);
    case DType::F16: return inFloatFormat(v, 11, 15);
    case DType::BF16: return inFloatFormat(v, 8, 127);
    default: return false;
  }
}

ClosedTensors::ClosedTensors(const LGraph& g, const std::unordered_map<int, double>& consts, int64_t maxElements)
    : g_(g), consts_(consts), maxElements_(maxElements), closed_(g.nodes.size(), 0) {
  // Iterative post-order (an implementation's cross-rank references are not
  // in node order); a cycle (malformed input) is simply not closed.
  std::vector<char> state(g.nodes.size(), 0);  // 0 new, 1 on stack, 2 done
  std::vector<std::pair<int, size_t>> stack;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const int root = g.resolve(static_cast<int>(i));
    if (state[root] == 2) continue;
    stack.assign(1, {root, 0});
    while (!stack.empty()) {
      auto& [d, k] = stack.back();
      if (state[d] == 2) {
        stack.pop_back();
        continue;
      }
      state[d] = 1;
      const LNode& n = g.nodes[d];
      // Operands are alias-resolved already (LNode::operands): no resolve, whose
      // read of each operand's node was most of this walk at 256 ranks.
      if (k < n.operands.size()) {
        int o = n.operands[k++];
        if (state[o] == 0) stack.push_back({o, 0});
        continue;
      }
      bool c;
      if (n.tuple()) c = false;
      else if (n.isInput) c = consts.count(d) > 0;
      else if (n.def.nodes.empty()) c = false;
      else {
        c = true;
        for (int o : n.operands) c = c && state[o] == 2 && closed_[o];
      }
      closed_[d] = c;
      state[d] = 2;
      stack.pop_back();
    }
  }
}

DType ClosedTensors::dtype(int node) const {
  const TensorType* t = g_.nodes[static_cast<size_t>(g_.resolve(node))].data.tensor();
  return t ? t->dtype : DType::Unknown;
}

std::string ClosedTensors::refusal(int node) const {
  node = g_.resolve(node);
  if (!closed_[node]) return g_.nodes[node].name + " reads a graph input";
  auto it = slots_.find(node);
  return it == slots_.end() ? std::string() : it->second.refusal;
}

const interp::Tensor* ClosedTensors::value(int node) {
  node = g_.resolve(node);
  if (!closed_[node]) return nullptr;
  std::vector<int> stack{node};
  while (!stack.empty()) {
    int d = stack.back();
    if (slots_[d].done) {
      stack.pop_back();
      continue;
    }
    bool ready = true;
    for (int o : g_.nodes[d].operands)
      if (!slots_[g_.resolve(o)].done) {
        stack.push_back(g_.resolve(o));
        ready = false;
      }
    if (!ready) continue;
    compute(d);
    stack.pop_back();
  }
  return slots_[node].value ? &*slots_[node].value : nullptr;
}

void ClosedTensors::compute(int node) {
  Slot& slot = slots_[node];
  slot.done = true;
  const LNode& n = g_.nodes[node];
  auto refuse = [&](std::string why) { slot.refusal = n.name + ": " + std::move(why); };
  const TensorType* want = n.data.tensor();
  if (!want || want->dtype == DType::Unknown) return refuse("no annotated dtype");
  for (Dim d : want->shape)
    if (isSymbolic(d)) return refuse("symbolic size " + toString(*want));
  int64_t numel = 1;
  for (Dim d : want->shape) numel *= d;
  if (numel > maxElements_)
    return refuse(std::to_string(numel) + " elements, over the cap of " + std::to_string(maxElements_));
  if (n.isInput) {
    double v = consts_.at(node);
    if (!representable(v, want->dtype)) return refuse("its constant is not a " + std::string(dtypeName(want->dtype)));
    slot.value = interp::Tensor::filled(interp::Shape(want->shape.begin(), want->shape.end()), v);
    return;
  }
  std::vector<interp::Value> local;
  std::vector<Ty> types;
  for (const auto& tn : n.def.nodes) {
    std::string_view op = eg::symbolName(tn.op);
    std::vector<interp::Value> kids;
    std::vector<Ty> kidTypes;
    for (const auto& r : tn.children) {
      switch (r.kind) {
        case CanonTerm::Ref::Kind::Operand: {
          int o = g_.resolve(r.operand);
          if (!slots_[o].value) return refuse("reads " + slots_[o].refusal);
          kids.push_back(interp::Value::of(*slots_[o].value));
          kidTypes.push_back({dtype(o), false});
          break;
        }
        case CanonTerm::Ref::Kind::Local:
          kids.push_back(local[static_cast<size_t>(r.local)]);
          kidTypes.push_back(types[static_cast<size_t>(r.local)]);
          break;
        case CanonTerm::Ref::Kind::Scalar:
          kids.push_back(interp::Value::of(interp::Tensor::scalar(r.scalar)));
          kidTypes.push_back(literal(r.scalar));
          break;
      }
    }
    // The result's type, and whether the operator computes it exactly.
    Ty ty;
    if (op == "const") {
      auto v = eg::attrNumber(tn.attrs, 0);
      if (!v) return refuse("a constant without a value");
      ty = literal(*v);
    } else if (op == "arange") {
      ty = {DType::I64, false};
    } else if (op == "cast") {
      ty = {tn.attrs.size() == 1 && tn.attrs[0].kind == eg::Attr::Kind::Str
                ? parseDType(eg::symbolName(static_cast<eg::Symbol>(tn.attrs[0].i)))
                : DType::Unknown,
            false};
      if (ty.dtype == DType::Unknown) return refuse("a cast to an unknown dtype");
    } else if (isComparison(op) || op == "one_hot") {
      ty = {op == "one_hot" ? DType::I64 : DType::Bool, false};
    } else if (op == "where") {
      if (kidTypes.size() != 3) return refuse("where without three operands");
      ty = promote(kidTypes[1], kidTypes[2]);
    } else if (op == "concat") {
      for (const Ty& k : kidTypes) ty = ty.dtype == DType::Unknown ? k : promote(ty, k);
    } else if (selecting().count(op)) {
      if (kidTypes.empty()) return refuse(std::string(op) + " without operands");
      ty = kidTypes[0];
    } else if (integerArithmetic().count(op)) {
      for (const Ty& k : kidTypes) {
        if (!isIntegral(k))
          return refuse(std::string(op) + " of " + typeName(k) + " may round: float arithmetic is not evaluated");
        ty = ty.dtype == DType::Unknown ? k : promote(ty, k);
      }
      if (op == "cumsum" || op == "sum_dim" || ty.dtype == DType::Bool) {
        if (op != "cumsum" && op != "sum_dim") return refuse(std::string(op) + " of bools (not integer arithmetic)");
        ty = {DType::I64, false};  // PyTorch accumulates bools and integers in int64
      }
      if (op == "sum_dim") {  // partial sums are not seen: bound them by the sum of magnitudes
        double total = 0;
        for (const auto& k : kids)
          for (double v : k.tensor()->data) total += std::fabs(v);
        if (total > 9007199254740992.0) return refuse("sum_dim whose partial sums may exceed 2^53");
      }
    } else {
      return refuse(std::string(op) + " is not evaluated exactly (it may round or has no exact reference)");
    }
    if (!ops::hasKernel(tn.op)) return refuse(std::string(op) + " has no reference semantics");
    eg::ENode en{tn.op, eg::internAttrs(tn.attrs), std::vector<eg::Id>(tn.children.size(), 0)};
    auto v = ops::evaluate(en, kids);
    const interp::Tensor* t = v ? v->tensor() : nullptr;
    if (!t) return refuse(std::string(op) + " does not accept its operands");
    if (t->numel() > maxElements_)
      return refuse(std::string(op) + " computes " + std::to_string(t->numel()) + " elements, over the cap of " +
                    std::to_string(maxElements_));
    DType check = ty.weak ? (isFloating(ty.dtype) ? DType::F64 : DType::I64) : ty.dtype;
    for (double x : t->data)
      if (!representable(x, check))
        return refuse(std::string(op) + " gives " + std::to_string(x) + ", not exactly " + typeName(ty) + " value");
    local.push_back(std::move(*v));
    types.push_back(ty);
  }
  const interp::Tensor& out = *local.back().tensor();
  Ty root = types.back();
  if (interp::Shape(want->shape.begin(), want->shape.end()) != out.shape)
    return refuse("computed shape " + interp::shapeString(out.shape) + " differs from the annotated " + toString(*want));
  // The graph's dtype must be the one computed (a literal takes it); an
  // integer computed where the graph says float is exact when it fits.
  bool agrees = root.weak ? isFloating(root.dtype) <= isFloating(want->dtype)
                          : root.dtype == want->dtype || (integral(root.dtype) && isFloating(want->dtype));
  if (!agrees) return refuse("computed as " + typeName(root) + " but annotated " + toString(*want));
  for (double x : out.data)
    if (!representable(x, want->dtype))
      return refuse(std::to_string(x) + " is not exactly a " + std::string(dtypeName(want->dtype)) + " value");
  slot.value = out;
}

}  // namespace tangle::closed
