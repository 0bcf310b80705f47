// Symbolic integers: the sizes and scalars TorchDynamo leaves symbolic
// (`s77`, `(s77//2)`, `2*s77`) when a graph is captured with dynamic shapes.
//
// An expression is kept in a normal form, a polynomial with integer
// coefficients over atoms, and interned once per process, so two
// expressions that normalize alike have the same ExprId and compare by
// integer equality. Atoms are variables (named with their graph's prefix,
// "S.s77", "D0.s77": each graph has its own symbols), floor divisions by a
// positive constant of a polynomial, and opaque terms (calls such as
// `Max(1, s0)`, comparisons, division by a symbol: functions the normal form
// does not model, so one unknown integer per function and arguments).
// `a % k` is written `a - k*(a//k)`, so it needs no atom.
//
// A tensor dimension (Dim) is an int64: a concrete size when >= 0, else
// -1 - ExprId of a non-constant expression. Everything here is pure and
// thread-compatible; the interning tables are process-wide.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tangle::sym {

using ExprId = uint32_t;
using AtomId = uint32_t;

// Thrown by the arithmetic below when a coefficient or constant would leave
// int64: a wrapped value would be a wrong fact about sizes, so it never wraps.
struct Overflow : std::overflow_error {
  Overflow() : std::overflow_error("symbolic size arithmetic overflows 64-bit integers") {}
};

struct Atom {
  enum class Kind : uint8_t { Var, FloorDiv, Opaque };
  Kind kind = Kind::Var;
  std::string name;            // Var: qualified name; Opaque: the function ("Max", or an operator "//", ">=")
  ExprId arg = 0;              // FloorDiv: the dividend (not constant, and with a term not divisible by k)
  int64_t k = 1;               // FloorDiv: the positive divisor
  std::vector<ExprId> args;    // Opaque: the arguments
};

struct Term {
  std::vector<AtomId> atoms;  // a monomial: sorted, repeated for powers; never empty
  int64_t coeff = 0;          // never 0
  bool operator==(const Term&) const = default;
};

struct Poly {
  std::vector<Term> terms;  // sorted by monomial, one term per monomial
  int64_t constant = 0;
  bool operator==(const Poly&) const = default;
};

// Forgets every interned expression. Only for a process that has no ExprId, AtomId or Dim left
// alive (a fuzz target between inputs): the tables otherwise grow with every distinct expression a
// process ever sees, which a long fuzzing run turns into an out-of-memory report.
void resetInterning();

const Poly& poly(ExprId e);
const Atom& atom(AtomId a);

ExprId constant(int64_t v);
ExprId var(std::string_view qualifiedName);
// The graph a variable belongs to (owner rank as in support/owner.h: -1 the
// spec, r an implementation rank), recorded when a graph's symbols are
// qualified; nullopt for a variable of no graph.
ExprId var(std::string_view qualifiedName, int32_t graph);
std::optional<int32_t> varGraph(AtomId v);
// fn(args...); an operator name ("//", ">=") prints infix.
ExprId opaque(std::string_view fn, std::vector<ExprId> args);
ExprId add(ExprId a, ExprId b);
ExprId sub(ExprId a, ExprId b);
ExprId mul(ExprId a, ExprId b);
ExprId neg(ExprId a);
// floor(a / k) and a mod k (Python semantics, k > 0); nullopt for k <= 0.
std::optional<ExprId> floorDiv(ExprId a, int64_t k);
std::optional<ExprId> mod(ExprId a, int64_t k);

std::optional<int64_t> constantValue(ExprId e);
// The expression with every variable `v` that `f(v)` maps replaced (inside
// floor divisions and opaque arguments too), renormalized.
ExprId substitute(ExprId e, const std::function<std::optional<ExprId>(AtomId var)>& f);
// Variables and opaque atoms the expression mentions (inside floor divisions
// and opaque arguments too).
std::vector<AtomId> leaves(ExprId e);

// "2*S.s77 - (S.s77//2) + 1"
std::string toString(ExprId e);

// The value of e when each variable v has the value `value(v)`; nullopt when
// a variable has none, e holds an opaque call or the value does not fit in int64.
std::optional<int64_t> evaluate(ExprId e, const std::function<std::optional<int64_t>(AtomId var)>& value);

// ---- dimensions --------------------------------------------------------------
inline bool isSymbolicDim(int64_t d) { return d < 0; }
// The Dim of an expression: its value when it is a constant >= 0; nullopt for
// a negative constant (not a size).
std::optional<int64_t> toDim(ExprId e);
ExprId fromDim(int64_t d);
std::string dimToString(int64_t d);

// ---- parsing -------------------------------------------------------------------
// Parses a sympy-printed size expression: integers, identifiers, + - * // %,
// parentheses, FloorDiv(a, b), Mod(a, b), PythonMod(a, b); any other call
// f(...) is an opaque atom. Every identifier is renamed by `qualify`.
// nullopt (with `error` set) on a syntax error, on nesting deeper than 200, on
// an expression too large to be a size (more than 256 terms, a product of more
// than 64 factors, or more than 4096 nodes when written out: normalizing,
// printing or substituting those costs exponential time) or on overflow.
std::optional<ExprId> parse(std::string_view text, const std::function<std::string(std::string_view)>& qualify,
                            std::string* error);

}  // namespace tangle::sym
