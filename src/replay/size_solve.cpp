// Solving the size roles (size_roles.h) for a small instance with Z3.
//
// Every role gets a bound M (2 <= role <= min(value, M)); the smallest M
// tried (2, 3, 5, 8, ...) that Z3 satisfies wins. Class mode (preferSmall)
// first caps each role at k times its least value instead (solveNearLeast). The domains are bounded, so the products are bit-blasted (nla2bv):
// nonlinear integer search alone gives up on the GPT-sized systems.
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <algorithm>
#include <iterator>

#include <string>

#include <fmt/format.h>
#include <z3++.h>

#include "replay/size_roles.h"

namespace tangle::replay::detail {

namespace {

using Assignment = std::map<int64_t, int64_t>;

// Z3 work is bounded by its resource counter (rlimit), not by time, so the instance found (or the
// refusal) is the same on a loaded machine as on an idle one; `used` accumulates the counter.
// `preferSmall`: the bit-blasted search tries each bit 0 first (smt phase_selection 0), so the
// model leaves free sizes low instead of anywhere under the bound.
// `unsat`, when given, is set when Z3 proved that no assignment exists. `bitBlast` false: plain
// nonlinear integer reasoning (no nla2bv), which rarely finds a model but refutes a system pinned by
// its equalities at once (see solveSizeRoles).
std::optional<Assignment> solveBounded(const SizeRoles& r, bool keepApart, int64_t bound, unsigned rlimit,
                                       uint64_t& used, bool preferSmall, const std::vector<char>* dropped = nullptr,
                                       bool bitBlast = true, bool* unsat = nullptr,
                                       const std::map<int64_t, int64_t>* caps = nullptr) {
  std::clock_t cpu0 = std::clock();
  z3::context c;
  z3::params smtParams(c);
  if (preferSmall) smtParams.set("phase_selection", 0u);
  z3::tactic t = z3::tactic(c, "simplify") & z3::tactic(c, "propagate-values") & z3::tactic(c, "solve-eqs");
  if (bitBlast) t = t & z3::tactic(c, "nla2bv");
  t = t & z3::with(z3::tactic(c, "smt"), smtParams);
  z3::solver s = t.mk_solver();
  z3::params p(c);
  p.set("rlimit", rlimit);
  s.set(p);
  std::map<int64_t, z3::expr> x;
  for (int64_t v : r.roles) {
    z3::expr e = c.int_const(("n" + std::to_string(v)).c_str());
    if (v < 0) s.add(e >= 1 && e <= c.int_val(r.boundValue.at(v)));  // a slice bound: any position
    else if (caps) s.add(e >= 2 && e <= c.int_val(caps->at(v)));
    else s.add(e >= 2 && e <= c.int_val(std::min(r.realValue(v), bound)));
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
  for (size_t i = 0; i < r.facts.size(); ++i) {
    const SizeFact& f = r.facts[i];
    if (!dropped || !(*dropped)[i]) s.add(f.le ? sum(f.lhs) <= sum(f.rhs) : sum(f.lhs) == sum(f.rhs));
  }
  if (keepApart)
    for (auto [a, b] : r.apart) s.add(x.at(a) != x.at(b));
  z3::check_result res = s.check();
  if (unsat) *unsat = res == z3::unsat;
  auto st = s.statistics();
  for (unsigned i = 0; i < st.size(); ++i)
    if (st.key(i) == "rlimit count") used += st.is_uint(i) ? st.uint_value(i) : uint64_t(st.double_value(i));
  if (std::getenv("TANGLE_TRACE_SIZES") && !dropped)
    std::fprintf(stderr, "size solve %s %lld%s: %s, rlimit used so far %llu, %.3f s CPU\n",
                 caps ? "at k x least, k =" : "bound", static_cast<long long>(bound), bitBlast ? "" : " (no bit-blasting)",
                 res == z3::sat ? "sat" : res == z3::unsat ? "unsat" : "unknown", static_cast<unsigned long long>(used),
                 double(std::clock() - cpu0) / CLOCKS_PER_SEC);
  if (res != z3::sat) return std::nullopt;
  z3::model m = s.get_model();
  Assignment a;
  for (auto& [v, e] : x) a[v] = m.eval(e, true).get_numeral_int64();
  if (std::getenv("TANGLE_TRACE_SIZES") && !dropped)
    for (auto& [v, k] : a)
      std::fprintf(stderr, "  size %lld (real %lld) -> %lld\n", static_cast<long long>(v),
                   static_cast<long long>(v < 0 ? r.boundValue.at(v) : r.realValue(v)), static_cast<long long>(k));
  return a;
}

std::string show(const SizeRoles& r, const SizeSum& t) {
  std::string o;
  for (const SizeMono& m : t) {
    o += (o.empty() ? "" : " + ") + std::to_string(m.coeff);
    for (int64_t v : m.sizes)
      o += "*" + (r.isRole(v) ? fmt::format("n{}({})", v, v < 0 ? r.boundValue.at(v) : r.realValue(v))
                              : std::to_string(v));
  }
  return o;
}

// TANGLE_TRACE_SIZES=core: why no instance has every size under `bound`. Deletion-based: a fact
// whose removal leaves the system unsat is not needed; what remains is a minimal unsat subset.
void explainUnsat(const SizeRoles& r, bool keepApart, int64_t bound) {
  std::vector<char> dropped(r.facts.size(), 0);
  for (size_t i = 0; i < r.facts.size(); ++i) {
    dropped[i] = 1;
    uint64_t used = 0;
    if (solveBounded(r, keepApart, bound, 1'000'000, used, false, &dropped)) dropped[i] = 0;
  }
  std::fprintf(stderr, "size solve: no instance under %lld; a minimal unsat set of facts (n<key>(real size)):\n",
               static_cast<long long>(bound));
  for (size_t i = 0; i < r.facts.size(); ++i)
    if (!dropped[i])
      std::fprintf(stderr, "  %s %s %s\n", show(r, r.facts[i].lhs).c_str(), r.facts[i].le ? "<=" : "==",
                   show(r, r.facts[i].rhs).c_str());
}

}  // namespace

namespace {

// Upper bounds for leastValues' division: nullopt when unknown or past 2^40 (never rounded down,
// which would raise a least value past the truth).
constexpr int64_t kHuge = int64_t(1) << 40;

// The largest value a size can take: a role or slice bound at most its real value, a literal
// itself; nullopt for a literal below 1 (a product with it does not grow with the roles).
std::optional<int64_t> mostOf(const SizeRoles& r, int64_t v) {
  if (!r.isRole(v)) return v >= 1 ? std::optional<int64_t>(v) : std::nullopt;
  return v < 0 ? r.boundValue.at(v) : r.realValue(v);
}

// coeff x the largest of each factor but the one at `skip` (none: -1).
std::optional<int64_t> mostOf(const SizeRoles& r, const SizeMono& m, int skip = -1) {
  if (m.coeff < 1) return std::nullopt;
  __int128 p = m.coeff;
  for (size_t q = 0; q < m.sizes.size(); ++q) {
    if (int(q) == skip) continue;
    auto v = mostOf(r, m.sizes[q]);
    if (!v) return std::nullopt;
    p *= *v;
    if (p > kHuge) return std::nullopt;
  }
  return int64_t(p);
}

}  // namespace

// Only caps the search (solveNearLeast): a wrong least value could cost an instance, never soundness,
// since every instance is checked against the type rules before it is used (reduce.cpp).
std::map<int64_t, int64_t> leastValues(const SizeRoles& r, bool divide) {
  std::map<int64_t, int64_t> lo;
  for (int64_t v : r.roles) lo[v] = v < 0 ? 1 : 2;
  auto least = [&](const SizeSum& t, bool& ok) {
    int64_t out = 0;
    for (const SizeMono& m : t) {
      if (m.coeff <= 0) ok = false;
      __int128 p = m.coeff;  // saturated at 2^40 (a lower bound stays one), without overflow on the way
      for (int64_t v : m.sizes) p = std::min<__int128>(p * (r.isRole(v) ? lo.at(v) : v), kHuge);
      out += int64_t(p);
    }
    return out;
  };
  auto single = [&](const SizeSum& t) -> int64_t {
    return t.size() == 1 && t[0].coeff == 1 && t[0].sizes.size() == 1 && r.isRole(t[0].sizes[0]) ? t[0].sizes[0] : 0;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (const SizeFact& f : r.facts) {
      bool ok = true;
      int64_t l = least(f.lhs, ok), rr = least(f.rhs, ok);
      if (!ok) continue;
      auto raise = [&](int64_t v, int64_t to) {
        int64_t cap = v < 0 ? r.boundValue.at(v) : r.realValue(v);
        to = std::min(to, cap);
        if (v && to > lo.at(v)) lo[v] = to, changed = true;
      };
      if (int64_t v = single(f.rhs)) raise(v, l);
      if (int64_t v = single(f.lhs); v && !f.le) raise(v, rr);
      if (!divide) continue;
      // Side `s` is at least `need`: each of its monomials is at least need minus the largest
      // value of the others, and each role of a monomial at least that over the largest value of
      // its other factors (rounded up).
      // Only over positive factors (least() already skips a fact with a coefficient below 1).
      auto through = [&](const SizeSum& s, int64_t need) {
        for (size_t i = 0; i < s.size(); ++i) {
          int64_t rest = 0;
          bool bounded = true;
          for (size_t j = 0; j < s.size() && bounded; ++j) {
            if (j == i) continue;
            auto m = mostOf(r, s[j]);
            bounded = m && (rest += *m) <= kHuge;
          }
          if (!bounded || need - rest <= 0) continue;
          int64_t left = need - rest;
          for (size_t k = 0; k < s[i].sizes.size(); ++k) {
            int64_t v = s[i].sizes[k];
            auto other = mostOf(r, s[i], int(k));
            if (!r.isRole(v) || !other) continue;
            raise(v, (left + *other - 1) / *other);
          }
        }
      };
      auto positive = [&](const SizeSum& t) {
        return std::all_of(t.begin(), t.end(), [&](const SizeMono& m) {
          return std::all_of(m.sizes.begin(), m.sizes.end(), [&](int64_t v) { return mostOf(r, v).has_value(); });
        });
      };
      if (!positive(f.lhs) || !positive(f.rhs)) continue;
      through(f.rhs, l);
      if (!f.le) through(f.lhs, rr);
    }
  }
  return lo;
}

namespace {

// Class mode's search (preferSmall): every role capped at k times its least value, for growing k.
// The uniform bound of the walk below minimizes the largest size only, so a class whose least
// value is 2 (a batch of 8) may take anything under it: GPT paral4_layer8's instance at the
// smallest uniform bound (987) had 80M elements, batch 7 and 24 heads as 14. Capping each class
// near its own least value keeps every class small at once (45M there, at k = 6), and its unsat
// solves are cheap. k only widens the caps, so the first sat k is the smallest; nullopt when
// none up to 64 is (the caller goes on to the uniform walk). Steps of ~1.5x: every class-mode
// configuration of the artifact stops at k = 6, and k = 3 cost one more unsat solve each (~0.2 s
// CPU on layer8) for nothing.
std::optional<Assignment> solveNearLeast(const SizeRoles& r, bool keepApart, uint64_t& used) {
  std::map<int64_t, int64_t> lo = leastValues(r);
  auto solveAt = [&](int64_t k, bool* unsat) {
    std::map<int64_t, int64_t> caps;
    for (int64_t v : r.roles)
      if (v >= 0) caps[v] = std::min(r.realValue(v), lo.at(v) * k);
    return solveBounded(r, keepApart, k, 1'000'000, used, true, nullptr, true, unsat, &caps);
  };
  static constexpr int64_t kSteps[] = {1, 2, 4, 6, 8, 12, 16, 32, 64};
  // The walk starts at k = 4 (kSteps[kStart]): an unsat proved there is unsat at every smaller k
  // (their caps are tighter), so k = 1 and 2 are not solved (~0.1 s CPU of GPT paral4_layer8's
  // 0.4 s in class mode). Only a proof skips them: when k = 4 is sat or unknown, k = 1 and 2
  // are solved first as before, so the k found, and its model (the same call in a fresh
  // context), are the plain walk's in every case.
  constexpr size_t kStart = 2;
  bool startUnsat = false;
  std::optional<Assignment> atStart = solveAt(kSteps[kStart], &startUnsat);
  if (!startUnsat)
    for (size_t i = 0; i < kStart; ++i)
      if (auto a = solveAt(kSteps[i], nullptr)) return a;
  if (atStart) return atStart;
  for (size_t i = kStart + 1; i < std::size(kSteps); ++i)
    if (auto a = solveAt(kSteps[i], nullptr)) return a;
  return std::nullopt;
}

}  // namespace

std::optional<Assignment> solveSizeRoles(const SizeRoles& r, bool keepApart, bool preferSmall) {
  if (r.roles.empty()) return std::nullopt;
  // Budgets in Z3 resource units: the artifact systems need 5k-75k per bound, a few 100k in all.
  constexpr unsigned kPerBound = 1'000'000;
  constexpr uint64_t kTotal = 4'000'000;
  uint64_t used = 0;
  if (std::getenv("TANGLE_TRACE_SIZES")) {
    auto show = [](const SizeSum& t) {
      std::string o;
      for (const SizeMono& m : t) {
        o += (o.empty() ? "" : " + ") + std::to_string(m.coeff);
        for (int64_t v : m.sizes) o += "*" + std::to_string(v);
      }
      return o;
    };
    for (const SizeFact& f : r.facts)
      std::fprintf(stderr, "size fact: %s %s %s\n", show(f.lhs).c_str(), f.le ? "<=" : "==", show(f.rhs).c_str());
  }
  // Bounds stop at 1597: past it nla2bv's bit-blasting of aws_llama TP=4 (whose roles are pinned at
  // their real sizes) ran for minutes, outside the rlimit, and such an instance is over the element limit anyway.
  constexpr int64_t kLargestBound = 1597;
  int64_t top = 0;
  for (int64_t v : r.roles) top = std::max(top, r.realValue(v));
  // A system pinned by coincidences (one size per value on GPT and aws_llama TP=4) is unsat at every
  // bound; bit-blasted, proving it took seconds per bound (aws_llama TP=4: 7 of the check's 8.7 s
  // CPU), while plain integer reasoning refutes it in milliseconds. Only its unsat is trusted: a
  // sat or unknown answer goes on to the bit-blasted search, so every instance found is unchanged.
  {
    bool unsat = false;
    uint64_t probe = 0;
    int64_t b = std::min(kLargestBound, top);
    // 6k-28k units where it refutes (aws_llama TP=4); a solvable system can take 450k (GPT TP=4 by dim class) for nothing.
    constexpr unsigned kRefute = 100'000;
    solveBounded(r, keepApart, b, kRefute, probe, preferSmall, nullptr, /*bitBlast=*/false, &unsat);
    if (unsat) {
      const char* trace = std::getenv("TANGLE_TRACE_SIZES");
      if (trace && std::string(trace) == "core") explainUnsat(r, keepApart, b);
      return std::nullopt;
    }
  }
  if (preferSmall) {
    uint64_t nearLeast = 0;  // its own count: the walk keeps its whole budget when no k is sat
    if (auto a = solveNearLeast(r, keepApart, nearLeast)) return a;
  }
  for (int64_t bound = 2, prev = 1; used < kTotal && bound <= kLargestBound; std::swap(bound, prev), bound += prev) {
    int64_t b = std::min(bound, top);  // Fibonacci steps
    if (auto a = solveBounded(r, keepApart, b, kPerBound, used, preferSmall)) return a;
    if (b == top) break;
    // A larger bound only widens the domains, so when the largest is unsat every bound is: after
    // the small bounds fail, one probe at the largest refuses a pinned system (aws_llama TP=4)
    // without walking every Fibonacci bound up to it.
    if (b == 13 && std::min(kLargestBound, top) > 13) {
      int64_t largest = std::min(kLargestBound, top);
      uint64_t probe = 0;
      auto atLargest = solveBounded(r, keepApart, largest, kPerBound, probe, preferSmall);
      if (!atLargest) {
        const char* trace = std::getenv("TANGLE_TRACE_SIZES");
        if (trace && std::string(trace) == "core") explainUnsat(r, keepApart, largest);
        return std::nullopt;
      }
      used += probe;
      // The smallest bound left that is sat, by bisection over the Fibonacci bounds the walk would
      // try (21, 34, ... up to `largest`): sat at one bound means sat at every larger one, so it is
      // the bound the walk would stop at, solved by the same call, at ~4 solves instead of ~10.
      std::vector<int64_t> rest;
      for (int64_t f = bound + prev, g = bound; f <= kLargestBound; std::swap(f, g), f += g) {
        rest.push_back(std::min(f, top));
        if (rest.back() == top) break;
      }
      if (rest.empty() || rest.back() != largest) rest.push_back(largest);
      size_t lo = 0, hi = rest.size() - 1;  // rest[hi] is sat
      std::optional<Assignment> best = std::move(atLargest);
      while (lo < hi && used < kTotal) {
        size_t mid = (lo + hi) / 2;
        if (auto a = solveBounded(r, keepApart, rest[mid], kPerBound, used, preferSmall)) {
          hi = mid;
          best = std::move(a);
        } else {
          lo = mid + 1;
        }
      }
      return best;
    }
  }
  return std::nullopt;
}

}  // namespace tangle::replay::detail
