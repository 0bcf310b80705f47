// Scalar constants, unary and cast, broadcasting binary ops.
#include <algorithm>
#include <cmath>

#include "interp/detail.h"
#include "support/dims.h"
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

template <class F>
Result binary(const eg::AttrList& a, const Inputs& in, F f) {
  auto xs = tensors(in, 2);
  if (!xs || !a.empty()) return std::nullopt;
  auto out = zipBroadcast(*(*xs)[0], *(*xs)[1], f);
  if (!out) return std::nullopt;
  return Value::of(std::move(*out));
}

}  // namespace

}  // namespace tangle::interp::detail

namespace tangle::interp::kernels {

using detail::mapUnary;

Result map(const eg::AttrList& a, const Inputs& in, double (*f)(double)) {
  return a.empty() ? mapUnary(in, f) : std::nullopt;
}

Result constant(const eg::AttrList& a, const Inputs& in) {
  auto v = eg::attrNumber(a, 0);
  if (!in.empty() || a.size() != 1 || !v) return std::nullopt;
  return Value::of(Tensor::scalar(*v));
}
Result add(const eg::AttrList& a, const Inputs& in) { return detail::binary(a, in, [](double u, double v) { return u + v; }); }
Result sub(const eg::AttrList& a, const Inputs& in) { return detail::binary(a, in, [](double u, double v) { return u - v; }); }
Result mul(const eg::AttrList& a, const Inputs& in) { return detail::binary(a, in, [](double u, double v) { return u * v; }); }
// true division
Result div(const eg::AttrList& a, const Inputs& in) { return detail::binary(a, in, [](double u, double v) { return u / v; }); }
Result neg(const eg::AttrList& a, const Inputs& in) { return map(a, in, [](double x) { return -x; }); }
Result exp(const eg::AttrList& a, const Inputs& in) { return map(a, in, [](double x) { return std::exp(x); }); }
Result log(const eg::AttrList& a, const Inputs& in) { return map(a, in, [](double x) { return std::log(x); }); }
Result silu(const eg::AttrList& a, const Inputs& in) { return map(a, in, [](double x) { return x * detail::sigmoid(x); }); }
Result relu(const eg::AttrList& a, const Inputs& in) { return map(a, in, [](double x) { return x > 0 ? x : 0.0; }); }
Result tanh(const eg::AttrList& a, const Inputs& in) { return map(a, in, [](double x) { return std::tanh(x); }); }
Result sigmoid(const eg::AttrList& a, const Inputs& in) { return map(a, in, detail::sigmoid); }
// log_sigmoid x = (min(x, 0) - log1p(exp(-|x|)), exp(-|x|)): ATen's CPU
// log_sigmoid_forward, whose second output its backward reads.
Result logSigmoid(const eg::AttrList& a, const Inputs& in) {
  auto xs = detail::tensors(in, 1);
  if (!xs || !a.empty()) return std::nullopt;
  Tensor out = *(*xs)[0], buffer = out;
  for (size_t i = 0; i < out.data.size(); ++i) {
    double x = out.data[i], z = std::exp(-std::fabs(x));
    out.data[i] = std::min(x, 0.0) - std::log1p(z);
    buffer.data[i] = z;
  }
  return Value::tupleOf(std::move(out), std::move(buffer));
}
Result rsqrt(const eg::AttrList& a, const Inputs& in) { return map(a, in, [](double x) { return 1.0 / std::sqrt(x); }); }
Result sqrt(const eg::AttrList& a, const Inputs& in) { return map(a, in, [](double x) { return std::sqrt(x); }); }

// gelu["none"] (exact, erf) or gelu["tanh"]; no attribute = exact.
Result gelu(const eg::AttrList& a, const Inputs& in) {
  std::string approx = "none";
  if (a.size() == 1 && a[0].kind == eg::Attr::Kind::Str) approx = eg::symbolName(static_cast<eg::Symbol>(a[0].i));
  else if (!a.empty()) return std::nullopt;
  if (approx == "none") return mapUnary(in, detail::gelu);
  if (approx == "tanh") return mapUnary(in, detail::geluTanh);
  return std::nullopt;
}

// pow_scalar[e] x = x ** e
Result powScalar(const eg::AttrList& a, const Inputs& in) {
  auto e = eg::attrNumber(a, 0);
  if (a.size() != 1 || !e) return std::nullopt;
  double exponent = *e;
  return mapUnary(in, [exponent](double x) { return std::pow(x, exponent); });
}

Result cast(const eg::AttrList& a, const Inputs& in) { return detail::cast(a, in); }

}  // namespace tangle::interp::kernels
