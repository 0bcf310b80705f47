#include "egraph/attrs.h"

#include <bit>
#include <cmath>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include <fmt/format.h>

#include "egraph/stable_table.h"
#include "sym/expr.h"

namespace tangle::eg {

namespace {

inline uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}

// Float attributes intern by bit pattern so that NaN gets one id.
bool sameAttr(const Attr& a, const Attr& b) {
  return a.kind == b.kind && a.i == b.i && std::bit_cast<uint64_t>(a.f) == std::bit_cast<uint64_t>(b.f) &&
         a.list == b.list;
}

struct AttrListKey {
  const AttrList* list;
};
struct AttrListHash {
  size_t operator()(AttrListKey k) const noexcept {
    uint64_t h = k.list->size();
    for (const Attr& a : *k.list) {
      h = mix(h, static_cast<uint64_t>(a.kind));
      h = mix(h, static_cast<uint64_t>(a.i));
      h = mix(h, std::bit_cast<uint64_t>(a.f));
      for (int64_t v : a.list) h = mix(h, static_cast<uint64_t>(v));
    }
    return h;
  }
};
struct AttrListEq {
  bool operator()(AttrListKey a, AttrListKey b) const noexcept {
    if (a.list->size() != b.list->size()) return false;
    for (size_t i = 0; i < a.list->size(); ++i)
      if (!sameAttr((*a.list)[i], (*b.list)[i])) return false;
    return true;
  }
};

// Process-wide tables. Never destroyed (interned ids may be used from static
// destructors of other translation units).
struct Interner {
  std::shared_mutex symMutex;
  detail::StableTable<std::string> symbols;
  std::unordered_map<std::string_view, Symbol> symbolIndex;

  std::shared_mutex attrMutex;
  detail::StableTable<AttrList> lists;
  std::unordered_map<AttrListKey, AttrsId, AttrListHash, AttrListEq> listIndex;

  Interner() {
    symbolIndex.emplace(symbols.get(symbols.append()), 0);  // Symbol 0 = ""
    AttrsId empty = lists.append();                         // AttrsId 0 = []
    listIndex.emplace(AttrListKey{&lists.get(empty)}, empty);
  }
};

Interner& interner() {
  static Interner* in = new Interner();
  return *in;
}

}  // namespace

Symbol intern(std::string_view s) {
  Interner& in = interner();
  {
    std::shared_lock lock(in.symMutex);
    auto it = in.symbolIndex.find(s);
    if (it != in.symbolIndex.end()) return it->second;
  }
  std::unique_lock lock(in.symMutex);
  auto it = in.symbolIndex.find(s);
  if (it != in.symbolIndex.end()) return it->second;
  Symbol id = in.symbols.append(s);
  in.symbolIndex.emplace(in.symbols.get(id), id);
  return id;
}

const std::string& symbolName(Symbol s) {
  Interner& in = interner();
  if (s >= in.symbols.size()) {
    static const std::string kBad = "<bad-symbol>";
    return kBad;
  }
  return in.symbols.get(s);
}

AttrsId internAttrs(const AttrList& a) {
  if (a.empty()) return kNoAttrs;
  Interner& in = interner();
  AttrListKey key{&a};
  {
    std::shared_lock lock(in.attrMutex);
    auto it = in.listIndex.find(key);
    if (it != in.listIndex.end()) return it->second;
  }
  std::unique_lock lock(in.attrMutex);
  auto it = in.listIndex.find(key);
  if (it != in.listIndex.end()) return it->second;
  AttrsId id = in.lists.append(a);
  in.listIndex.emplace(AttrListKey{&in.lists.get(id)}, id);
  return id;
}

const AttrList& attrs(AttrsId id) { return interner().lists.get(id); }

namespace {
std::string quoteString(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string formatFloat(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::string s = fmt::format("{}", v);
  // Keep floats distinguishable from integers when printed and re-parsed.
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}
}  // namespace

std::string Attr::toString() const {
  switch (kind) {
    case Kind::None: return "none";
    case Kind::Int: return std::to_string(i);
    case Kind::SymDim: return sym::dimToString(i);
    case Kind::Float: return formatFloat(f);
    case Kind::Bool: return i ? "true" : "false";
    case Kind::Str: return quoteString(symbolName(static_cast<Symbol>(i)));
    case Kind::IntList: {
      std::string out = "[";
      for (size_t k = 0; k < list.size(); ++k) {
        if (k) out += ", ";
        out += sym::dimToString(list[k]);  // shape lists may hold symbolic sizes (negative)
      }
      return out + "]";
    }
  }
  return "?";
}

std::string toString(const AttrList& a) {
  std::string out;
  for (size_t k = 0; k < a.size(); ++k) {
    if (k) out += ", ";
    out += a[k].toString();
  }
  return out;
}

std::optional<int64_t> attrDim(const AttrList& a, size_t i) {
  if (i >= a.size() || (a[i].kind != Attr::Kind::Int && a[i].kind != Attr::Kind::SymDim)) return std::nullopt;
  return a[i].i;
}

std::optional<int64_t> attrInt(const AttrList& a, size_t i) {
  if (i >= a.size()) return std::nullopt;
  if (a[i].kind != Attr::Kind::Int) return std::nullopt;
  return a[i].i;
}

std::optional<bool> attrBool(const AttrList& a, size_t i) {
  if (i >= a.size()) return std::nullopt;
  if (a[i].kind == Attr::Kind::Bool) return a[i].i != 0;
  if (a[i].kind == Attr::Kind::Int && (a[i].i == 0 || a[i].i == 1)) return a[i].i != 0;
  return std::nullopt;
}

std::optional<double> attrNumber(const AttrList& a, size_t i) {
  if (i >= a.size()) return std::nullopt;
  if (a[i].kind == Attr::Kind::Float) return a[i].f;
  if (a[i].kind == Attr::Kind::Int || a[i].kind == Attr::Kind::Bool) return static_cast<double>(a[i].i);
  return std::nullopt;
}

const std::vector<int64_t>* attrInts(const AttrList& a, size_t i) {
  if (i >= a.size() || a[i].kind != Attr::Kind::IntList) return nullptr;
  return &a[i].list;
}

}  // namespace tangle::eg
