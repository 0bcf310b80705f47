#include "import/type_annotation.h"

#include <algorithm>
#include <charconv>

namespace tangle {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string unqualified(std::string_view name) { return std::string(name); }

// The first ',' outside parentheses (a symbolic dim may be `Max(1, s0)`).
size_t topLevelComma(std::string_view s) {
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '(') ++depth;
    else if (s[i] == ')') --depth;
    else if (s[i] == ',' && depth == 0) return i;
  }
  return std::string_view::npos;
}

AnnotationResult failure(std::string why) {
  AnnotationResult r;
  r.error = std::move(why);
  return r;
}

}  // namespace

AnnotationResult parseTypeAnnotation(std::string_view text) {
  std::string_view s = trim(text);
  if (s.size() > 5 && s.substr(0, 4) == "Sym(" && s.back() == ')') {
    std::string why;
    auto value = sym::parse(trim(s.substr(4, s.size() - 5)), unqualified, &why);
    if (!value) return failure("expected a symbolic value inside 'Sym(...)': " + why);
    AnnotationResult r;
    r.ok = true;
    r.symValue = value;
    return r;
  }
  size_t open = s.find('[');
  if (open == std::string_view::npos || s.back() != ']')
    return failure("expected 'dtype[dims]' (e.g. \"f32[8, 16]\") or 'Sym(...)'");
  TensorType type;
  type.dtype = parseDType(std::string(trim(s.substr(0, open))));
  if (type.dtype == DType::Unknown)
    return failure("unknown element type '" + std::string(trim(s.substr(0, open))) + "'");
  std::string_view dims = trim(s.substr(open + 1, s.size() - open - 2));
  if (!dims.empty()) type.shape.reserve(static_cast<size_t>(std::count(dims.begin(), dims.end(), ',')) + 1);
  while (!dims.empty()) {
    size_t comma = topLevelComma(dims);
    std::string_view d = trim(dims.substr(0, comma));
    if (d.empty()) return failure("expected a dimension between ',' in the shape");
    int64_t value = 0;
    auto [end, ec] = std::from_chars(d.data(), d.data() + d.size(), value);
    if (ec == std::errc() && end == d.data() + d.size() && value >= 0) {
      type.shape.push_back(value);
    } else {
      std::string why;
      auto e = sym::parse(d, unqualified, &why);
      auto dim = e ? sym::toDim(*e) : std::nullopt;
      if (!dim) return failure("expected a size or a symbolic size, found '" + std::string(d) + "'");
      type.shape.push_back(*dim);
    }
    if (comma == std::string_view::npos) break;
    dims = trim(dims.substr(comma + 1));
    if (dims.empty()) return failure("expected a dimension after ','");
  }
  // A complex tensor is held as its real view (torch.view_as_real): the real
  // dtype of its parts and a trailing dim of 2 (real, imaginary). `complex`
  // marks it so the lowering tells a complex product from a real one (canon.cpp).
  AnnotationResult r;
  if (type.dtype == DType::C64 || type.dtype == DType::C128) {
    type.dtype = type.dtype == DType::C64 ? DType::F32 : DType::F64;
    type.shape.push_back(2);
    r.complex = true;
  }
  if (!numelFits(type.shape)) return failure("the shape has more elements than a 64-bit count holds");
  r.ok = true;
  r.type = std::move(type);
  return r;
}

}  // namespace tangle
