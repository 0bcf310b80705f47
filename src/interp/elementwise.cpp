// Scalar constants, unary and cast, broadcasting binary ops.
#include <cmath>

#include "interp/detail.h"
#include "ops/shape.h"
#include "support/tensor_type.h"

namespace tangle::interp::detail {

namespace {

double gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double geluTanh(double x) {
  const double k = std::sqrt(2.0 / M_PI);
  return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}
double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

template <class F>
Result mapUnary(const Inputs& in, F f) {
  auto xs = tensors(in, 1);
  if (!xs) return std::nullopt;
  Tensor out = *(*xs)[0];
  for (double& v : out.data) v = f(v);
  return Value::of(std::move(out));
}

// The scalar function of a unary op, or nullptr-equivalent (false) when unknown.
bool unaryFn(const std::string& op, const eg::AttrList& a, double (*&fn)(double), double& exponent) {
  if (op == "pow_scalar") {
    auto e = ops::attrNumber(a, 0);
    if (a.size() != 1 || !e) return false;
    exponent = *e;
    fn = nullptr;  // handled by the caller
    return true;
  }
  if (op == "gelu") {
    // gelu["none"] (exact, erf) or gelu["tanh"]; no attribute = exact.
    std::string approx = "none";
    if (a.size() == 1 && a[0].kind == eg::Attr::Kind::Str) approx = eg::symbolName(static_cast<eg::Symbol>(a[0].i));
    else if (!a.empty()) return false;
    if (approx == "none") fn = gelu;
    else if (approx == "tanh") fn = geluTanh;
    else return false;
    return true;
  }
  if (!a.empty()) return false;
  static const std::pair<const char*, double (*)(double)> kFns[] = {
      {"neg", [](double x) { return -x; }},
      {"exp", [](double x) { return std::exp(x); }},
      {"log", [](double x) { return std::log(x); }},
      {"silu", [](double x) { return x * sigmoid(x); }},
      {"relu", [](double x) { return x > 0 ? x : 0.0; }},
      {"tanh", [](double x) { return std::tanh(x); }},
      {"sigmoid", sigmoid},
      {"rsqrt", [](double x) { return 1.0 / std::sqrt(x); }},
      {"sqrt", [](double x) { return std::sqrt(x); }},
  };
  for (const auto& [name, f] : kFns)
    if (op == name) {
      fn = f;
      return true;
    }
  return false;
}

// cast["i64"] x: integral targets truncate toward zero, bool tests != 0;
// floating targets keep the value (no rounding to half precision is modelled).
Result cast(const eg::AttrList& a, const Inputs& in) {
  if (a.size() != 1 || a[0].kind != eg::Attr::Kind::Str) return std::nullopt;
  DType to = parseDType(eg::symbolName(static_cast<eg::Symbol>(a[0].i)));
  switch (to) {
    case DType::Unknown: return std::nullopt;
    case DType::Bool: return mapUnary(in, [](double x) { return x != 0 ? 1.0 : 0.0; });
    case DType::U8: case DType::I8: case DType::I16: case DType::I32: case DType::I64:
      return mapUnary(in, [](double x) { return std::trunc(x); });
    default: return mapUnary(in, [](double x) { return x; });
  }
}

Result binary(const std::string& op, const eg::AttrList& a, const Inputs& in) {
  auto xs = tensors(in, 2);
  if (!xs || !a.empty()) return std::nullopt;
  char k = op == "add" ? '+' : op == "sub" ? '-' : op == "mul" ? '*' : '/';
  auto out = zipBroadcast(*(*xs)[0], *(*xs)[1], [k](double u, double v) {
    return k == '+' ? u + v : k == '-' ? u - v : k == '*' ? u * v : u / v;  // true division
  });
  if (!out) return std::nullopt;
  return Value::of(std::move(*out));
}

}  // namespace

Result evalElementwise(const eg::ENode& n, const Inputs& in) {
  const std::string& op = eg::symbolName(n.op);
  const eg::AttrList& a = eg::attrs(n.attrs);
  if (op == "const") {
    auto v = ops::attrNumber(a, 0);
    if (!in.empty() || a.size() != 1 || !v) return std::nullopt;
    return Value::of(Tensor::scalar(*v));
  }
  if (op == "add" || op == "sub" || op == "mul" || op == "div") return binary(op, a, in);
  if (op == "cast") return cast(a, in);
  double (*fn)(double) = nullptr;
  double e = 0;
  if (!unaryFn(op, a, fn, e)) return std::nullopt;
  if (!fn) return mapUnary(in, [e](double x) { return std::pow(x, e); });
  return mapUnary(in, fn);
}

}  // namespace tangle::interp::detail
