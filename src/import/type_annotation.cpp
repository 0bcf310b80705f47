#include "import/type_annotation.h"

#include <algorithm>
#include <charconv>

namespace tangle {

namespace {

bool isIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool isIdentChar(char c) { return isIdentStart(c) || (c >= '0' && c <= '9'); }

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

Dim symbolDim(std::string_view name, std::vector<std::string>& symbols) {
  auto it = std::find(symbols.begin(), symbols.end(), name);
  if (it == symbols.end()) it = symbols.insert(symbols.end(), std::string(name));
  return -1 - static_cast<Dim>(it - symbols.begin());
}

// A symbolic size expression may use identifiers, integers and + - * / // ( ).
bool isSymbolicExpr(std::string_view s) {
  bool hasIdent = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (isIdentStart(c)) hasIdent = true;
    else if (!isIdentChar(c) && c != ' ' && c != '+' && c != '-' && c != '*' && c != '/' && c != '(' && c != ')')
      return false;
  }
  return hasIdent;
}

void recordIdentifiers(std::string_view s, std::vector<std::string>& symbols) {
  for (size_t i = 0; i < s.size();) {
    if (isIdentStart(s[i])) {
      size_t j = i;
      while (j < s.size() && isIdentChar(s[j])) ++j;
      symbolDim(s.substr(i, j - i), symbols);
      i = j;
    } else {
      ++i;
    }
  }
}

AnnotationResult failure(std::string why) {
  AnnotationResult r;
  r.error = std::move(why);
  return r;
}

}  // namespace

AnnotationResult parseTypeAnnotation(std::string_view text, std::vector<std::string>& symbols) {
  std::string_view s = trim(text);
  if (s.size() > 5 && s.substr(0, 4) == "Sym(" && s.back() == ')') {
    std::string_view inner = trim(s.substr(4, s.size() - 5));
    if (inner.empty() || !(isSymbolicExpr(inner) || std::all_of(inner.begin(), inner.end(), isIdentChar)))
      return failure("expected a symbolic size expression inside 'Sym(...)'");
    recordIdentifiers(inner, symbols);
    AnnotationResult r;
    r.ok = true;
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
  while (!dims.empty()) {
    size_t comma = dims.find(',');
    std::string_view d = trim(dims.substr(0, comma));
    if (d.empty()) return failure("expected a dimension between ',' in the shape");
    int64_t value = 0;
    auto [end, ec] = std::from_chars(d.data(), d.data() + d.size(), value);
    if (ec == std::errc() && end == d.data() + d.size() && value >= 0) {
      type.shape.push_back(value);
    } else if (isSymbolicExpr(d)) {
      type.shape.push_back(symbolDim(d, symbols));
    } else {
      return failure("expected a size or a symbolic size, found '" + std::string(d) + "'");
    }
    if (comma == std::string_view::npos) break;
    dims = trim(dims.substr(comma + 1));
    if (dims.empty()) return failure("expected a dimension after ','");
  }
  AnnotationResult r;
  r.ok = true;
  r.type = std::move(type);
  return r;
}

}  // namespace tangle
