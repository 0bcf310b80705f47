#include "replay/size_roles.h"

#include <algorithm>
#include <set>

#include "ops/ops.h"
#include "support/error.h"

namespace tangle::replay::detail {

bool SizeRoles::isRole(int64_t v) const { return std::binary_search(roles.begin(), roles.end(), v); }

bool isSizeAttr(eg::Symbol op, size_t pos) {
  const ops::OpDef* def = ops::find(op);
  if (!def) return false;
  auto schema = ops::attrSchema(*def);
  if (pos >= schema.size()) return false;
  const ops::AttrSpec& a = schema[pos];
  if (a.kind == "dim") return true;
  if (a.kind == "ints") return a.name == "shape" || a.name == "sizes" || a.name == "normalized_shape";
  if (a.kind == "int") return a.name == "head_size" || a.name == "classes";
  return false;
}

namespace {
constexpr int64_t kHuge = int64_t(1) << 40;  // "to the end" slice bounds and the like are not sizes
}  // namespace

std::optional<std::pair<int64_t, int64_t>> sliceWindow(int64_t start, int64_t end, int64_t step) {
  if (step != 1 || start < 0 || end <= start || end >= kHuge || start % (end - start) != 0) return std::nullopt;
  return std::make_pair(start / (end - start), end - start);
}

namespace {


struct Collector {
  SizeRoles& r;
  std::set<int64_t> roles;
  std::set<std::pair<int64_t, int64_t>> apart;
  std::map<std::pair<int64_t, int64_t>, std::set<int64_t>> windows;  // (start, end) -> sizes of the dims sliced

  void note(int64_t v) {
    if (v > r.threshold && v < kHuge) roles.insert(v);
  }
  void shape(const std::vector<Dim>& s) {
    for (Dim d : s) note(d);
    for (size_t i = 0; i < s.size(); ++i)
      for (size_t j = i + 1; j < s.size(); ++j)
        if (s[i] != s[j] && s[i] > r.threshold && s[j] > r.threshold && s[i] < kHuge && s[j] < kHuge)
          apart.insert(std::minmax(s[i], s[j]));
  }
  void eq(SizeSum a, SizeSum b) { r.facts.push_back({std::move(a), std::move(b), false}); }
  void le(SizeSum a, SizeSum b) { r.facts.push_back({std::move(a), std::move(b), true}); }

  static const std::vector<Dim>* shapeOf(const eg::EGraph& g, eg::Id c) {
    const TensorType* t = g.data(g.find(c)).tensor();
    if (!t) return nullptr;
    for (Dim d : t->shape)
      if (d < 0) return nullptr;  // symbolic: not reduced here
    return &t->shape;
  }
  static std::optional<size_t> axis(int64_t d, size_t rank) {
    if (d < 0) d += static_cast<int64_t>(rank);
    if (d < 0 || d >= static_cast<int64_t>(rank)) return std::nullopt;
    return static_cast<size_t>(d);
  }

