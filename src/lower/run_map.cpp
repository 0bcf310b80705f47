#include "lower/run_map.h"

#include <algorithm>

#include "interp/interp.h"
#include "ops/ops.h"

namespace tangle::runs {

namespace {

void append(Runs& out, const Run& r) {
  if (r.len <= 0) return;
  if (!out.empty() && out.back().src == r.src && out.back().off + out.back().len == r.off) {
    out.back().len += r.len;
    return;
  }
  out.push_back(r);
}

int64_t prod(const interp::Shape& s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= s[i];
  return p;
}

std::optional<int64_t> axis(const eg::AttrList& a, size_t i, size_t rank) {
  auto d = eg::attrInt(a, i);
  if (!d) return std::nullopt;
  int64_t r = static_cast<int64_t>(rank), v = *d < 0 ? *d + r : *d;
  if (v < 0 || v >= r) return std::nullopt;
  return v;
}

std::optional<OpMap> sliceMap(const eg::AttrList& a, const interp::Shape& x, size_t maxRuns) {
  auto d = axis(a, 0, x.size());
  auto s = eg::attrInt(a, 1), e = eg::attrInt(a, 2), st = eg::attrInt(a, 3);
  if (!d || !s || !e || !st || *st < 1) return std::nullopt;
  int64_t D = x[static_cast<size_t>(*d)];
  if (*s < 0 || *e > D || *s > *e) return std::nullopt;
  int64_t outer = prod(x, 0, static_cast<size_t>(*d)), inner = prod(x, static_cast<size_t>(*d) + 1, x.size());
  int64_t count = (*e - *s + *st - 1) / *st;
  OpMap m{x, {}};
  m.shape[static_cast<size_t>(*d)] = count;
  if (inner == 0 || count == 0 || outer == 0) return m;
  // Too many runs known before building them: a partial slice (step 1) is one
  // run per outer index; with a step, count runs per outer index, of which
  // only a last and the next first may merge.
  if (*st == 1 && count < D && outer > static_cast<int64_t>(maxRuns)) return std::nullopt;
  if (*st > 1 && outer * count - (outer - 1) > static_cast<int64_t>(maxRuns)) return std::nullopt;
  for (int64_t o = 0; o < outer; ++o) {
    if (*st == 1) {
      append(m.runs, Run{0, (o * D + *s) * inner, count * inner});
    } else {
      for (int64_t k = *s; k < *e; k += *st) append(m.runs, Run{0, (o * D + k) * inner, inner});
    }
    if (m.runs.size() > maxRuns) return std::nullopt;
  }
  return m;
}

std::optional<OpMap> concatMap(const eg::AttrList& a, const std::vector<interp::Shape>& xs, size_t maxRuns) {
  if (xs.empty()) return std::nullopt;
  auto d = axis(a, 0, xs[0].size());
  if (!d) return std::nullopt;
  size_t dd = static_cast<size_t>(*d);
  OpMap m{xs[0], {}};
  m.shape[dd] = 0;
  for (const interp::Shape& x : xs) {
    if (x.size() != xs[0].size()) return std::nullopt;
    for (size_t i = 0; i < x.size(); ++i)
      if (i != dd && x[i] != xs[0][i]) return std::nullopt;
    m.shape[dd] += x[dd];
  }
  int64_t outer = prod(xs[0], 0, dd), inner = prod(xs[0], dd + 1, xs[0].size());
  // Blocks of two or more children never merge (their sources differ): one
  // run per non-empty block, known before building them.
  int64_t blocks = 0;
  for (const interp::Shape& x : xs) blocks += x[dd] * inner > 0 ? 1 : 0;
  if (blocks >= 2 && outer > static_cast<int64_t>(maxRuns) / blocks) return std::nullopt;
  for (int64_t o = 0; o < outer; ++o) {
    for (size_t c = 0; c < xs.size(); ++c) {
      int64_t block = xs[c][dd] * inner;
      append(m.runs, Run{static_cast<int>(c), o * block, block});
    }
    if (m.runs.size() > maxRuns) return std::nullopt;
  }
  return m;
}

std::optional<OpMap> reshapeMap(const eg::AttrList& a, const interp::Shape& x) {
  const auto* to = eg::attrInts(a, 0);
  if (!to) return std::nullopt;
  interp::Shape out(to->begin(), to->end());
  for (int64_t v : out)
    if (v < 0) return std::nullopt;
  if (numel(out) != numel(x)) return std::nullopt;
  OpMap m{out, {}};
  append(m.runs, Run{0, 0, numel(x)});
  return m;
}

}  // namespace

int64_t numel(const interp::Shape& s) { return prod(s, 0, s.size()); }

std::optional<OpMap> opMap(eg::Symbol op, const eg::AttrList& attrs, const std::vector<interp::Shape>& kids,
                           size_t maxRuns) {
  const ops::Syms& s = ops::syms();
  for (const interp::Shape& k : kids)
    for (int64_t v : k)
      if (v < 0) return std::nullopt;
  if (op == s.slice) return kids.size() == 1 ? sliceMap(attrs, kids[0], maxRuns) : std::nullopt;
  if (op == s.concat) return concatMap(attrs, kids, maxRuns);
  if (op == s.reshape) return kids.size() == 1 ? reshapeMap(attrs, kids[0]) : std::nullopt;
  if (!ops::isGatherOp(op)) return std::nullopt;
  // transpose, permute, expand: one run per element at worst; only small ones
  int64_t most = 0;
  for (const interp::Shape& k : kids) most = std::max(most, numel(k));
  if (most > static_cast<int64_t>(maxRuns) * 4) return std::nullopt;
  eg::ENode n{op, eg::internAttrs(attrs), {}};
  auto g = ops::gatherOf(n, kids);
  if (!g) return std::nullopt;
  OpMap m{g->shape, {}};
  for (size_t i = 0; i < g->child.size(); ++i) {
    append(m.runs, Run{static_cast<int>(g->child[i]), g->offset[i], 1});
    if (m.runs.size() > maxRuns) return std::nullopt;
  }
  return m;
}

std::optional<Runs> compose(const Runs& m, const std::vector<const Runs*>& kids, size_t maxRuns) {
  // start offset of every run of every child, for the binary search
  std::vector<std::vector<int64_t>> starts(kids.size());
  for (size_t c = 0; c < kids.size(); ++c) {
    int64_t at = 0;
    for (const Run& r : *kids[c]) {
      starts[c].push_back(at);
      at += r.len;
    }
  }
  Runs out;
  for (const Run& r : m) {
    if (r.src < 0 || static_cast<size_t>(r.src) >= kids.size()) return std::nullopt;
    const Runs& k = *kids[static_cast<size_t>(r.src)];
    const std::vector<int64_t>& st = starts[static_cast<size_t>(r.src)];
    auto it = std::upper_bound(st.begin(), st.end(), r.off);
    if (it == st.begin()) return std::nullopt;
    size_t j = static_cast<size_t>(it - st.begin()) - 1;
    int64_t at = r.off, left = r.len;
    while (left > 0) {
      if (j >= k.size()) return std::nullopt;  // past the child's end
      int64_t into = at - st[j], take = std::min(left, k[j].len - into);
      append(out, Run{k[j].src, k[j].off + into, take});
      at += take;
      left -= take;
      ++j;
      if (out.size() > maxRuns) return std::nullopt;
    }
  }
  return out;
}

}  // namespace tangle::runs
