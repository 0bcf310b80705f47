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
    p *= s[i];
  }
  return p;
}

bool sameNumel(const sym::Context& symbols, const Shape& a, const Shape& b) {
  if (allConcrete(a) && allConcrete(b)) return product(a, 0, a.size()) == product(b, 0, b.size());
  auto numel = [](const Shape& s) {
    sym::ExprId p = sym::constant(1);
    for (Dim d : s) p = sym::mul(p, sym::fromDim(d));
    return p;
  };
  return symbols.proveEqual(numel(a), numel(b));
}

std::optional<int64_t> normDim(int64_t d, int64_t rank) {
  if (d < 0) d += rank;
  if (d < 0 || d >= rank) return std::nullopt;
  return d;
}

std::optional<Dim> attrDim(const eg::AttrList& a, size_t i) {
  if (i >= a.size() || (a[i].kind != eg::Attr::Kind::Int && a[i].kind != eg::Attr::Kind::SymDim)) return std::nullopt;
  return a[i].i;
}

std::optional<int64_t> attrInt(const eg::AttrList& a, size_t i) {
  if (i >= a.size()) return std::nullopt;
  if (a[i].kind != eg::Attr::Kind::Int) return std::nullopt;
  return a[i].i;
}

std::optional<bool> attrBool(const eg::AttrList& a, size_t i) {
  if (i >= a.size()) return std::nullopt;
  if (a[i].kind == eg::Attr::Kind::Bool) return a[i].i != 0;
  if (a[i].kind == eg::Attr::Kind::Int && (a[i].i == 0 || a[i].i == 1)) return a[i].i != 0;
  return std::nullopt;
}

std::optional<double> attrNumber(const eg::AttrList& a, size_t i) {
  if (i >= a.size()) return std::nullopt;
  if (a[i].kind == eg::Attr::Kind::Float) return a[i].f;
  if (a[i].kind == eg::Attr::Kind::Int || a[i].kind == eg::Attr::Kind::Bool) return static_cast<double>(a[i].i);
  return std::nullopt;
}

const std::vector<int64_t>* attrInts(const eg::AttrList& a, size_t i) {
  if (i >= a.size() || a[i].kind != eg::Attr::Kind::IntList) return nullptr;
  return &a[i].list;
}

std::optional<std::vector<int64_t>> reducedDims(const std::vector<int64_t>& dims, int64_t rank) {
  std::vector<int64_t> out;
  if (dims.empty()) {
    for (int64_t i = 0; i < rank; ++i) out.push_back(i);
    return out;
  }
  for (int64_t d : dims) {
    auto n = normDim(d, rank);
    if (!n) return std::nullopt;
    out.push_back(*n);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<int64_t> transposePerm(int64_t d0, int64_t d1, int64_t rank) {
  std::vector<int64_t> p(static_cast<size_t>(rank));
  for (int64_t i = 0; i < rank; ++i) p[i] = i;
  if (d0 >= 0 && d1 >= 0 && d0 < rank && d1 < rank) std::swap(p[d0], p[d1]);
  return p;
}

}  // namespace tangle::ops
