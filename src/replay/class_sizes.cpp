#include "replay/class_sizes.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ops/ops.h"
#include "replay/term_eval.h"

namespace tangle::replay::detail {

namespace {

constexpr int64_t kHuge = int64_t(1) << 40;       // "to the end" slice bounds are not sizes
constexpr int64_t kClassKey = int64_t(1) << 42;   // class root r is variable kClassKey + r

std::optional<size_t> axis(int64_t d, size_t rank) {
  if (d < 0) d += static_cast<int64_t>(rank);
  if (d < 0 || d >= static_cast<int64_t>(rank)) return std::nullopt;
  return static_cast<size_t>(d);
}

bool stepOneSlice(const eg::AttrList& a) {
  return a.size() == 4 && std::all_of(a.begin(), a.end(), [](const eg::Attr& x) { return x.kind == eg::Attr::Kind::Int; }) &&
         a[3].i == 1;
}

// Definition node k of LNode `node` as the builder recorded it. A node merged into an equal one
// (aliasOf) keeps its definition but was recorded once, under the node it resolves to: its
// attributes are that node's occurrences (else they were mapped by value, and aws_llama TP=4
// layer2's mask broadcast [4, 8, 64, 64] was refused as ambiguous).
const OpOccs* recordedOp(const DimClasses& dc, const LGraph& lg, bool isSpec, int node, size_t k) {
  auto at = dc.defOps.find({isSpec, node, k});
  if (at == dc.defOps.end()) {
    int to = lg.resolve(node);
    const auto& mine = lg.nodes[static_cast<size_t>(node)].def.nodes;
    const auto& theirs = lg.nodes[static_cast<size_t>(to)].def.nodes;
    if (to == node || mine.size() != theirs.size() || k >= mine.size() || mine[k].op != theirs[k].op ||
        mine[k].attrs != theirs[k].attrs)
      return nullptr;
    at = dc.defOps.find({isSpec, to, k});
  }
  return at == dc.defOps.end() ? nullptr : &dc.ops[static_cast<size_t>(at->second)];
}

struct FactBuilder {
  const DimClasses& dc;
  SizeRoles& r;
  std::set<int64_t> roles;
  std::set<std::string> seen;  // facts already stated (many operators repeat one)
  int64_t nextQuotient;

  // Positions along one dim occurrence (slice bounds, the boundaries between a concat's or a
  // split's pieces): occurrence -> real position -> its reduced forms (see tiePositions).
  std::map<int, std::map<int64_t, std::vector<SizeSum>>> positions;

  bool variable(int64_t v) const { return v > r.threshold && v < kHuge; }
  // The key of an occurrence: its class's variable, or its value when that is no size role.
  int64_t key(int occ) {
    int root = dc.find(occ);
    int64_t v = dc.value(root);
    if (!variable(v)) return v;
    int64_t k = kClassKey + root;
    if (roles.insert(k).second) r.keyValue[k] = v;
    return k;
  }
  void fact(SizeSum a, SizeSum b, bool le) {
    for (auto* s : {&a, &b})
      for (SizeMono& m : *s) std::sort(m.sizes.begin(), m.sizes.end());
    std::string id = le ? "<=" : "==";
    for (auto* s : {&a, &b}) {
      id += "|";
      for (const SizeMono& m : *s) id += fmt::format("{}*{};", m.coeff, fmt::join(m.sizes, ","));
    }
    if (!le && a.size() == 1 && b.size() == 1 && a[0].coeff == b[0].coeff && a[0].sizes == b[0].sizes) return;
    if (seen.insert(id).second) r.facts.push_back({std::move(a), std::move(b), le});
  }
  void eq(SizeSum a, SizeSum b) { fact(std::move(a), std::move(b), false); }
  void le(SizeSum a, SizeSum b) { fact(std::move(a), std::move(b), true); }

