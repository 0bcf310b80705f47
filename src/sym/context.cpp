#include "sym/context.h"

#include <z3++.h>

#include <algorithm>
#include <numeric>

namespace tangle::sym {

struct Context::Z3State {
  z3::context ctx;

  z3::expr encode(ExprId e) {
    const Poly p = poly(e);
    z3::expr out = ctx.int_val(static_cast<int64_t>(p.constant));
    for (const Term& t : p.terms) {
      z3::expr prod = ctx.int_val(static_cast<int64_t>(t.coeff));
      for (AtomId a : t.atoms) prod = prod * encodeAtom(a);
      out = out + prod;
    }
    return out;
  }
  // e == 0, e >= 0 or e > 0.
  z3::expr constraint(ExprId e, Fact::Kind k) {
    z3::expr x = encode(e);
    return k == Fact::Eq ? x == 0 : k == Fact::Ge ? x >= 0 : x > 0;
  }
  z3::expr encodeAtom(AtomId a) {
    const Atom at = atom(a);
    // For a positive divisor SMT-LIB's integer div is floor division.
    if (at.kind == Atom::Kind::FloorDiv) return encode(at.arg) / ctx.int_val(static_cast<int64_t>(at.k));
    // A variable, or an opaque call: the same atom (function and arguments) is the same value.
    return ctx.int_const(("a" + std::to_string(a)).c_str());
  }
};

Context::Context() = default;
Context::~Context() = default;

void Context::invalidate() {
  canonCache_.clear();
  proofCache_.clear();
}

ExprId Context::canon(ExprId e) const {
  if (subst_.empty()) return e;
  auto it = canonCache_.find(e);
  if (it != canonCache_.end()) return it->second;
  ExprId out = substitute(e, [&](AtomId v) -> std::optional<ExprId> {
    auto s = subst_.find(v);
    if (s == subst_.end()) return std::nullopt;
    return s->second;
  });
  canonCache_.emplace(e, out);
  return out;
}

int64_t Context::canonDim(int64_t d) const {
  if (!isSymbolicDim(d)) return d;
  auto out = toDim(canon(fromDim(d)));
  return out ? *out : d;  // a size cannot normalize to a negative constant unless facts contradict
}

void Context::noteSize(ExprId e) {
  if (constantValue(e)) return;
  if (std::find(sizes_.begin(), sizes_.end(), e) == sizes_.end()) {
    sizes_.push_back(e);
    proofCache_.clear();
  }
}

namespace {
ExprId atomTerm(AtomId a) {
  const Atom at = atom(a);
  if (at.kind == Atom::Kind::FloorDiv) return *floorDiv(at.arg, at.k);
  if (at.kind == Atom::Kind::Opaque) return opaque(at.name, at.args);
  return var(at.name);
}
}  // namespace

bool Context::solveFor(ExprId diff, const std::string& origin) {
  const Poly p = poly(diff);
  int64_t g = std::abs(p.constant);
  for (const Term& t : p.terms) g = std::gcd(g, std::abs(t.coeff));
  // A variable that occurs once in diff, alone in a unit-coefficient term.
  auto occurrences = [&](AtomId v) {
    int n = 0;
    for (const Term& t : p.terms)
      for (AtomId a : t.atoms) {
        if (a == v) ++n;
        if (atom(a).kind == Atom::Kind::Var) continue;
        auto inner = leaves(atomTerm(a));  // inside a floor division or an opaque call
        n += static_cast<int>(std::count(inner.begin(), inner.end(), v));
      }
    return n;
  };
  std::optional<size_t> best;
  auto rank = [&](size_t i) {
    AtomId v = p.terms[i].atoms[0];
    return std::make_pair(varGraph(v) == -1, atom(v).name);  // spec symbols go first, then the last name
  };
  for (size_t i = 0; i < p.terms.size(); ++i) {
    const Term& t = p.terms[i];
    if (t.atoms.size() != 1 || std::abs(t.coeff) != g || atom(t.atoms[0]).kind != Atom::Kind::Var) continue;
    if (occurrences(t.atoms[0]) != 1) continue;
    if (!best || rank(i) > rank(*best)) best = i;
  }
  if (!best) return false;
  AtomId v = p.terms[*best].atoms[0];
  int64_t c = p.terms[*best].coeff / g;  // +1 or -1
  // c*v + rest == 0 (everything divided by g), so v = -c * rest.
  ExprId rest = sub(*floorDiv(diff, g), mul(constant(c), var(atom(v).name)));
  ExprId value = c == 1 ? neg(rest) : rest;
  subst_[v] = value;
  substOrigin_[v] = origin;
  for (auto& [w, e] : subst_)
    if (w != v)
      e = substitute(e, [&](AtomId x) -> std::optional<ExprId> {
        if (x == v) return value;
        return std::nullopt;
      });
  invalidate();
  return true;
}

// A solver holding every fact and sizes >= 0 (2 s per check).
z3::solver Context::solverWithFacts() const {
  if (!z3_) z3_ = std::make_unique<Z3State>();
  z3::solver s(z3_->ctx);
  z3::params params(z3_->ctx);
  params.set("timeout", 2000u);
  s.set(params);
  for (ExprId e : sizes_) s.add(z3_->constraint(canon(e), Fact::Ge));
  for (const Fact& f : facts_) s.add(z3_->constraint(canon(f.lhs), f.kind));
  return s;
}

// Can facts, sizes >= 0 and `d <kind> 0` all hold together?
Context::Answer Context::satisfiable(ExprId d, Fact::Kind kind) const {
  z3::solver s = solverWithFacts();
  s.add(z3_->constraint(d, kind));
  switch (s.check()) {
    case z3::sat: return Answer::Yes;
    case z3::unsat: return Answer::No;
    default: return Answer::Unknown;
  }
}

bool Context::proveNonNegative(ExprId diff, bool strict) const {
  if (auto c = constantValue(diff)) return strict ? *c > 0 : *c >= 0;
  uint64_t key = (static_cast<uint64_t>(diff) << 1) | (strict ? 1u : 0u);
  if (auto it = proofCache_.find(key); it != proofCache_.end()) return it->second;
  // diff >= 0 holds when -diff > 0 cannot (diff > 0 when -diff >= 0 cannot).
  bool proved = satisfiable(neg(diff), strict ? Fact::Ge : Fact::Gt) == Answer::No;
  proofCache_.emplace(key, proved);
  return proved;
}

bool Context::add(ExprId d, Fact::Kind kind, const std::string& what, std::string* why, const std::string& origin) {
  Answer a = satisfiable(d, kind);
  if (a != Answer::Yes) {
    if (why)
      *why = what + (a == Answer::No ? " contradicts what is known" : " cannot be checked against what is known");
    return false;
  }
  if (kind != Fact::Eq || !solveFor(d, origin)) facts_.push_back({d, kind, origin});
  proofCache_.clear();
  return true;
}

bool Context::assumeEqual(ExprId a, ExprId b, std::string* why, const std::string& origin) {
  ExprId d = canon(sub(a, b));
  std::string what = toString(a) + " = " + toString(b);
  if (auto c = constantValue(d)) {
    if (*c == 0) return true;
    if (why) *why = what + " is false (they differ by " + std::to_string(*c) + ")";
    return false;
  }
  return add(d, Fact::Eq, what, why, origin);
}

bool Context::assumeLE(ExprId a, ExprId b, bool strict, std::string* why, const std::string& origin) {
  ExprId d = canon(sub(b, a));  // b - a >= 0 (> 0)
  if (proveNonNegative(d, strict)) return true;
  return add(d, strict ? Fact::Gt : Fact::Ge, toString(a) + (strict ? " < " : " <= ") + toString(b), why, origin);
}

std::vector<Context::Assignment> Context::sample(const std::vector<AtomId>& vars, int count, int64_t lo, int64_t hi) const {
  std::vector<Assignment> out;
  z3::solver s = solverWithFacts();
  z3::context& z = z3_->ctx;
  std::vector<z3::expr> xs;
  for (AtomId v : vars) {
    xs.push_back(z3_->encodeAtom(v));
    s.add(xs.back() >= z.int_val(static_cast<int64_t>(lo)) && xs.back() <= z.int_val(static_cast<int64_t>(hi)));
  }
  while (static_cast<int>(out.size()) < count && s.check() == z3::sat) {
    z3::model m = s.get_model();
    Assignment a;
    z3::expr_vector same(z);
    for (size_t i = 0; i < vars.size(); ++i) {
      int64_t v = m.eval(xs[i], true).get_numeral_int64();
      a[vars[i]] = v;
      same.push_back(xs[i] == z.int_val(static_cast<int64_t>(v)));
    }
    out.push_back(std::move(a));
    if (vars.empty()) break;
    s.add(!z3::mk_and(same));  // the next one differs somewhere
  }
  return out;
}

std::optional<int64_t> Context::valueOf(ExprId e, const Assignment& a) const {
  return evaluate(canon(e), [&](AtomId v) -> std::optional<int64_t> {
    auto it = a.find(v);
    if (it == a.end()) return std::nullopt;
    return it->second;
  });
}

bool Context::proveEqual(ExprId a, ExprId b) const {
  if (a == b) return true;
  ExprId d = canon(sub(a, b));
  if (auto c = constantValue(d)) return *c == 0;
  return proveNonNegative(d, false) && proveNonNegative(neg(d), false);
}

bool Context::proveLE(ExprId a, ExprId b) const { return proveNonNegative(canon(sub(b, a)), false); }
bool Context::proveLT(ExprId a, ExprId b) const { return proveNonNegative(canon(sub(b, a)), true); }

std::vector<std::string> Context::describe() const {
  std::vector<std::string> out;
  auto from = [](const std::string& origin) { return origin.empty() ? std::string() : "   (" + origin + ")"; };
  for (auto& [v, e] : subst_) {
    auto o = substOrigin_.find(v);
    out.push_back(atom(v).name + " = " + toString(e) + from(o == substOrigin_.end() ? "" : o->second));
  }
  std::sort(out.begin(), out.end());
  for (const Fact& f : facts_) {
    ExprId e = canon(f.lhs);
    if (constantValue(e)) continue;  // settled by a later substitution
    out.push_back(toString(e) + (f.kind == Fact::Eq ? " = 0" : f.kind == Fact::Ge ? " >= 0" : " > 0") + from(f.origin));
  }
  return out;
}

// ---- dims under a context ------------------------------------------------------

bool dimEqual(const Context& ctx, int64_t a, int64_t b) {
  if (a == b) return true;
  if (!isSymbolicDim(a) && !isSymbolicDim(b)) return false;
  return ctx.proveEqual(fromDim(a), fromDim(b));
}

bool dimLE(const Context& ctx, int64_t a, int64_t b) {
  if (!isSymbolicDim(a) && !isSymbolicDim(b)) return a <= b;
  return ctx.proveLE(fromDim(a), fromDim(b));
}

std::optional<int64_t> dimAdd(const Context& ctx, int64_t a, int64_t b) {
  if (!isSymbolicDim(a) && !isSymbolicDim(b)) return a + b;
  return toDim(ctx.canon(add(fromDim(a), fromDim(b))));
}

std::optional<int64_t> dimSub(const Context& ctx, int64_t a, int64_t b) {
  if (!isSymbolicDim(a) && !isSymbolicDim(b)) {
    if (a < b) return std::nullopt;
    return a - b;
  }
  if (!dimLE(ctx, b, a)) return std::nullopt;
  return toDim(ctx.canon(sub(fromDim(a), fromDim(b))));
}

std::optional<int64_t> dimMul(const Context& ctx, int64_t a, int64_t b) {
  if (!isSymbolicDim(a) && !isSymbolicDim(b)) return a * b;
  return toDim(ctx.canon(mul(fromDim(a), fromDim(b))));
}

}  // namespace tangle::sym