  // A bound of a slice of a dim of size n: 0 and n are themselves, others a variable of their own.
  SizeSum bound(int64_t n, int64_t v) {
    if (v == 0) return {};
    if (v == n || n <= r.threshold) return {{1, {v}}};
    auto [it, fresh] = r.boundKey.try_emplace({n, v}, -1 - static_cast<int64_t>(r.boundKey.size()));
    if (fresh) r.boundValue[it->second] = v;
    roles.insert(it->second);
    return {{1, {it->second}}};
  }
  // end - start = out, end within the input (a bound past it means "to the end").
  void slice(const eg::AttrList& a, const std::vector<Dim>& in, const std::vector<Dim>& out) {
    if (a.size() != 4 || in.size() != out.size()) return;
    for (const eg::Attr& x : a)
      if (x.kind != eg::Attr::Kind::Int) return;
    auto d = axis(a[0].i, in.size());
    int64_t s = a[1].i, e = a[2].i;
    if (!d || s < 0 || e < s || a[3].i != 1) return;
    int64_t n = in[*d], m = out[*d];
    SizeSum start = bound(n, s), len{{1, {m}}};
    if (e >= n) {
      SizeSum rest{{1, {n}}};
      for (const SizeMono& x : start) rest.push_back({-x.coeff, x.sizes});
      eq(len, rest);  // to the end; an end past it stays past it (or "to the end" when huge)
      if (e != n && e < kHuge) le({{1, {n}}}, bound(n, e));
    } else {
      SizeSum span = bound(n, e);
      for (const SizeMono& x : start) span.push_back({-x.coeff, x.sizes});
      eq(len, span);
      le(bound(n, e), {{1, {n}}});
    }
    if (n > r.threshold) windows[{s, e}].insert(n);
  }
  // A window (start, end) seen over dims of several sizes maps to one reduced window: its bounds agree.
  // The bounds of one dim keep their order and stay inside it, so a shifted window stays shifted.
  void tieWindows() {
    std::map<int64_t, std::vector<std::pair<int64_t, int64_t>>> byDim;  // n -> (bound, key), by bound
    for (auto& [nv, key] : r.boundKey) byDim[nv.first].push_back({nv.second, key});
    for (auto& [n, bs] : byDim) {
      for (size_t k = 0; k + 1 < bs.size(); ++k) le({{1, {bs[k].second}}, {1, {}}}, {{1, {bs[k + 1].second}}});
      if (bs.back().first < n) le({{1, {bs.back().second}}, {1, {}}}, {{1, {n}}});
    }
    for (auto& [w, dims] : windows) {
      r.windowDim[w] = *dims.begin();
      for (int64_t n : dims)
        if (n != *dims.begin()) {
          eq(bound(n, w.first), bound(*dims.begin(), w.first));
          eq(bound(n, w.second), bound(*dims.begin(), w.second));
        }
    }
  }
  void concat(const eg::EGraph& g, const eg::ENode& n, const std::vector<Dim>& out) {
    if (n.children.empty()) return;
    auto a = eg::attrs(n.attrs);
    if (a.size() != 1 || a[0].kind != eg::Attr::Kind::Int) return;
    auto d = axis(a[0].i, out.size());
    if (!d) return;
    SizeSum parts;
    for (eg::Id c : n.children) {
      const auto* s = shapeOf(g, c);
      if (!s || s->size() != out.size()) return;
      parts.push_back({1, {(*s)[*d]}});
    }
    eq({{1, {out[*d]}}}, std::move(parts));
  }
  // Groups of dims whose products agree, aligned from the left: each keeps its product.
  void reshape(const std::vector<Dim>& in, const std::vector<Dim>& out) {
    if (std::count(in.begin(), in.end(), 0) || std::count(out.begin(), out.end(), 0)) return;
    size_t i = 0, j = 0;
    while (i < in.size() || j < out.size()) {
      std::vector<int64_t> ga, gb;
      __int128 pa = 1, pb = 1;
      if (i < in.size()) pa *= in[i], ga.push_back(in[i++]);
      if (j < out.size()) pb *= out[j], gb.push_back(out[j++]);
      while (pa != pb) {
        if (pa < pb && i < in.size()) pa *= in[i], ga.push_back(in[i++]);
        else if (pb < pa && j < out.size()) pb *= out[j], gb.push_back(out[j++]);
        else return;
      }
      if (ga != gb) eq({{1, ga}}, {{1, gb}});
    }
  }
  void split(const eg::AttrList& a, const std::vector<Dim>& in) {
    if (a.size() != 2 || a[0].kind != eg::Attr::Kind::Int || a[1].kind != eg::Attr::Kind::IntList) return;
    auto d = axis(a[0].i, in.size());
    if (!d) return;
    SizeSum parts;
    for (int64_t v : a[1].list) parts.push_back({1, {v}});
    eq({{1, {in[*d]}}}, std::move(parts));
  }

  // a a multiple of b: a = (a / b) x b, the quotient a role (a head count) or a constant.
  void divisible(int64_t a, int64_t b) {
    if (b <= 0 || a % b != 0) return;
    note(a / b);
    eq({{1, {a}}}, {{1, {a / b, b}}});
  }
  // rotary[head_size](pos [T], x [T, H * head_size], cache [P, R]): R even, at most head_size.
  void rotary(const eg::EGraph& g, const eg::ENode& n, const eg::AttrList& a) {
    const auto* x = n.children.size() == 3 ? shapeOf(g, n.children[1]) : nullptr;
    const auto* cache = n.children.size() == 3 ? shapeOf(g, n.children[2]) : nullptr;
    if (!x || !cache || x->size() != 2 || cache->size() != 2 || a.empty() || a[0].kind != eg::Attr::Kind::Int) return;
    divisible((*x)[1], a[0].i);
    divisible((*cache)[1], 2);
    le({{1, {(*cache)[1]}}}, {{1, {a[0].i}}});
  }
  // attention(q [T, Hq, D], k [T, Hkv, D], v): Hq a multiple of Hkv.
  void attention(const eg::EGraph& g, const eg::ENode& n) {
    const auto* q = n.children.size() == 3 ? shapeOf(g, n.children[0]) : nullptr;
    const auto* k = n.children.size() == 3 ? shapeOf(g, n.children[1]) : nullptr;
    if (q && k && q->size() == 3 && k->size() == 3) divisible((*q)[1], (*k)[1]);
  }