  // A bound of a slice of dim occurrence n: 0 and n's size are themselves, others a variable per (class, bound).
  SizeSum bound(int n, int64_t v) {
    if (v == 0) return {};
    int64_t nv = dc.value(dc.find(n));
    if (v == nv) return {{1, {key(n)}}};
    if (!variable(nv)) return {{1, {v}}};
    auto [it, fresh] = r.boundKey.try_emplace({kClassKey + dc.find(n), v}, -1 - static_cast<int64_t>(r.boundKey.size()));
    if (fresh) r.boundValue[it->second] = v;
    roles.insert(it->second);
    return {{1, {it->second}}};
  }
  SizeSum minus(SizeSum a, const SizeSum& b) {
    for (const SizeMono& x : b) a.push_back({-x.coeff, x.sizes});
    return a;
  }
  void slice(const OpOccs& o) {
    const eg::AttrList& a = o.attrs;
    if (!stepOneSlice(a) || o.children.empty() || o.children[0].size() != 1 || o.result.size() != 1) return;
    const auto &in = o.children[0][0], &out = o.result[0];
    auto d = axis(a[0].i, in.size());
    int64_t s = a[1].i, e = a[2].i;
    if (!d || in.size() != out.size() || s < 0 || e < s) return;
    int n = in[*d];
    int64_t nv = dc.value(n);
    SizeSum start = bound(n, s), len{{1, {key(out[*d])}}};
    position(n, s, start);
    if (e < nv) position(n, e, bound(n, e));
    if (e >= nv) {
      eq(len, minus({{1, {key(n)}}}, start));
      if (e != nv && e < kHuge) le({{1, {key(n)}}}, bound(n, e));
    } else {
      eq(len, minus(bound(n, e), start));
      le(bound(n, e), {{1, {key(n)}}});
    }
  }
  void position(int n, int64_t v, SizeSum at) {
    if (v > 0 && v < dc.value(n)) positions[n][v].push_back(std::move(at));
  }
  // The boundaries between the pieces of dim occurrence `whole` (a concat's result, a split's operand).
  void boundaries(int whole, const std::vector<int>& pieces) {
    SizeSum at;
    int64_t v = 0;
    for (size_t k = 0; k + 1 < pieces.size(); ++k) {
      at.push_back({1, {key(pieces[k])}});
      v += dc.value(pieces[k]);
      position(whole, v, at);
    }
  }
  // Positions along one dim occurrence at one real position stay one position. A slice bound is
  // a variable of its own, so nothing else says that the window a slice_scatter cuts out ([1536,
  // 1792) of Qwen2's fused qkv, a concat of [0, 1536), the rotated k and [1792, 2048)) is where
  // the tensor's readers split out k ([1536, 256, 256]): reduced apart, the spec wrote its k over
  // the end of q while the ranks did not, and the certificate replay reported a false mismatch.
  // Each tie holds at the real sizes, so it costs freedom, never validity. Per occurrence, not
  // per class: tied across a class, aws_llama TP=4's instance grew from 0.7M to 1.6M elements.
  void tiePositions() {
    for (auto& [root, byValue] : positions)
      for (auto& [v, forms] : byValue)
        for (size_t k = 1; k < forms.size(); ++k) eq(forms[0], forms[k]);
  }
  // The bounds of one class keep their order and stay inside it, so a shifted window stays shifted.
  void orderBounds() {
    std::map<int64_t, std::vector<std::pair<int64_t, int64_t>>> byClass;  // class key -> (bound, key), by bound
    for (auto& [cv, k] : r.boundKey) byClass[cv.first].push_back({cv.second, k});
    for (auto& [c, bs] : byClass) {
      std::sort(bs.begin(), bs.end());
      for (size_t k = 0; k + 1 < bs.size(); ++k) le({{1, {bs[k].second}}, {1, {}}}, {{1, {bs[k + 1].second}}});
      if (bs.back().first < r.keyValue.at(c)) le({{1, {bs.back().second}}, {1, {}}}, {{1, {c}}});
    }
  }
  void concat(const OpOccs& o) {
    if (o.attrs.size() != 1 || o.attrs[0].kind != eg::Attr::Kind::Int || o.result.size() != 1) return;
    auto d = axis(o.attrs[0].i, o.result[0].size());
    if (!d) return;
    SizeSum parts;
    for (const auto& c : o.children) {
      if (c.size() != 1 || c[0].size() != o.result[0].size()) return;
      parts.push_back({1, {key(c[0][*d])}});
    }
    boundaries(o.result[0][*d], [&] {
      std::vector<int> pieces;
      for (const auto& c : o.children) pieces.push_back(c[0][*d]);
      return pieces;
    }());
    eq({{1, {key(o.result[0][*d])}}}, std::move(parts));
  }
  // Groups of dims whose products agree, aligned from the left: each keeps its product.
  void reshape(const OpOccs& o) {
    if (o.children.empty() || o.children[0].size() != 1 || o.result.size() != 1) return;
    const auto &in = o.children[0][0], &out = o.result[0];
    for (const auto* s : {&in, &out})
      for (int x : *s)
        if (dc.value(x) <= 0) return;
    size_t i = 0, j = 0;
    while (i < in.size() || j < out.size()) {
      std::vector<int64_t> ga, gb;
      __int128 pa = 1, pb = 1;
      if (i < in.size()) pa *= dc.value(in[i]), ga.push_back(key(in[i++]));
      if (j < out.size()) pb *= dc.value(out[j]), gb.push_back(key(out[j++]));
      while (pa != pb) {
        if (pa < pb && i < in.size()) pa *= dc.value(in[i]), ga.push_back(key(in[i++]));
        else if (pb < pa && j < out.size()) pb *= dc.value(out[j]), gb.push_back(key(out[j++]));
        else return;
      }
      eq({{1, ga}}, {{1, gb}});
    }
  }
  void split(const OpOccs& o) {
    if (o.attrs.size() != 2 || o.attrs[0].kind != eg::Attr::Kind::Int || o.children.empty() ||
        o.children[0].size() != 1)
      return;
    const auto& in = o.children[0][0];
    auto d = axis(o.attrs[0].i, in.size());
    if (!d) return;
    SizeSum parts;
    std::vector<int> pieces;
    if (o.result.size() == o.attrs[1].list.size()) {
      for (const auto& t : o.result) {
        if (t.size() != in.size()) return;
        pieces.push_back(t[*d]);
      }
    } else {  // the tuple's items are not typed here: its size attribute
      if (o.attrOccs.size() < 2 || o.attrOccs[1].size() != o.attrs[1].list.size()) return;
      pieces = o.attrOccs[1];
    }
    if (pieces.empty()) return;
    for (int x : pieces) parts.push_back({1, {key(x)}});
    boundaries(in[*d], pieces);
    eq({{1, {key(in[*d])}}}, std::move(parts));
  }
  // a a multiple of b: a = q x b, q a variable of its own when it is a size role, else a constant.
  void divisible(int a, int64_t bKey, int64_t bValue) {
    int64_t av = dc.value(a);
    if (bValue <= 0 || av % bValue != 0) return;
    int64_t q = av / bValue;
    if (variable(q)) {
      int64_t k = nextQuotient++;
      roles.insert(k);
      r.keyValue[k] = q;
      q = k;
    }
    eq({{1, {key(a)}}}, {{1, {q, bKey}}});
  }
  // rotary[head_size](pos [T], x [T, H * head_size], cache [P, R]): R even, at most head_size.
  void rotary(const OpOccs& o) {
    if (o.children.size() != 3 || o.attrOccs.empty() || o.attrOccs[0].size() != 1) return;
    const auto &x = o.children[1], &cache = o.children[2];
    if (x.size() != 1 || cache.size() != 1 || x[0].size() != 2 || cache[0].size() != 2) return;
    int hs = o.attrOccs[0][0];
    divisible(x[0][1], key(hs), dc.value(hs));
    divisible(cache[0][1], 2, 2);
    le({{1, {key(cache[0][1])}}}, {{1, {key(hs)}}});
  }
  // attention(q [T, Hq, D], k [T, Hkv, D], v): Hq a multiple of Hkv.
  void attention(const OpOccs& o) {
    if (o.children.size() != 3 || o.children[0].size() != 1 || o.children[1].size() != 1) return;
    const auto &q = o.children[0][0], &k = o.children[1][0];
    if (q.size() == 3 && k.size() == 3) divisible(q[1], key(k[1]), dc.value(k[1]));
  }
  // apex_layer_norm keeps its statistics flattened: [product of the leading dims].
  void apexStats(const OpOccs& o) {
    if (o.attrs.empty() || o.attrs[0].kind != eg::Attr::Kind::IntList || o.result.size() < 2 || o.children.empty() ||
        o.children[0].size() != 1)
      return;
    size_t k = o.attrs[0].list.size();
    const auto& x = o.children[0][0];
    if (k > x.size() || o.result[1].size() != 1) return;
    std::vector<int64_t> lead;
    for (size_t i = 0; i + k < x.size(); ++i) lead.push_back(key(x[i]));
    eq({{1, {key(o.result[1][0])}}}, {{1, lead}});
  }
  void op(const OpOccs& o) {
    const ops::Syms& s = ops::syms();
    if (o.op == s.slice) slice(o);
    if (o.op == s.concat) concat(o);
    if (o.op == s.reshape) reshape(o);
    if (o.op == s.split) split(o);
    if (o.op == s.rotary) rotary(o);
    if (o.op == s.attention) attention(o);
    if (o.op == s.apexLayerNorm) apexStats(o);
  }
  // Two classes of different sizes in one tensor: kept different when possible (a transposition stays visible).
  void apart(const std::vector<int>& dims, std::set<std::pair<int64_t, int64_t>>& out) {
    for (size_t i = 0; i < dims.size(); ++i)
      for (size_t j = i + 1; j < dims.size(); ++j) {
        int64_t a = key(dims[i]), b = key(dims[j]);
        if (a >= kClassKey && b >= kClassKey && r.keyValue.at(a) != r.keyValue.at(b)) out.insert(std::minmax(a, b));
      }
  }
};

// An integer that names no dim of its operator (a token id compared with the vocabulary size, a
// relation file's literal) is mapped by value: all classes of that value (or of the size it is a
// small multiple of or just off) become one, so they get one reduced size and the literal follows.
struct LiteralTies {
  DimClasses& dc;
  int64_t threshold;
  std::map<int64_t, std::vector<int>> byValue;

