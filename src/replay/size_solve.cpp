// Solving the size roles (size_roles.h) for a small instance with Z3.
#include <chrono>

#include <z3++.h>

#include "replay/size_roles.h"

namespace tangle::replay::detail {

std::optional<std::map<int64_t, int64_t>> solveSizeRoles(const SizeRoles& r, bool keepApart) {
  if (r.roles.empty()) return std::nullopt;
  z3::context c;
  z3::solver s(c);
  z3::params p(c);
  p.set("timeout", 400u);  // per query; a query Z3 does not finish stops the search
  s.set(p);
  std::map<int64_t, z3::expr> x;
  z3::expr total = c.int_val(0);
  for (int64_t v : r.roles) {
    z3::expr e = c.int_const(("n" + std::to_string(v)).c_str());
    s.add(e >= 2 && e <= c.int_val(v));
    x.emplace(v, e);
    total = total + e;
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
  // The smallest bound M on every role that Z3 satisfies (from 2 up, each
  // step about x1.5), then smaller totals under it while Z3 answers quickly.
  auto start = std::chrono::steady_clock::now();
  auto late = [&] { return std::chrono::steady_clock::now() - start > std::chrono::milliseconds(1500); };
  std::optional<std::map<int64_t, int64_t>> best;
  auto take = [&](const z3::model& m) {
    std::map<int64_t, int64_t> a;
    for (auto& [v, e] : x) a[v] = m.eval(e, true).get_numeral_int64();
    best = std::move(a);
  };
  int64_t top = r.roles.back();
  for (int64_t bound = 2; !best && !late(); bound = bound < top ? std::min(top, bound + (bound + 1) / 2) : top + 1) {
    if (bound > top) break;
    s.push();
    for (auto& [v, e] : x)
      if (v > bound) s.add(e <= c.int_val(bound));
    if (s.check() == z3::sat) {
      take(s.get_model());
      for (int round = 0; round < 6 && !late(); ++round) {
        int64_t sum = 0;
        for (auto& [v, n] : *best) sum += n;
        s.add(total < c.int_val(sum));
        if (s.check() != z3::sat) break;
        take(s.get_model());
      }
    }
    s.pop();
  }
  return best;
}

}  // namespace tangle::replay::detail
