// Interned symbols (operator names, tensor names) and attribute lists.
//
// Everything an e-node carries besides its children (slice bounds, dims,
// scalars, shape lists) is an AttrList, interned once per process so an
// e-node stores a single 32-bit id and compares by integer equality.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tangle::eg {

using Symbol = uint32_t;
Symbol intern(std::string_view s);       // thread-safe, process-wide; intern("") == 0
std::optional<Symbol> findSymbol(std::string_view s);  // the symbol of s if interned; interns nothing
// Room for `more` new symbols (attribute lists) in the interners' indexes, before
// interning many: their indexes then grow once instead of doubling step by step.
void reserveSymbols(size_t more);
void reserveAttrs(size_t more);
const std::string& symbolName(Symbol s);  // lock-free read; valid forever

// Under an InternFrozen (support/intern_frozen.h), interning anything new
// throws NotInterned.
class InternFrozen {
 public:
  InternFrozen();
  ~InternFrozen();
  InternFrozen(const InternFrozen&) = delete;
  InternFrozen& operator=(const InternFrozen&) = delete;
};

struct Attr {
  // SymDim: a symbolic size (a negative Dim, see sym/expr.h), e.g. a slice
  // bound `(s0//2)`. It is its own kind so that code reading integers
  // (attrInt, Subst::integer) never mistakes it for a number.
  enum class Kind : uint8_t { None, Int, Float, Bool, Str, IntList, SymDim };
  Kind kind = Kind::None;
  int64_t i = 0;              // Int, Bool (0/1), Str (a Symbol), SymDim (the Dim)
  double f = 0;               // Float
  std::vector<int64_t> list;  // IntList

  static Attr none() { return {}; }
  static Attr integer(int64_t v) { Attr a; a.kind = Kind::Int; a.i = v; return a; }
  static Attr real(double v) { Attr a; a.kind = Kind::Float; a.f = v; return a; }
  static Attr boolean(bool v) { Attr a; a.kind = Kind::Bool; a.i = v; return a; }
  static Attr str(std::string_view s) { Attr a; a.kind = Kind::Str; a.i = intern(s); return a; }
  static Attr ints(std::vector<int64_t> v) { Attr a; a.kind = Kind::IntList; a.list = std::move(v); return a; }
  // A size: Int when concrete (d >= 0), else SymDim.
  static Attr dim(int64_t d) { Attr a; a.kind = d >= 0 ? Kind::Int : Kind::SymDim; a.i = d; return a; }
  bool operator==(const Attr&) const = default;
  std::string toString() const;  // 3, 0.5, true, none, "name", [1, 2]
};

using AttrList = std::vector<Attr>;
using AttrsId = uint32_t;
constexpr AttrsId kNoAttrs = 0;          // the empty list is always id 0
AttrsId internAttrs(const AttrList& a);  // thread-safe, process-wide
AttrsId internAttrs(const Attr* data, size_t size);  // the same, of `size` attributes at `data`
// intern / internAttrs of many at once (out[k] for names[k]; for the k-th list of
// `width` attributes in `flat`): one lock, and the index lookups overlap.
void internAll(std::span<const std::string_view> names, Symbol* out);
void internAttrsAll(std::span<const Attr> flat, size_t width, AttrsId* out);
const AttrList& attrs(AttrsId id);    // lock-free read; the reference stays valid forever
std::string toString(const AttrList& a);  // "0, 2, [1, 2]" (no brackets)

// Attribute readers: attribute i of a list, nullopt (nullptr) when it is
// missing or of another kind.
std::optional<int64_t> attrInt(const AttrList& a, size_t i);      // Int only
std::optional<int64_t> attrDim(const AttrList& a, size_t i);      // Int or SymDim (a size, sym/expr.h)
std::optional<bool> attrBool(const AttrList& a, size_t i);        // Bool (or Int 0/1)
std::optional<double> attrNumber(const AttrList& a, size_t i);    // Int, Bool or Float
const std::vector<int64_t>* attrInts(const AttrList& a, size_t i);  // IntList

}  // namespace tangle::eg