  void index() {
    for (size_t o = 0; o < dc.occurrences(); ++o) byValue[dc.value(static_cast<int>(o))].push_back(static_cast<int>(o));
  }
  void tie(int64_t v) {
    auto it = byValue.find(v);
    if (it == byValue.end()) return;
    for (int o : it->second) dc.unite(it->second[0], o);
  }
  void literal(int64_t a) {
    if (a <= threshold || a >= kHuge) return;
    tie(a);
    for (auto& [b, occs] : byValue)
      if (b >= 64 && b != a && ((a % b == 0 && a / b <= 64) || std::abs(b - a) * 64 <= b)) tie(b);
  }
  void graph(const LGraph& lg, bool isSpec) {
    SizeMap anyRole;
    anyRole.roles[0] = 0;  // scalarMayBeSize's by-role rule
    for (size_t i = 0; i < lg.nodes.size(); ++i)
      for (size_t k = 0; k < lg.nodes[i].def.nodes.size(); ++k) {
        const CanonTerm::Node& tn = lg.nodes[i].def.nodes[k];
        if (!scalarMayBeSize(lg, tn, anyRole)) continue;
        const OpOccs* at = recordedOp(dc, lg, isSpec, static_cast<int>(i), k);
        for (const CanonTerm::Ref& r : tn.children) {
          double v = r.scalar;
          if (r.kind != CanonTerm::Ref::Kind::Scalar || !std::isfinite(v) || v != std::floor(v) || std::abs(v) > 9e15)
            continue;
          auto a = static_cast<int64_t>(std::abs(v));
          bool local = false;
          if (at) {
            const OpOccs& o = *at;
            for (const auto* ts : {&o.result})
              for (const auto& t : *ts)
                for (int x : t) local = local || dc.value(x) == a;
            for (const auto& c : o.children)
              for (const auto& t : c)
                for (int x : t) local = local || dc.value(x) == a;
          }
          if (!local) literal(a);
        }
      }
  }
  void expr(const RelExpr& e) {
    if (e.kind == RelExpr::Kind::Call && e.op == "slice") {
      const RelExpr *s = nullptr, *t = nullptr;
      for (auto& [k, a] : e.kwargs) {
        if (k == "start") s = &a;
        if (k == "end") t = &a;
      }
      if (s && t && s->kind == RelExpr::Kind::Int && t->kind == RelExpr::Kind::Int) window(s->i, t->i);
    }
    if (e.kind == RelExpr::Kind::Int) literal(e.i);
    for (int64_t v : e.ints) literal(v);
    for (auto& a : e.args) expr(a);
    for (auto& [k, a] : e.kwargs)
      if (k != "dim" && k != "dims" && k != "perm" && k != "dim0" && k != "dim1" && k != "start" && k != "end") expr(a);
  }
  // Every dim a window [s, e) slices is one class, so the window has one reduced form.
  void window(int64_t s, int64_t e) {
    int first = -1;
    for (const OpOccs& o : dc.ops)
      if (o.op == ops::syms().slice && stepOneSlice(o.attrs) && o.attrs[1].i == s && o.attrs[2].i == e &&
          !o.children.empty() && o.children[0].size() == 1)
        if (auto d = axis(o.attrs[0].i, o.children[0][0].size())) {
          int n = o.children[0][0][*d];
          if (first < 0) first = n;
          else if (dc.value(first) == dc.value(n)) dc.unite(first, n);
        }
  }
};

// A product split back into factors (GPT's [b, np] -> b*np -> [b, np] around the attention bmm):
// every split of one product class into factors of the same real sizes, in the same order, is
// tied factor by factor. Without it the two splits are free to factor the reduced product
// differently (b' x np' against b'' x np''), and the spec regroups its heads unlike the ranks,
// so a relation that holds at the real sizes fails at the reduced ones. Equal sizes only: a tie
// costs freedom, never validity.
struct FactorTies {
  DimClasses& dc;

