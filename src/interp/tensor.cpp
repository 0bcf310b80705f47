#include "interp/tensor.h"

#include <cassert>
#include <fmt/format.h>

namespace tangle::interp {

int64_t numelOf(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::vector<int64_t> stridesOf(const Shape& s) {
  std::vector<int64_t> st(s.size());
  int64_t acc = 1;
  for (size_t i = s.size(); i-- > 0;) {
    st[i] = acc;
    acc *= s[i];
  }
  return st;
}

Tensor Tensor::filled(Shape shape, double v) {
  Tensor t;
  t.data.assign(static_cast<size_t>(numelOf(shape)), v);
  t.shape = std::move(shape);
  return t;
}

Tensor Tensor::of(Shape shape, std::vector<double> data) {
  assert(static_cast<int64_t>(data.size()) == numelOf(shape));
  return Tensor{std::move(shape), std::move(data)};
}

std::string shapeString(const Shape& s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

std::string toString(const Tensor& t, size_t maxElems) {
  std::string out = "f64" + shapeString(t.shape) + " {";
  for (size_t i = 0; i < t.data.size() && i < maxElems; ++i) out += (i ? ", " : "") + fmt::format("{:.6g}", t.data[i]);
  if (t.data.size() > maxElems) out += ", ...";
  return out + "}";
}

}  // namespace tangle::interp
