#include "sym/expr.h"

#include <algorithm>
#include <cctype>
#include <deque>
#include <mutex>
#include <unordered_map>

#include "support/intern_frozen.h"

namespace tangle::sym {

namespace {

int64_t addChecked(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) throw Overflow();
  return r;
}
int64_t mulChecked(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) throw Overflow();
  return r;
}

// Interning tables. Deques keep references stable while they grow.
struct Tables {
  std::mutex mu;
  std::deque<Poly> polys;
  std::unordered_map<std::string, ExprId> polyIds;
  std::deque<Atom> atoms;
  std::unordered_map<std::string, AtomId> atomIds;
  std::unordered_map<AtomId, int32_t> varGraphs;  // see var(name, graph)
};
Tables& tables() {
  static Tables t;
  return t;
}

}  // namespace

void resetInterning() {
  Tables& t = tables();
  std::lock_guard lock(t.mu);
  t.polys.clear();
  t.polyIds.clear();
  t.atoms.clear();
  t.atomIds.clear();
  t.varGraphs.clear();
}

namespace {

std::string polyKey(const Poly& p) {
  std::string k = std::to_string(p.constant);
  for (const Term& t : p.terms) {
    k += ';';
    k += std::to_string(t.coeff);
    for (AtomId a : t.atoms) k += ',' + std::to_string(a);
  }
  return k;
}

// The id of `key` in `ids`, or a new one for `value` appended to `values`
// (not under an InternFrozen: support/intern_frozen.h). Called under Tables::mu.
template <class Id, class V>
Id internInto(std::unordered_map<std::string, Id>& ids, std::deque<V>& values, std::string key, V value) {
  if (auto it = ids.find(key); it != ids.end()) return it->second;
  checkInternNotFrozen();
  auto id = static_cast<Id>(values.size());
  ids.emplace(std::move(key), id);
  values.push_back(std::move(value));
  return id;
}

AtomId internAtom(Atom a) {
  std::string key = std::to_string(static_cast<int>(a.kind)) + '|' + a.name + '|' + std::to_string(a.arg) + '|' +
                    std::to_string(a.k);
  for (ExprId x : a.args) key += ',' + std::to_string(x);
  Tables& t = tables();
  std::lock_guard lock(t.mu);
  return internInto(t.atomIds, t.atoms, std::move(key), std::move(a));
}

// Sorts the terms, merges equal monomials and drops zero coefficients.
void normalize(Poly& p) {
  std::sort(p.terms.begin(), p.terms.end(), [](const Term& a, const Term& b) { return a.atoms < b.atoms; });
  std::vector<Term> out;
  for (Term& t : p.terms) {
    if (!out.empty() && out.back().atoms == t.atoms) out.back().coeff = addChecked(out.back().coeff, t.coeff);
    else out.push_back(std::move(t));
    if (out.back().coeff == 0) out.pop_back();
  }
  p.terms = std::move(out);
}

ExprId internPoly(Poly p) {
  normalize(p);
  std::string key = polyKey(p);
  Tables& t = tables();
  std::lock_guard lock(t.mu);
  return internInto(t.polyIds, t.polys, std::move(key), std::move(p));
}

ExprId atomExpr(AtomId a) {
  Poly p;
  p.terms.push_back({{a}, 1});
  return internPoly(std::move(p));
}

int64_t floorDivInt(int64_t a, int64_t k) {
  int64_t q = a / k;
  if ((a % k != 0) && ((a < 0) != (k < 0))) --q;
  return q;
}

Poly scaled(const Poly& p, int64_t c) {
  Poly out;
  out.constant = mulChecked(p.constant, c);
  for (const Term& t : p.terms) out.terms.push_back({t.atoms, mulChecked(t.coeff, c)});
  return out;
}

void appendTo(Poly& acc, const Poly& p) {
  acc.constant = addChecked(acc.constant, p.constant);
  acc.terms.insert(acc.terms.end(), p.terms.begin(), p.terms.end());
}

}  // namespace

const Poly& poly(ExprId e) {
  Tables& t = tables();
  std::lock_guard lock(t.mu);
  return t.polys[e];
}

const Atom& atom(AtomId a) {
  Tables& t = tables();
  std::lock_guard lock(t.mu);
  return t.atoms[a];
}

ExprId constant(int64_t v) {
  Poly p;
  p.constant = v;
  return internPoly(std::move(p));
}

ExprId var(std::string_view name) { return atomExpr(internAtom({Atom::Kind::Var, std::string(name), 0, 1, {}})); }