  // Reshape groups whose one side is one dim and the other several, as (product, factors).
  static void groups(const DimClasses& dc, const OpOccs& o, std::vector<std::pair<int, std::vector<int>>>& out) {
    if (o.op != ops::syms().reshape || o.children.empty() || o.children[0].size() != 1 || o.result.size() != 1) return;
    const auto &in = o.children[0][0], &res = o.result[0];
    for (const auto* s : {&in, &res})
      for (int x : *s)
        if (dc.value(x) <= 0) return;
    size_t i = 0, j = 0;
    while (i < in.size() || j < res.size()) {
      std::vector<int> ga, gb;
      __int128 pa = 1, pb = 1;
      if (i < in.size()) pa *= dc.value(in[i]), ga.push_back(in[i++]);
      if (j < res.size()) pb *= dc.value(res[j]), gb.push_back(res[j++]);
      while (pa != pb) {
        if (pa < pb && i < in.size()) pa *= dc.value(in[i]), ga.push_back(in[i++]);
        else if (pb < pa && j < res.size()) pb *= dc.value(res[j]), gb.push_back(res[j++]);
        else return;
      }
      if (ga.size() == 1 && gb.size() > 1) out.push_back({ga[0], gb});
      if (gb.size() == 1 && ga.size() > 1) out.push_back({gb[0], ga});
    }
  }
  void run() {
    std::vector<std::pair<int, std::vector<int>>> splits;
    for (const OpOccs& o : dc.ops) groups(dc, o, splits);
    for (bool changed = true; changed;) {  // a tie can make two products one class: again
      changed = false;
      std::map<std::pair<int, std::vector<int64_t>>, const std::vector<int>*> first;
      for (const auto& [p, factors] : splits) {
        std::vector<int64_t> values;
        for (int f : factors) values.push_back(dc.value(f));
        auto [it, isNew] = first.emplace(std::make_pair(dc.find(p), values), &factors);
        if (isNew) continue;
        for (size_t k = 0; k < factors.size(); ++k)
          if (dc.find((*it->second)[k]) != dc.find(factors[k])) {
            dc.unite((*it->second)[k], factors[k]);
            changed = true;
          }
      }
    }
  }
};

}  // namespace

std::string mixedClass(const DimClasses& dc) {
  for (size_t o = 0; o < dc.occurrences(); ++o)
    if (dc.value(dc.find(static_cast<int>(o))) != dc.value(static_cast<int>(o)))
      return fmt::format("a dim class joins sizes {} and {}", dc.value(static_cast<int>(o)),
                         dc.value(dc.find(static_cast<int>(o))));
  return {};
}

ClassSizes collectClassSizes(const LGraph& spec, const LGraph& impl, const RelationFile& rel,
                             const InferResult& result, int64_t threshold) {
  ClassSizes cs;
  cs.dc = collectDimClasses(spec, impl, rel, result.all, &result);
  cs.roles.threshold = threshold;
  LiteralTies ties{cs.dc, threshold, {}};
  ties.index();
  ties.graph(spec, true);
  ties.graph(impl, false);
  for (const RelationEntry& r : rel.relations) ties.expr(r.rhs);
  for (const Expectation& e : rel.expectations) ties.expr(e.lhs), ties.expr(e.rhs);
  FactorTies{cs.dc}.run();
  cs.problem = mixedClass(cs.dc);
  if (!cs.problem.empty()) return cs;
  FactBuilder fb{cs.dc, cs.roles, {}, {}, kClassKey * 2, {}};
  for (size_t o = 0; o < cs.dc.occurrences(); ++o) fb.key(static_cast<int>(o));
  for (const OpOccs& o : cs.dc.ops) fb.op(o);
  fb.orderBounds();
  fb.tiePositions();
  std::set<std::pair<int64_t, int64_t>> apart;
  for (bool s : {true, false})
    for (const auto& node : cs.dc.table(s))
      for (const auto& type : node) fb.apart(type, apart);
  cs.roles.roles.assign(fb.roles.begin(), fb.roles.end());
  cs.roles.apart.assign(apart.begin(), apart.end());
  for (int64_t k : cs.roles.roles) cs.classes += k >= kClassKey && k < 2 * kClassKey;
  if (std::getenv("TANGLE_TRACE_SIZES")) {  // every fact must hold at the real sizes
    auto real = [&](int64_t k) { return k < 0 ? cs.roles.boundValue.at(k) : cs.roles.realValue(k); };
    auto sum = [&](const SizeSum& t) {
      __int128 out = 0;
      for (const SizeMono& m : t) {
        __int128 p = m.coeff;
        for (int64_t v : m.sizes) p *= real(v);
        out += p;
      }
      return out;
    };
    for (const SizeFact& f : cs.roles.facts)
      if (f.le ? sum(f.lhs) > sum(f.rhs) : sum(f.lhs) != sum(f.rhs))
        std::fprintf(stderr, "class fact false at the real sizes: %lld %s %lld\n", (long long)sum(f.lhs),
                     f.le ? "<=" : "==", (long long)sum(f.rhs));
  }
  return cs;
}

namespace {

struct ClassMapper {
  const ClassSizes& cs;
  const std::map<int64_t, int64_t>& solved;
  SizeMap byValue;                                  // sizes every class of a value agrees on
  std::set<int64_t> ambiguous;                      // values whose classes got different sizes
  std::set<std::pair<int64_t, int64_t>> ambiguousWindows;
  std::string why;
  std::string where;  // " of node X", for the refusal