  // apex_layer_norm keeps its statistics flattened: [product of the leading dims].
  void apexStats(const eg::AttrList& a, const std::vector<Dim>& x, const eg::ClassData& data) {
    if (a.empty() || a[0].kind != eg::Attr::Kind::IntList || data.types.size() < 2) return;
    size_t k = a[0].list.size();
    const auto& stat = data.types[1].shape;
    if (k > x.size() || stat.size() != 1) return;
    eq({{1, {stat[0]}}}, {{1, std::vector<int64_t>(x.begin(), x.end() - static_cast<std::ptrdiff_t>(k))}});
  }

  void node(const eg::EGraph& g, const eg::ENode& n, const eg::ClassData& data) {
    const ops::Syms& s = ops::syms();
    eg::AttrList a = eg::attrs(n.attrs);
    std::vector<Dim> mentioned;  // the node's size attributes and its operands' dims
    bool window = n.op == s.slice && a.size() == 4 && a[1].kind == eg::Attr::Kind::Int &&
                  a[2].kind == eg::Attr::Kind::Int && a[3].kind == eg::Attr::Kind::Int && a[3].i == 1;
    for (size_t k = 0; k < a.size(); ++k) {
      if (!isSizeAttr(n.op, k) || (window && (k == 1 || k == 2))) continue;
      if (a[k].kind == eg::Attr::Kind::Int) note(a[k].i), mentioned.push_back(a[k].i);
      if (a[k].kind == eg::Attr::Kind::IntList)
        for (int64_t v : a[k].list) note(v), mentioned.push_back(v);
    }
    if (!mentioned.empty()) {  // a slice window [1536, 3584) of 4096 rows keeps its offset from 2048
      for (eg::Id c : n.children)
        if (const auto* cs = shapeOf(g, c)) mentioned.insert(mentioned.end(), cs->begin(), cs->end());
      std::sort(mentioned.begin(), mentioned.end());
      mentioned.erase(std::unique(mentioned.begin(), mentioned.end()), mentioned.end());
      shape(mentioned);
    }
    const std::vector<Dim>* in = n.children.empty() ? nullptr : shapeOf(g, n.children[0]);
    if (n.op == s.split && in) split(a, *in);  // a tuple: no tensor type of its own
    if (n.op == s.rotary) rotary(g, n, a);
    if (n.op == s.attention) attention(g, n);
    if (n.op == s.apexLayerNorm && in) apexStats(a, *in, data);
    const TensorType* t = data.tensor();
    if (!t || std::any_of(t->shape.begin(), t->shape.end(), [](Dim d) { return d < 0; })) return;
    if (n.op == s.concat) concat(g, n, t->shape);
    if (!in) return;
    if (n.op == s.slice) slice(a, *in, t->shape);
    if (n.op == s.reshape) reshape(*in, t->shape);
  }
  void egraph(const eg::EGraph& g) {
    for (eg::Id c : g.classIds()) {
      const eg::ClassData& d = g.data(c);
      for (const TensorType& t : d.types) shape(t.shape);
      for (const eg::ENode& n : g.eclass(c).nodes) node(g, n, d);
    }
  }
  void graph(const LGraph& lg) {
    sym::Context none;
    for (size_t i = 0; i < lg.nodes.size(); ++i) {
      const LNode& n = lg.nodes[i];
      if (n.aliasOf >= 0) continue;
      for (const TensorType& t : n.data.types) shape(t.shape);
      if (n.isInput || n.def.nodes.empty()) continue;
      eg::EGraph g(ops::inferData, &none);
      if (addDefinition(g, lg, static_cast<int>(i))) egraph(g);
    }
  }
  void relExpr(const RelExpr& e, const LGraph& spec, const LGraph& impl) {
    sym::Context none;
    eg::EGraph g(ops::inferData, &none);
    try {
      addRelExpr(g, e, spec, impl);
    } catch (const InputError&) {
      return;  // not a tensor expression (a constant): nothing to relate
    }
    egraph(g);
  }
};

}  // namespace

SizeRoles collectSizeRoles(const LGraph& spec, const LGraph& impl, const RelationFile& rel, int64_t threshold) {
  SizeRoles r;
  r.threshold = threshold;
  Collector c{r, {}, {}, {}};
  c.graph(spec);
  c.graph(impl);
  for (const RelationEntry& e : rel.relations) c.relExpr(e.rhs, spec, impl);
  for (const Expectation& e : rel.expectations) {
    c.relExpr(e.lhs, spec, impl);
    c.relExpr(e.rhs, spec, impl);
  }
  c.tieWindows();
  r.roles.assign(c.roles.begin(), c.roles.end());
  r.apart.assign(c.apart.begin(), c.apart.end());
  return r;
}

}  // namespace tangle::replay::detail
