#include "ops/shape.h"

#include <algorithm>

#include "sym/context.h"

namespace tangle::ops {

std::optional<Shape> broadcastShapes(const sym::Context& symbols, const Shape& a, const Shape& b) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    // Align from the right.
    Dim da = i + a.size() >= n ? a[i + a.size() - n] : 1;
    Dim db = i + b.size() >= n ? b[i + b.size() - n] : 1;
    if (sym::dimEqual(symbols, da, db) || db == 1) out[i] = da;
    else if (da == 1) out[i] = db;
    else return std::nullopt;
  }
  return out;
}

namespace {
int rankOf(DType t) {  // category and width order for promotion
  switch (t) {
    case DType::Bool: return 0;
    case DType::U8: return 1;
    case DType::I8: return 2;
    case DType::I16: return 3;
    case DType::I32: return 4;
    case DType::I64: return 5;
    case DType::F16: return 10;
    case DType::BF16: return 11;
    case DType::F32: return 12;
    case DType::F64: return 13;
    case DType::C64: return 20;
    case DType::C128: return 21;
    case DType::Unknown: return -1;
  }
  return -1;
}
}  // namespace

DType promote(DType a, DType b) {
  if (a == DType::Unknown) return b;
  if (b == DType::Unknown || a == b) return a;
  // f16 + bf16 -> f32 in PyTorch.
  if ((a == DType::F16 && b == DType::BF16) || (a == DType::BF16 && b == DType::F16)) return DType::F32;
  // u8 + i8 -> i16: neither holds every value of the other.
  if ((a == DType::U8 && b == DType::I8) || (a == DType::I8 && b == DType::U8)) return DType::I16;
  return rankOf(a) >= rankOf(b) ? a : b;
}

bool sameShape(const sym::Context& symbols, const Shape& a, const Shape& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!sym::dimEqual(symbols, a[i], b[i])) return false;
  return true;
}

bool allConcrete(const Shape& s) {
  return std::none_of(s.begin(), s.end(), [](Dim d) { return isSymbolic(d); });
}

std::optional<int64_t> product(const Shape& s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to && i < s.size(); ++i) {
    if (isSymbolic(s[i])) return std::nullopt;
    if (__builtin_mul_overflow(p, s[i], &p)) return std::nullopt;
  }
  return p;
}

bool sameNumel(const sym::Context& symbols, const Shape& a, const Shape& b) {
  if (allConcrete(a) && allConcrete(b)) {
    auto na = product(a, 0, a.size()), nb = product(b, 0, b.size());
    return na && nb && *na == *nb;  // a count past int64 is not proved equal to anything
  }
  auto numel = [](const Shape& s) {
    sym::ExprId p = sym::constant(1);
    for (Dim d : s) p = sym::mul(p, sym::fromDim(d));
    return p;
  };
  try {
    return symbols.proveEqual(numel(a), numel(b));
  } catch (const sym::Overflow&) {
    return false;
  }
}

}  // namespace tangle::ops
