// Solving the size roles (size_roles.h) for a small instance with Z3.
//
// Every role gets a bound M (2 <= role <= min(value, M)); the smallest M
// tried (2, 3, 5, 8, ...) that Z3 satisfies wins, then smaller totals under
// it. The domains are bounded, so the products are bit-blasted (nla2bv):
// nonlinear integer search alone gives up on the GPT-sized systems.
#include <chrono>

#include <z3++.h>

#include "replay/size_roles.h"

namespace tangle::replay::detail {

namespace {

using Assignment = std::map<int64_t, int64_t>;

std::optional<Assignment> solveBounded(const SizeRoles& r, bool keepApart, int64_t bound, unsigned timeoutMs) {
  z3::context c;
  z3::tactic t = z3::tactic(c, "simplify") & z3::tactic(c, "propagate-values") & z3::tactic(c, "solve-eqs") &
                 z3::tactic(c, "nla2bv") & z3::tactic(c, "smt");
  z3::solver s = t.mk_solver();
  z3::params p(c);
  p.set("timeout", timeoutMs);
  s.set(p);
  std::map<int64_t, z3::expr> x;
  for (int64_t v : r.roles) {
    z3::expr e = c.int_const(("n" + std::to_string(v)).c_str());
    s.add(e >= 2 && e <= c.int_val(std::min(v, bound)));
    x.emplace(v, e);
  }
  auto sum = [&](const SizeSum& terms) {
    z3::expr out = c.int_val(0);
    for (const SizeMono& m : terms) {
      z3::expr e = c.int_val(m.coeff);
      for (int64_t v : m.sizes) e = e * (r.isRole(v) ? x.at(v) : c.int_val(v));
      out = out + e;
    }
    return out;
  };
  for (const SizeFact& f : r.facts) s.add(f.le ? sum(f.lhs) <= sum(f.rhs) : sum(f.lhs) == sum(f.rhs));
  if (keepApart)
    for (auto [a, b] : r.apart) s.add(x.at(a) != x.at(b));
  if (s.check() != z3::sat) return std::nullopt;
  z3::model m = s.get_model();
  Assignment a;
  for (auto& [v, e] : x) a[v] = m.eval(e, true).get_numeral_int64();
  return a;
}

}  // namespace

std::optional<Assignment> solveSizeRoles(const SizeRoles& r, bool keepApart) {
  if (r.roles.empty()) return std::nullopt;
  auto start = std::chrono::steady_clock::now();
  auto spent = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
  };
  int64_t top = r.roles.back();
  for (int64_t bound = 2, prev = 1; spent() < 1500; std::swap(bound, prev), bound += prev) {  // Fibonacci steps
    int64_t b = std::min(bound, top);
    if (auto a = solveBounded(r, keepApart, b, 300)) return a;
    if (b == top) break;
  }
  return std::nullopt;
}

}  // namespace tangle::replay::detail
