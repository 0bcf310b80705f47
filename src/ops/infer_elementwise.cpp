// Type inference of scalar constants and elementwise ops.
#include <cmath>

#include "ops/infer.h"

namespace tangle::ops::detail {

namespace {
bool isIntegral(DType t) {
  return t == DType::Bool || t == DType::U8 || t == DType::I8 || t == DType::I16 || t == DType::I32 ||
         t == DType::I64;
}
// A "weak" operand: a 0-d constant (python scalar or scalar tensor) does not
// decide the result dtype unless it is of a higher category (float over int).
bool isWeak(const eg::ClassData& d) { return d.constant && d.tensor() && d.tensor()->shape.empty(); }
}  // namespace

// const[v]: a 0-d scalar of unknown (weak) dtype.
Data inferConst(const eg::EGraph&, const eg::ENode& n) {
  const auto& a = eg::attrs(n.attrs);
  auto v = attrNumber(a, 0);
  if (!n.children.empty() || a.size() != 1 || !v) return std::nullopt;
  return tensorData(DType::Unknown, {}, *v);
}

Data inferUnary(const eg::EGraph& g, const eg::ENode& n) {
  const TensorType* x = childTensor(g, n, 0);
  if (!x || n.children.size() != 1) return std::nullopt;
  return tensorData(x->dtype, x->shape);
}

// cast["f16"] x: dtype conversion.
Data inferCast(const eg::EGraph& g, const eg::ENode& n) {
  const auto& a = eg::attrs(n.attrs);
  const TensorType* x = childTensor(g, n, 0);
  if (!x || n.children.size() != 1 || a.size() != 1 || a[0].kind != eg::Attr::Kind::Str) return std::nullopt;
  DType to = parseDType(eg::symbolName(static_cast<eg::Symbol>(a[0].i)));
  if (to == DType::Unknown) return std::nullopt;
  auto c = childConstant(g, n, 0);
  return tensorData(to, x->shape, c);
}

// add/sub/mul/div x y: numpy broadcasting; dtype follows the tensor operands.
Data inferBinary(const eg::EGraph& g, const eg::ENode& n) {
  if (n.children.size() != 2 || !eg::attrs(n.attrs).empty()) return std::nullopt;
  const eg::ClassData& da = g.data(n.children[0]);
  const eg::ClassData& db = g.data(n.children[1]);
  const TensorType* a = da.tensor();
  const TensorType* b = db.tensor();
  if (!a || !b) return std::nullopt;
  auto shape = broadcastShapes(g.symbols(), a->shape, b->shape);
  if (!shape) return std::nullopt;

  bool weakA = isWeak(da), weakB = isWeak(db);
  DType dt;
  if (weakA == weakB) dt = promote(a->dtype, b->dtype);
  else {
    const TensorType& strong = weakA ? *b : *a;
    const eg::ClassData& weak = weakA ? da : db;
    const TensorType& weakT = weakA ? *a : *b;
    dt = strong.dtype;
    bool weakFloat = isFloating(weakT.dtype) ||
                     (weakT.dtype == DType::Unknown && *weak.constant != std::floor(*weak.constant));
    if (isIntegral(dt) && weakFloat) dt = DType::F32;
  }
  static const eg::Symbol kAdd = eg::intern("add"), kSub = eg::intern("sub"), kMul = eg::intern("mul"),
                          kDiv = eg::intern("div");
  if (n.op == kDiv && isIntegral(dt)) dt = DType::F32;  // true division

  std::optional<double> c;
  if (da.constant && db.constant) {
    double x = *da.constant, y = *db.constant;
    if (n.op == kAdd) c = x + y;
    else if (n.op == kSub) c = x - y;
    else if (n.op == kMul) c = x * y;
    else if (n.op == kDiv && y != 0) c = x / y;
  }
  return tensorData(dt, std::move(*shape), c);
}

}  // namespace tangle::ops::detail