  int64_t reduced(int occ) const {
    int root = cs.dc.find(occ);
    auto it = solved.find(kClassKey + root);
    return it == solved.end() ? cs.dc.value(root) : it->second;
  }
  void build() {
    std::map<int64_t, std::set<int64_t>> images;
    for (auto& [k, v] : solved)
      if (k >= kClassKey && k < 2 * kClassKey) images[cs.roles.keyValue.at(k)].insert(v);
    for (auto& [v, im] : images) {
      if (im.size() == 1) byValue.roles[v] = *im.begin();
      else ambiguous.insert(v);
    }
    std::map<std::pair<int64_t, int64_t>, std::set<std::pair<int64_t, int64_t>>> windows;
    for (const OpOccs& o : cs.dc.ops)
      if (o.op == ops::syms().slice && stepOneSlice(o.attrs) && !o.children.empty() && o.children[0].size() == 1)
        if (auto d = axis(o.attrs[0].i, o.children[0][0].size())) {
          int n = o.children[0][0][*d];
          windows[{o.attrs[1].i, o.attrs[2].i}].insert({bound(n, o.attrs[1].i), bound(n, o.attrs[2].i)});
        }
    for (auto& [w, im] : windows) {
      if (im.size() == 1) byValue.windows[w] = *im.begin();
      else ambiguousWindows.insert(w);
    }
  }
  int64_t bound(int n, int64_t v) const {
    int64_t nv = cs.dc.value(cs.dc.find(n));
    if (v == 0) return 0;
    if (v == nv) return reduced(n);
    auto k = cs.roles.boundKey.find({kClassKey + cs.dc.find(n), v});
    return k == cs.roles.boundKey.end() ? v : solved.at(k->second);
  }
  bool check(int64_t v, const std::string& what) {
    int64_t a = v < 0 ? -v : v;
    if (!ambiguous.count(a)) return true;
    if (why.empty())
      why = fmt::format("{} {}{} names no dim of its operator, and the classes of {} got different sizes", what, v,
                        where, a);
    return false;
  }
  // The attributes of a recorded operator, occurrence by occurrence.
  void attrs(const OpOccs& o, eg::AttrList& a) {
    for (size_t k = 0; k < a.size() && k < o.attrOccs.size(); ++k) {
      if (o.attrOccs[k].empty()) continue;
      if (a[k].kind == eg::Attr::Kind::Int) a[k].i = reduced(o.attrOccs[k][0]);
      if (a[k].kind == eg::Attr::Kind::IntList)
        for (size_t i = 0; i < a[k].list.size(); ++i) a[k].list[i] = reduced(o.attrOccs[k][i]);
    }
    if (o.op == ops::syms().slice && stepOneSlice(a) && !o.children.empty() && o.children[0].size() == 1)
      if (auto d = axis(a[0].i, o.children[0][0].size())) {
        int n = o.children[0][0][*d];
        a[1].i = bound(n, a[1].i);
        a[2].i = bound(n, a[2].i);
      }
  }
  // An operator the builder did not record: by value, when unambiguous.
  void attrsByValue(eg::Symbol op, eg::AttrList& a) {
    for (const eg::Attr& x : a) {
      if (x.kind == eg::Attr::Kind::Int) check(x.i, "attribute");
      for (int64_t v : x.list) check(v, "attribute");
    }
    mapAttrs(op, a, byValue);
  }
  double scalar(const OpOccs* o, double v) {
    if (!std::isfinite(v) || v != std::floor(v) || std::abs(v) > 9e15) return v;
    auto a = static_cast<int64_t>(std::abs(v));
    if (o) {  // a size of this operator (arange's end, a length compared with)
      std::vector<int> here;
      for (const auto& t : o->result) here.insert(here.end(), t.begin(), t.end());
      for (const auto& c : o->children)
        for (const auto& t : c) here.insert(here.end(), t.begin(), t.end());
      for (int x : here)
        if (cs.dc.value(x) == a && a > cs.roles.threshold) return v < 0 ? -double(reduced(x)) : double(reduced(x));
    }
    check(a, "integer scalar");
    for (int64_t b : ambiguous)  // a multiple of or an offset from an ambiguous size
      if (a > 0 && b >= 64 && ((a >= b && a % b == 0 && a / b <= 64) || std::abs(b - a) * 64 <= b))
        check(b, "integer scalar near");
    return byValue.scalar(v);
  }
  void graph(LGraph& out, const LGraph& lg, bool isSpec) {
    const auto& table = cs.dc.table(isSpec);
    for (size_t i = 0; i < out.nodes.size(); ++i) {
      LNode& n = out.nodes[i];
      where = " of node '" + lg.origin(static_cast<int>(i)).name + "'";
      const auto& occ = table[static_cast<size_t>(lg.resolve(static_cast<int>(i)))];
      for (size_t t = 0; t < n.data.types.size(); ++t)
        for (size_t d = 0; d < n.data.types[t].shape.size(); ++d)
          if (t < occ.size() && d < occ[t].size()) n.data.types[t].shape[d] = reduced(occ[t][d]);
          else check(n.data.types[t].shape[d], "dim");
      for (size_t k = 0; k < n.def.nodes.size(); ++k) {
        CanonTerm::Node& tn = n.def.nodes[k];
        const OpOccs* o = recordedOp(cs.dc, lg, isSpec, static_cast<int>(i), k);
        if (o) attrs(*o, tn.attrs);
        else attrsByValue(tn.op, tn.attrs);
        if (!scalarMayBeSize(lg, lg.nodes[i].def.nodes[k], byValue)) continue;
        for (CanonTerm::Ref& r : tn.children)
          if (r.kind == CanonTerm::Ref::Kind::Scalar) r.scalar = scalar(o, r.scalar);
      }
    }
  }
  void term(eg::Term& out, const eg::Term& original) {
    where = " of a relation term";
    auto at = cs.dc.termOps.find(&original);
    for (size_t k = 0; k < out.nodes.size(); ++k) {
      eg::AttrList a = eg::attrs(out.nodes[k].attrs);
      int o = at == cs.dc.termOps.end() ? -1 : at->second[k];
      if (o >= 0) attrs(cs.dc.ops[static_cast<size_t>(o)], a);
      else if (!leafName(out.nodes[k])) attrsByValue(out.nodes[k].op, a);
      out.nodes[k].attrs = eg::internAttrs(a);
    }
  }
  void relations(std::vector<TensorRelations>& out, const std::vector<TensorRelations>& original) {
    for (size_t i = 0; i < out.size(); ++i)
      for (size_t j = 0; j < out[i].exprs.size(); ++j) term(out[i].exprs[j], original[i].exprs[j]);
  }
  // A relation-file expression: its integers by value (a window by its bounds), when unambiguous.
  void expr(RelExpr& e) {
    where = " of " + e.toString();
    std::vector<const RelExpr*> stack{&e};
    while (!stack.empty()) {
      const RelExpr* x = stack.back();
      stack.pop_back();
      if (x->kind == RelExpr::Kind::Call && x->op == "slice") {
        const RelExpr *s = nullptr, *t = nullptr;
        for (auto& [k, a] : x->kwargs) {
          if (k == "start") s = &a;
          if (k == "end") t = &a;
        }
        if (s && t && s->kind == RelExpr::Kind::Int && t->kind == RelExpr::Kind::Int &&
            ambiguousWindows.count({s->i, t->i}) && why.empty())
          why = fmt::format("the slice window [{}, {}) of a relation has different sizes in different classes", s->i, t->i);
      }
      if (x->kind == RelExpr::Kind::Int) check(x->i, "relation integer");
      for (int64_t v : x->ints) check(v, "relation integer");
      for (auto& a : x->args) stack.push_back(&a);
      for (auto& [k, a] : x->kwargs)
        if (k != "dim" && k != "dims" && k != "perm" && k != "dim0" && k != "dim1" && k != "start" && k != "end")
          stack.push_back(&a);
    }
    mapRelExpr(e, byValue);
  }
};

}  // namespace

std::unique_ptr<ReducedCheck> mapCheckByClass(const LGraph& spec, const LGraph& impl, const RelationFile& rel,
                                              const InferResult& result, const ClassSizes& cs,
                                              const std::map<int64_t, int64_t>& solved, std::string& why) {
  ClassMapper m{cs, solved, {}, {}, {}, {}, {}};
  m.build();
  auto rc = std::make_unique<ReducedCheck>();
  rc->spec = spec;
  rc->impl = impl;
  m.graph(rc->spec, spec, true);
  m.graph(rc->impl, impl, false);
  rc->relation = rel;
  for (auto& r : rc->relation.relations) m.expr(r.rhs);
  for (auto& e : rc->relation.expectations) {
    m.expr(e.lhs);
    m.expr(e.rhs);
  }
  rc->result = result;
  m.relations(rc->result.outputs, result.outputs);
  m.relations(rc->result.all, result.all);
  if (rc->result.failure) m.relations(rc->result.failure->inputRelations, result.failure->inputRelations);
  for (size_t i = 0; i < rc->result.expectations.size(); ++i) {
    auto& e = rc->result.expectations[i];
    e.expectation = &rc->relation.expectations[static_cast<size_t>(e.expectation - rel.expectations.data())];
    for (size_t j = 0; j < e.known.size(); ++j) m.term(e.known[j], result.expectations[i].known[j]);
  }
  for (auto& e : rc->result.uncheckedExpectations)
    e = &rc->relation.expectations[static_cast<size_t>(e - rel.expectations.data())];
  if (!m.why.empty()) {
    why = m.why;
    return nullptr;
  }
  rc->map = m.byValue;
  std::map<int64_t, std::set<int64_t>, std::greater<>> images;  // real size -> its classes' reduced sizes
  for (auto& [k, v] : solved)
    if (k >= kClassKey && k < 2 * kClassKey) images[cs.roles.keyValue.at(k)].insert(v);
  std::vector<std::string> parts;
  for (auto& [v, im] : images)
    if (im.size() > 1 || *im.begin() != v) parts.push_back(fmt::format("{} -> {}", v, fmt::join(im, "/")));
  rc->sizes = fmt::format("{}", fmt::join(parts, ", "));
  return rc;
}

}  // namespace tangle::replay::detail
