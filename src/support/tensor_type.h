// Element types and shapes, shared by the graph IR and the e-graph analysis
// (which must not depend on each other).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sym/expr.h"

namespace tangle {

enum class DType : uint8_t { Unknown, F64, F32, F16, BF16, I64, I32, I16, I8, U8, Bool, C64, C128 };

// "f32" <-> DType::F32 (the FX annotation spelling); also accepts torch names
// ("float32", "int64", "bool", "torch.float32", ...). Unknown spellings give DType::Unknown.
DType parseDType(const std::string& s);
const char* dtypeName(DType t);  // FX spelling: "f32", "i64", "b8", ...
inline bool isFloating(DType t) {
  return t == DType::F64 || t == DType::F32 || t == DType::F16 || t == DType::BF16;
}

// A dimension is a concrete size (>= 0) or a symbolic size such as `S.s0`,
// encoded as a negative number: -1 - (its sym::ExprId); see sym/expr.h.
using Dim = int64_t;
inline bool isSymbolic(Dim d) { return sym::isSymbolicDim(d); }

struct TensorType {
  DType dtype = DType::Unknown;
  std::vector<Dim> shape;
  bool operator==(const TensorType&) const = default;
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
};

// "f32[8, 16]"
std::string toString(const TensorType& t);

// False when the concrete dims multiply to more than int64 holds (no real
// tensor has that many elements): readers refuse such a shape, so that
// element counts computed later never overflow.
inline bool numelFits(const std::vector<Dim>& shape) {
  int64_t n = 1;
  for (Dim d : shape)
    if (!isSymbolic(d) && __builtin_mul_overflow(n, d, &n)) return false;
  return true;
}

}  // namespace tangle