ExprId var(std::string_view name, int32_t graph) {
  AtomId a = internAtom({Atom::Kind::Var, std::string(name), 0, 1, {}});
  Tables& t = tables();
  {
    std::lock_guard lock(t.mu);
    t.varGraphs[a] = graph;
  }
  return atomExpr(a);
}

std::optional<int32_t> varGraph(AtomId v) {
  Tables& t = tables();
  std::lock_guard lock(t.mu);
  auto it = t.varGraphs.find(v);
  if (it == t.varGraphs.end()) return std::nullopt;
  return it->second;
}
ExprId opaque(std::string_view fn, std::vector<ExprId> args) {
  return atomExpr(internAtom({Atom::Kind::Opaque, std::string(fn), 0, 1, std::move(args)}));
}

ExprId add(ExprId a, ExprId b) {
  Poly p = poly(a);
  appendTo(p, poly(b));
  return internPoly(std::move(p));
}

ExprId neg(ExprId a) { return internPoly(scaled(poly(a), -1)); }
ExprId sub(ExprId a, ExprId b) { return add(a, neg(b)); }

ExprId mul(ExprId a, ExprId b) {
  const Poly pa = poly(a), pb = poly(b);
  Poly out = scaled(pa, pb.constant);
  appendTo(out, scaled(Poly{pb.terms, 0}, pa.constant));
  for (const Term& x : pa.terms)
    for (const Term& y : pb.terms) {
      Term t{x.atoms, mulChecked(x.coeff, y.coeff)};
      t.atoms.insert(t.atoms.end(), y.atoms.begin(), y.atoms.end());
      std::sort(t.atoms.begin(), t.atoms.end());
      out.terms.push_back(std::move(t));
    }
  return internPoly(std::move(out));
}

// floor((k*q + r) / k) = q + floor(r / k) for integer-valued q: the part of
// each coefficient divisible by k leaves the division.
std::optional<ExprId> floorDiv(ExprId a, int64_t k) {
  if (k <= 0) return std::nullopt;
  if (k == 1) return a;
  const Poly p = poly(a);
  Poly q, r;
  q.constant = floorDivInt(p.constant, k);
  r.constant = p.constant - mulChecked(q.constant, k);  // in [0, k): cannot overflow
  for (const Term& t : p.terms) {
    int64_t qc = floorDivInt(t.coeff, k);
    if (qc != 0) q.terms.push_back({t.atoms, qc});
    int64_t rc = t.coeff - mulChecked(qc, k);  // in [0, k)
    if (rc != 0) r.terms.push_back({t.atoms, rc});
  }
  if (r.terms.empty()) return internPoly(std::move(q));  // 0 <= r.constant < k
  // floor(floor(b / j) / k) = floor(b / (j*k)) for positive j, k.
  if (r.constant == 0 && r.terms.size() == 1 && r.terms[0].coeff == 1 && r.terms[0].atoms.size() == 1) {
    const Atom& inner = atom(r.terms[0].atoms[0]);
    if (inner.kind == Atom::Kind::FloorDiv) {
      ExprId rest = internPoly(std::move(q));
      return add(rest, *floorDiv(inner.arg, mulChecked(inner.k, k)));
    }
  }
  ExprId div = atomExpr(internAtom({Atom::Kind::FloorDiv, "", internPoly(std::move(r)), k, {}}));
  return add(internPoly(std::move(q)), div);
}

std::optional<ExprId> mod(ExprId a, int64_t k) {
  auto q = floorDiv(a, k);
  if (!q) return std::nullopt;
  return sub(a, mul(constant(k), *q));
}

std::optional<int64_t> constantValue(ExprId e) {
  const Poly& p = poly(e);
  if (!p.terms.empty()) return std::nullopt;
  return p.constant;
}

ExprId substitute(ExprId e, const std::function<std::optional<ExprId>(AtomId)>& f) {
  const Poly p = poly(e);
  ExprId out = constant(p.constant);
  for (const Term& t : p.terms) {
    ExprId prod = constant(t.coeff);
    for (AtomId a : t.atoms) {
      const Atom at = atom(a);
      ExprId factor = atomExpr(a);
      if (at.kind == Atom::Kind::Var) {
        if (auto r = f(a)) factor = *r;
      } else if (at.kind == Atom::Kind::FloorDiv) {
        factor = *floorDiv(substitute(at.arg, f), at.k);
      } else {
        std::vector<ExprId> args;
        for (ExprId x : at.args) args.push_back(substitute(x, f));
        factor = opaque(at.name, std::move(args));
      }
      prod = mul(prod, factor);
    }
    out = add(out, prod);
  }
  return out;
}

