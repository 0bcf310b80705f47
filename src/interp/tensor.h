// Dense row-major float64 tensors and tuple values for the reference
// interpreter. Every dtype (bool, ints, halves) is modelled as double.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tangle::interp {

using Shape = std::vector<int64_t>;

int64_t numelOf(const Shape& s);
// Row-major strides of a shape (innermost stride 1).
std::vector<int64_t> stridesOf(const Shape& s);

struct Tensor {
  Shape shape;
  std::vector<double> data;  // numelOf(shape) elements, row-major

  static Tensor filled(Shape shape, double v);
  static Tensor scalar(double v) { return filled({}, v); }
  static Tensor of(Shape shape, std::vector<double> data);  // data.size() must equal numelOf(shape)
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t numel() const { return static_cast<int64_t>(data.size()); }
  bool operator==(const Tensor&) const = default;
};

// A tensor, or a tuple of tensors (native_layer_norm, split).
struct Value {
  std::vector<Tensor> items;
  bool tuple = false;

  // Moved in, never copied: a braced list ({std::move(t)}) is an initializer_list, whose
  // elements a vector can only copy (most of GPT paral4_layer8's replay memmove was those copies).
  static Value of(Tensor t) {
    Value v;
    v.items.push_back(std::move(t));
    return v;
  }
  static Value tupleOf(std::vector<Tensor> ts) { return Value{std::move(ts), true}; }
  template <class... More>
  static Value tupleOf(Tensor first, More... more) {
    Value v{{}, true};
    v.items.reserve(1 + sizeof...(more));
    v.items.push_back(std::move(first));
    (v.items.push_back(std::move(more)), ...);
    return v;
  }
  const Tensor* tensor() const { return (!tuple && items.size() == 1) ? &items[0] : nullptr; }
};

// "[2, 3]"
std::string shapeString(const Shape& s);
// "f64[2, 3] {0.5, 1, ...}" (at most `maxElems` elements)
std::string toString(const Tensor& t, size_t maxElems = 8);

}  // namespace tangle::interp
