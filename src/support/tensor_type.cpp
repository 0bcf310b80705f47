#include "support/tensor_type.h"

#include <utility>

namespace tangle {

namespace {
struct Spelling {
  const char* name;
  DType type;
};
// First spelling of each type is the canonical (FX annotation) one.
constexpr Spelling kSpellings[] = {
    {"f64", DType::F64},   {"f32", DType::F32},    {"f16", DType::F16},      {"bf16", DType::BF16},
    {"i64", DType::I64},   {"i32", DType::I32},    {"i16", DType::I16},      {"i8", DType::I8},
    {"u8", DType::U8},     {"b8", DType::Bool},    {"c64", DType::C64},      {"c128", DType::C128},
    {"float64", DType::F64}, {"double", DType::F64}, {"float32", DType::F32}, {"float", DType::F32},
    {"float16", DType::F16}, {"half", DType::F16},   {"bfloat16", DType::BF16}, {"int64", DType::I64},
    {"long", DType::I64},  {"int32", DType::I32},  {"int", DType::I32},      {"int16", DType::I16},
    {"int8", DType::I8},   {"uint8", DType::U8},   {"bool", DType::Bool},    {"complex64", DType::C64},
    {"complex128", DType::C128},
};
}  // namespace

DType parseDType(const std::string& raw) {
  std::string s = raw;
  if (s.rfind("torch.", 0) == 0) s = s.substr(6);
  for (const auto& sp : kSpellings)
    if (s == sp.name) return sp.type;
  return DType::Unknown;
}

const char* dtypeName(DType t) {
  for (const auto& sp : kSpellings)
    if (sp.type == t) return sp.name;
  return "unknown";
}

std::string toString(const TensorType& t) {
  std::string out = dtypeName(t.dtype);
  out += "[";
  for (size_t i = 0; i < t.shape.size(); ++i) {
    if (i) out += ", ";
    Dim d = t.shape[i];
    out += sym::dimToString(d);
  }
  return out + "]";
}

}  // namespace tangle