std::vector<AtomId> leaves(ExprId e) {
  std::vector<AtomId> out;
  std::function<void(ExprId)> walk = [&](ExprId x) {
    for (const Term& t : poly(x).terms)
      for (AtomId a : t.atoms) {
        const Atom at = atom(a);
        if (at.kind == Atom::Kind::FloorDiv) {
          walk(at.arg);
          continue;
        }
        if (std::find(out.begin(), out.end(), a) == out.end()) out.push_back(a);
        for (ExprId x : at.args) walk(x);
      }
  };
  walk(e);
  return out;
}

namespace {
// evaluate(), throwing Overflow.
std::optional<int64_t> evaluateChecked(ExprId e, const std::function<std::optional<int64_t>(AtomId)>& value) {
  const Poly p = poly(e);
  int64_t sum = p.constant;
  for (const Term& t : p.terms) {
    int64_t prod = t.coeff;
    for (AtomId a : t.atoms) {
      const Atom at = atom(a);
      std::optional<int64_t> v;
      if (at.kind == Atom::Kind::Var) v = value(a);
      else if (at.kind == Atom::Kind::FloorDiv)
        if (auto x = evaluateChecked(at.arg, value)) v = floorDivInt(*x, at.k);
      if (!v) return std::nullopt;
      prod = mulChecked(prod, *v);
    }
    sum = addChecked(sum, prod);
  }
  return sum;
}
}  // namespace

std::optional<int64_t> evaluate(ExprId e, const std::function<std::optional<int64_t>(AtomId)>& value) {
  try {
    return evaluateChecked(e, value);
  } catch (const Overflow&) {
    return std::nullopt;
  }
}

namespace {
// |c| in decimal (also for INT64_MIN, whose negation does not fit).
std::string magnitude(int64_t c) { return std::to_string(c < 0 ? 0 - static_cast<uint64_t>(c) : static_cast<uint64_t>(c)); }
}  // namespace

std::string toString(ExprId e) {
  const Poly& p = poly(e);
  std::string out;
  for (const Term& t : p.terms) {
    int64_t c = t.coeff;
    if (out.empty()) {
      if (c < 0) out += "-";
    } else {
      out += c < 0 ? " - " : " + ";
    }
    if (c != 1 && c != -1) out += magnitude(c) + "*";
    for (size_t i = 0; i < t.atoms.size(); ++i) {
      const Atom& a = atom(t.atoms[i]);
      if (i) out += "*";
      if (a.kind == Atom::Kind::FloorDiv) {
        out += "(" + toString(a.arg) + "//" + std::to_string(a.k) + ")";
      } else if (a.kind == Atom::Kind::Var) {
        out += a.name;
      } else if (a.args.size() == 2 && !std::isalpha(static_cast<unsigned char>(a.name[0]))) {
        std::string op = a.name == "//" || a.name == "/" || a.name == "%" ? a.name : " " + a.name + " ";
        out += "(" + toString(a.args[0]) + op + toString(a.args[1]) + ")";
      } else {
        out += a.name + "(";
        for (size_t j = 0; j < a.args.size(); ++j) out += (j ? ", " : "") + toString(a.args[j]);
        out += ")";
      }
    }
  }
  if (out.empty()) return std::to_string(p.constant);
  if (p.constant > 0) out += " + " + std::to_string(p.constant);
  if (p.constant < 0) out += " - " + magnitude(p.constant);
  return out;
}

std::optional<int64_t> toDim(ExprId e) {
  if (auto c = constantValue(e)) {
    if (*c < 0) return std::nullopt;
    return *c;
  }
  return -1 - static_cast<int64_t>(e);
}

ExprId fromDim(int64_t d) { return d >= 0 ? constant(d) : static_cast<ExprId>(-1 - d); }

std::string dimToString(int64_t d) {
  if (d >= 0) return std::to_string(d);
  // A negative integer that names no expression (a pad list's -1) prints as itself, not as
  // an out-of-range expression (which crashed printing an opaque constant_pad_nd).
  {
    Tables& t = tables();
    std::lock_guard lock(t.mu);
    if (fromDim(d) >= t.polys.size()) return std::to_string(d);
  }
  return toString(fromDim(d));
}

}  // namespace tangle::sym
