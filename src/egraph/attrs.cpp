#include "egraph/attrs.h"

#include <bit>
#include <cmath>
#include <mutex>
#include <shared_mutex>
#include <span>

#include <fmt/format.h>

#include "egraph/node_index.h"
#include "egraph/stable_table.h"
#include "support/intern_frozen.h"
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

// The final mix of a hash (murmur3's fmix64): the index probes linearly from
// the low bits, which hash_combine-style mixing of small integers leaves clustered.
inline uint64_t finish(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

uint64_t hashList(std::span<const Attr> list) {
  uint64_t h = list.size();
  for (const Attr& a : list) {
    h = mix(h, static_cast<uint64_t>(a.kind));
    h = mix(h, static_cast<uint64_t>(a.i));
    h = mix(h, std::bit_cast<uint64_t>(a.f));
    for (int64_t v : a.list) h = mix(h, static_cast<uint64_t>(v));
  }
  return finish(h);
}

bool sameList(const AttrList& a, std::span<const Attr> b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!sameAttr(a[i], b[i])) return false;
  return true;
}

uint64_t hashString(std::string_view s) { return std::hash<std::string_view>{}(s); }

// Process-wide tables. Never destroyed (interned ids may be used from static
// destructors of other translation units).
struct Interner {
  // Each table's index is open addressing over (id, 32 bits of hash): a
  // lookup compares hashes before it reads an interned string or list.
  std::shared_mutex symMutex;
  detail::StableTable<std::string> symbols;
  detail::NodeIndex symbolIndex;

  std::shared_mutex attrMutex;
  detail::StableTable<AttrList> lists;
  detail::NodeIndex listIndex;

  Interner() {
    symbolIndex.insert(hashString(""), symbols.append());  // Symbol 0 = ""
    listIndex.insert(hashList({}), lists.append());         // AttrsId 0 = []
  }

  uint32_t findSymbol(std::string_view s, uint64_t h) const {
    return symbolIndex.find(h, [&](uint32_t id) { return symbols.get(id) == s; });
  }
  uint32_t findList(std::span<const Attr> a, uint64_t h) const {
    return listIndex.find(h, [&](uint32_t id) { return sameList(lists.get(id), a); });
  }
};

Interner& interner() {
  static Interner* in = new Interner();
  return *in;
}

}  // namespace

Symbol intern(std::string_view s) {
  Interner& in = interner();
  const uint64_t h = hashString(s);
  {
    std::shared_lock lock(in.symMutex);
    if (uint32_t id = in.findSymbol(s, h); id != detail::NodeIndex::kNone) return id;
  }
  checkInternNotFrozen();
  std::unique_lock lock(in.symMutex);
  if (uint32_t id = in.findSymbol(s, h); id != detail::NodeIndex::kNone) return id;
  Symbol id = in.symbols.append(s);
  in.symbolIndex.insert(h, id);
  return id;
}

namespace {
constexpr size_t kPrefetchAhead = 8;  // lookups in flight in a batch
}  // namespace

void internAll(std::span<const std::string_view> names, Symbol* out) {
  Interner& in = interner();
  std::vector<uint64_t> hashes(names.size());
  for (size_t k = 0; k < names.size(); ++k) hashes[k] = hashString(names[k]);
  std::unique_lock lock(in.symMutex);
  in.symbolIndex.reserve(in.symbolIndex.size() + names.size());  // no growth below: prefetches stay valid
  for (size_t k = 0; k < names.size(); ++k) {
    if (k + kPrefetchAhead < names.size()) in.symbolIndex.prefetch(hashes[k + kPrefetchAhead]);
    uint32_t id = in.findSymbol(names[k], hashes[k]);
    if (id == detail::NodeIndex::kNone) {
      checkInternNotFrozen();  // the first new one: nothing was added
      id = in.symbols.append(names[k]);
      in.symbolIndex.insert(hashes[k], id);
    }
    out[k] = id;
  }
}

void internAttrsAll(std::span<const Attr> flat, size_t width, AttrsId* out) {
  if (width == 0) return;  // no lists
  const size_t count = flat.size() / width;
  Interner& in = interner();
  std::vector<uint64_t> hashes(count);
  for (size_t k = 0; k < count; ++k) hashes[k] = hashList(flat.subspan(k * width, width));
  std::unique_lock lock(in.attrMutex);
  in.listIndex.reserve(in.listIndex.size() + count);
  for (size_t k = 0; k < count; ++k) {
    if (k + kPrefetchAhead < count) in.listIndex.prefetch(hashes[k + kPrefetchAhead]);
    std::span<const Attr> list = flat.subspan(k * width, width);
    uint32_t id = in.findList(list, hashes[k]);
    if (id == detail::NodeIndex::kNone) {
      checkInternNotFrozen();
      id = in.lists.append(list.begin(), list.end());
      in.listIndex.insert(hashes[k], id);
    }
    out[k] = id;
  }
}

std::optional<Symbol> findSymbol(std::string_view s) {
  Interner& in = interner();
  std::shared_lock lock(in.symMutex);
  uint32_t id = in.findSymbol(s, hashString(s));
  if (id == detail::NodeIndex::kNone) return std::nullopt;
  return id;
}

void reserveSymbols(size_t more) {
  Interner& in = interner();
  std::unique_lock lock(in.symMutex);
  in.symbolIndex.reserve(in.symbolIndex.size() + more);
}

void reserveAttrs(size_t more) {
  Interner& in = interner();
  std::unique_lock lock(in.attrMutex);
  in.listIndex.reserve(in.listIndex.size() + more);
}

const std::string& symbolName(Symbol s) {
  Interner& in = interner();
  if (s >= in.symbols.size()) {
    static const std::string kBad = "<bad-symbol>";
    return kBad;
  }
  return in.symbols.get(s);
}

AttrsId internAttrs(const AttrList& a) { return internAttrs(a.data(), a.size()); }

AttrsId internAttrs(const Attr* data, size_t size) {
  if (size == 0) return kNoAttrs;
  const std::span<const Attr> a(data, size);
  Interner& in = interner();
  const uint64_t h = hashList(a);
  {
    std::shared_lock lock(in.attrMutex);
    if (uint32_t id = in.findList(a, h); id != detail::NodeIndex::kNone) return id;
  }
  checkInternNotFrozen();
  std::unique_lock lock(in.attrMutex);
  if (uint32_t id = in.findList(a, h); id != detail::NodeIndex::kNone) return id;
  AttrsId id = in.lists.append(a.begin(), a.end());
  in.listIndex.insert(h, id);
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
