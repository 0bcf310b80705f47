#include "replay/localize.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ops/ops.h"
#include "replay/agree.h"
#include "replay/term_eval.h"

namespace tangle::replay {

namespace {

enum class Status { Unknown, Input, Proven, Equal, Block, Partial, Absorbed, Wrong, Unevaluated };

struct Verdict {
  Status status = Status::Unknown;
  int spec = -1;  // Equal/Block/Partial: the spec tensor
  int dim = -1;   // Block: the dim cut into one block per rank
  bool sound() const { return status != Status::Wrong && status != Status::Unknown; }
};

// Agreement is judged tighter than replay's verdict (1e-6): values are float64
// and a reordered sum differs by ~1e-14, while a small wrong constant (an eps
// doubled) moves a value by ~1e-6 and would otherwise pass, to be blamed later.
constexpr double kTolerance = 1e-9;

// v equals block `block` of s when s is cut into `blocks` equal blocks along `dim`.
bool blockEquals(const interp::Tensor& s, double tol, size_t dim, int64_t block, const interp::Tensor& v) {
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < dim; ++d) outer *= s.shape[d];
  for (size_t d = dim + 1; d < s.shape.size(); ++d) inner *= s.shape[d];
  const int64_t n = v.shape[dim], full = s.shape[dim];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < inner; ++k) {
        double want = s.data[static_cast<size_t>((o * full + block * n + i) * inner + k)];
        double got = v.data[static_cast<size_t>((o * n + i) * inner + k)];
        if (!agrees(want, got, tol)) return false;
      }
  return true;
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

class Localizer {
 public:
  Localizer(const LGraph& spec, const LGraph& impl, const InferResult& res, detail::Trial& t)
      : spec_(spec), impl_(impl), res_(res), t_(t), verdicts_(impl.nodes.size()) {}

  Localization run() {
    Localization out;
    if (res_.failure) {
      int f = res_.failure->node;
      out.specOperator = fmt::format("{} ({}) at {}", spec_.node(f).name, spec_.origin(f).op, whereOf(spec_, f));
    }
    indexSpec();
    markProven();
    ranks_ = static_cast<int>(impl_.graphs.size());
    for (size_t i = 0; i < impl_.nodes.size(); ++i)
      if (impl_.nodes[i].aliasOf < 0) judge(static_cast<int>(i));
    absorb();
    if (std::getenv("TANGLE_TRACE_LOCALIZE"))  // dev aid: every implementation tensor's verdict
      for (size_t i = 0; i < impl_.nodes.size(); ++i)
        if (impl_.nodes[i].aliasOf < 0) fmt::print(stderr, "  {}{}\n", describe(static_cast<int>(i)), witness(static_cast<int>(i)));
    std::vector<int> culprits;
    for (size_t i = 0; i < impl_.nodes.size(); ++i) {
      const LNode& n = impl_.nodes[i];
      if (n.aliasOf >= 0) continue;
      switch (verdicts_[i].status) {
        case Status::Unevaluated: ++out.unevaluated; break;
        case Status::Absorbed: ++out.absorbed; break;
        case Status::Wrong: ++out.wrong; break;
        default: ++out.agreeing;
      }
      if (verdicts_[i].status != Status::Wrong || rearrangement(static_cast<int>(i))) continue;
      bool operandsSound = std::all_of(n.operands.begin(), n.operands.end(),
                                       [&](int o) { return soundThrough(impl_.resolve(o)); });
      if (operandsSound) culprits.push_back(static_cast<int>(i));
    }
    // Earliest in program order first; the lower rank on a tie.
    std::sort(culprits.begin(), culprits.end(), [&](int a, int b) {
      auto ka = std::make_pair(impl_.node(a).origin, impl_.node(a).graph);
      auto kb = std::make_pair(impl_.node(b).origin, impl_.node(b).graph);
      return ka < kb;
    });
    if (culprits.empty()) {
      out.summary = out.wrong ? "localization: no first wrong implementation operator (every wrong value follows "
                                "one that cannot be evaluated)"
                              : "localization: every implementation tensor agrees with a spec value on this input";
      return out;
    }
    out.found = true;
    out.first = located(culprits[0]);
    for (size_t k = 1; k < culprits.size() && k <= 4; ++k) out.others.push_back(located(culprits[k]));
    for (int c : culprits)
      if (impl_.node(c).name.substr(impl_.node(c).name.find('.')) ==
          impl_.node(culprits[0]).name.substr(impl_.node(culprits[0]).name.find('.')))
        out.tiedRanks.push_back(impl_.node(c).graph), out.tied.push_back(located(c));
    if (out.tiedRanks.size() < 2) out.tiedRanks.clear(), out.tied.clear();
    out.summary = fmt::format("localization: first wrong implementation operator {} ({}) at {} on rank {}",
                              out.first->tensor, out.first->op, out.first->location, out.first->rank);
    return out;
  }

 private:
  const LGraph& spec_;
  const LGraph& impl_;
  const InferResult& res_;
  detail::Trial& t_;
  std::vector<Verdict> verdicts_;
  int ranks_ = 1;
  std::map<interp::Shape, std::vector<int>> specByShape_;
  std::vector<double> specTol_;
  std::set<int> proven_;
  std::map<std::string, std::optional<int>> partialGroups_;
  std::map<int, bool> soundThrough_;
  std::map<int, std::string> refusals_;  // operators whose kernel refused their operands' shapes  // base name -> spec tensor its rank sum equals

  const interp::Tensor* specValue(int id) {
    const interp::Value* v = t_.spec().known(id);
    return v ? v->tensor() : nullptr;
  }
  const interp::Tensor* implValue(int id) {
    const interp::Value* v = t_.impl().known(id);
    return v ? v->tensor() : nullptr;
  }

  void indexSpec() {
    specTol_.assign(spec_.nodes.size(), 0);
    for (size_t i = 0; i < spec_.nodes.size(); ++i) {
      if (spec_.nodes[i].aliasOf >= 0) continue;
      const interp::Value* v = t_.spec().value(static_cast<int>(i));
      if (!v || !v->tensor()) continue;
      specByShape_[v->tensor()->shape].push_back(static_cast<int>(i));
      specTol_[i] = kTolerance * (1 + scaleOf(*v->tensor()));
    }
  }

  // Every implementation tensor named in a clean relation inference found.
  void markProven() {
    for (const TensorRelations& r : res_.all) {
      if (r.deferred) continue;
      for (const eg::Term& e : r.exprs)
        for (const auto& n : e.nodes)
          if (const std::string* name = leafName(n))
            if (auto id = impl_.find(*name)) proven_.insert(impl_.resolve(*id));
    }
  }

  std::optional<int> equalSpec(const interp::Tensor& v) {
    auto it = specByShape_.find(v.shape);
    if (it == specByShape_.end()) return std::nullopt;
    for (int s : it->second) {
      const interp::Tensor& sv = *specValue(s);
      bool eq = true;
      for (size_t e = 0; eq && e < v.data.size(); ++e) eq = agrees(sv.data[e], v.data[e], specTol_[static_cast<size_t>(s)]);
      if (eq) return s;
    }
    return std::nullopt;
  }

  std::optional<std::pair<int, int>> blockOfSpec(const interp::Tensor& v, int rank) {
    if (ranks_ < 2) return std::nullopt;
    for (size_t d = 0; d < v.shape.size(); ++d) {
      interp::Shape whole = v.shape;
      whole[d] *= ranks_;
      auto it = specByShape_.find(whole);
      if (it == specByShape_.end() || v.shape[d] == 0) continue;
      for (int s : it->second)
        if (blockEquals(*specValue(s), specTol_[static_cast<size_t>(s)], d, rank, v))
          return std::make_pair(s, static_cast<int>(d));
    }
    return std::nullopt;
  }

  // The tensor named like `id` on every rank, summed: a spec tensor?
  std::optional<int> partialOf(int id) {
    const std::string& name = impl_.node(id).name;
    std::string base = name.substr(name.find('.') + 1);
    auto [it, fresh] = partialGroups_.try_emplace(base);
    if (!fresh || ranks_ < 2) return it->second;
    std::optional<interp::Tensor> sum;
    for (int r = 0; r < ranks_; ++r) {
      auto other = impl_.find(Owner::impl(r).prefix() + base);
      if (!other) return std::nullopt;
      int o = impl_.resolve(*other);
      const interp::Value* ov = t_.impl().value(o);
      if (!ov || !ov->tensor()) return std::nullopt;
      if (!sum) {
        sum = *ov->tensor();
        continue;
      }
      if (ov->tensor()->shape != sum->shape) return std::nullopt;
      for (size_t e = 0; e < sum->data.size(); ++e) sum->data[e] += ov->tensor()->data[e];
    }
    it->second = equalSpec(*sum);
    return it->second;
  }

  static bool weakEvidence(const LNode& n, const interp::Tensor& x) {
    const TensorType* t = n.data.tensor();
    if (!t || isFloating(t->dtype) || t->dtype == DType::Unknown || x.data.size() < 2) return false;
    return std::all_of(x.data.begin(), x.data.end(), [&](double e) { return e == x.data[0]; });
  }

  void judge(int id) {
    Verdict& v = verdicts_[static_cast<size_t>(id)];
    const LNode& n = impl_.node(id);
    if (n.isInput) {
      v.status = Status::Input;
      return;
    }
    const interp::Value* val = t_.impl().value(id);
    if (!val) {
      // The kernel refused operands that were computed: the program itself
      // cannot run here (a transposition that breaks a later matmul), so this
      // operator is as wrong as one computing a wrong value.
      const auto& f = t_.impl().failure();
      bool refused = f && f->node == id && f->refused;
      v.status = refused ? Status::Wrong : Status::Unevaluated;
      if (refused) refusals_[id] = f->reason;
      return;
    }
    const interp::Tensor* x = val->tensor();
    if (!x) {
      // A tuple: judged through its items (absorbed when they agree).
      v.status = proven_.count(id) ? Status::Proven : Status::Wrong;
      return;
    }
    // An all-true mask or an index tensor of one value equals many unrelated
    // spec tensors by chance: no evidence (a correct one is absorbed instead).
    if (weakEvidence(n, *x)) {
      v.status = proven_.count(id) ? Status::Proven : Status::Wrong;
    } else if (auto s = equalSpec(*x)) {
      v = {Status::Equal, *s, -1};
    } else if (auto b = blockOfSpec(*x, n.graph)) {
      v = {Status::Block, b->first, b->second};
    } else if (auto p = partialOf(id)) {
      v = {Status::Partial, *p, -1};
    } else if (proven_.count(id)) {
      v.status = Status::Proven;
    } else {
      v.status = Status::Wrong;
    }
  }

  // A tensor without a counterpart is absorbed when a tensor computed from it agrees.
  void absorb() {
    std::vector<int> order;  // users after their operands: reverse of a DFS post-order
    std::vector<char> seen(impl_.nodes.size(), 0), good(impl_.nodes.size(), 0);
    std::vector<std::pair<int, size_t>> stack;
    for (size_t root = 0; root < impl_.nodes.size(); ++root) {
      if (seen[root]) continue;
      seen[root] = 1;
      stack.push_back({static_cast<int>(root), 0});
      while (!stack.empty()) {
        auto& [cur, next] = stack.back();
        const auto& us = impl_.users[static_cast<size_t>(cur)];
        if (next < us.size()) {
          int u = us[next++];
          if (!seen[static_cast<size_t>(u)]) {
            seen[static_cast<size_t>(u)] = 1;
            stack.push_back({u, 0});
          }
          continue;
        }
        order.push_back(cur);
        stack.pop_back();
      }
    }
    // `order` lists every user before the tensors it reads.
    for (int id : order) {
      const Verdict& v = verdicts_[static_cast<size_t>(id)];
      bool agrees = vouches(id);
      bool below = false;
      // Only a user on the same rank vouches: another rank's output of a
      // gather or scatter may not read the part of this tensor that is wrong.
      for (int u : impl_.users[static_cast<size_t>(id)])
        below = below || (good[static_cast<size_t>(u)] && impl_.node(u).graph == impl_.node(id).graph && readsWhole(u));
      below = below || coveredByParts(id, good) || everyUserGood(id, good);
      good[static_cast<size_t>(id)] = agrees || below;
      if (v.status == Status::Wrong && below) verdicts_[static_cast<size_t>(id)].status = Status::Absorbed;
      // Not `good`: a placement vouches for what it wrote, not for the base it copies.
      else if (v.status == Status::Wrong && placementVouched(id, good))
        verdicts_[static_cast<size_t>(id)].status = Status::Absorbed;
    }
  }

  // Every operator that reads the tensor, on its own rank, agrees (or is
  // absorbed): a part none of them reads (the k columns vLLM's slice_scatter
  // overwrites) cannot make anything wrong.
  bool everyUserGood(int id, const std::vector<char>& good) {
    const auto& us = impl_.users[static_cast<size_t>(id)];
    const ops::Syms& s = ops::syms();
    return !us.empty() && std::all_of(us.begin(), us.end(), [&](int u) {
      if (!good[static_cast<size_t>(u)] || impl_.node(u).graph != impl_.node(id).graph) return false;
      // A split is good when one item agrees; it reads the tensor well only when every item read agrees.
      const auto& def = impl_.node(u).def.nodes;
      if (def.empty() || def.back().op != s.split) return true;
      const auto& items = impl_.users[static_cast<size_t>(u)];
      return std::all_of(items.begin(), items.end(), [&](int g) { return good[static_cast<size_t>(g)] != 0; });
    });
  }

  // Same-rank users that each read a part of the tensor (slices along one
  // dim, the items of a split) vouch for it together when the parts that
  // agree cover it: vLLM writes q and k back into the fused qkv tensor
  // (slice_scatter) and reads q, k and v through three splits.
  bool coveredByParts(int id, const std::vector<char>& good) {
    const TensorType* t = impl_.node(id).data.tensor();
    if (!t) return false;
    const ops::Syms& s = ops::syms();
    const int rank = static_cast<int>(t->shape.size());
    std::map<int64_t, std::vector<std::pair<int64_t, int64_t>>> parts;  // dim -> [start, end) read and agreeing
    auto single = [&](int u) -> const CanonTerm::Node* {
      const auto& def = impl_.node(u).def.nodes;
      if (def.size() != 1 || def[0].children.empty()) return nullptr;
      const CanonTerm::Ref& r = def[0].children[0];
      if (r.kind != CanonTerm::Ref::Kind::Operand || impl_.resolve(static_cast<int>(r.operand)) != id) return nullptr;
      return &def[0];
    };
    auto axis = [&](int64_t d) { return d < 0 ? d + rank : d; };
    for (int u : impl_.users[static_cast<size_t>(id)]) {
      if (impl_.node(u).graph != impl_.node(id).graph) continue;
      const CanonTerm::Node* tn = single(u);
      if (!tn) continue;
      const eg::AttrList& a = tn->attrs;
      if (tn->op == s.slice && good[static_cast<size_t>(u)] && a.size() == 4 && a[3].i == 1) {
        int64_t d = axis(a[0].i);
        if (d >= 0 && d < rank) parts[d].push_back({a[1].i, std::min<int64_t>(a[2].i, t->shape[d])});
      } else if (tn->op == s.split && a.size() == 2 && a[1].kind == eg::Attr::Kind::IntList) {
        int64_t d = axis(a[0].i);
        if (d < 0 || d >= rank) continue;
        std::vector<int64_t> starts{0};
        for (int64_t k : a[1].list) starts.push_back(starts.back() + k);
        for (int g : impl_.users[static_cast<size_t>(u)]) {
          const auto& gd = impl_.node(g).def.nodes;
          if (!good[static_cast<size_t>(g)] || gd.size() != 1 || gd[0].op != s.getitem) continue;
          const eg::AttrList& ga = gd[0].attrs;
          if (ga.size() == 1 && ga[0].i >= 0 && ga[0].i + 1 < static_cast<int64_t>(starts.size()))
            parts[d].push_back({starts[static_cast<size_t>(ga[0].i)], starts[static_cast<size_t>(ga[0].i) + 1]});
        }
      }
    }
    for (auto& [d, iv] : parts) {
      std::sort(iv.begin(), iv.end());
      int64_t reach = 0;
      for (auto [b, e] : iv)
        if (b <= reach) reach = std::max(reach, e);
      if (reach >= t->shape[static_cast<size_t>(d)]) return true;
    }
    return false;
  }

  // A placement (slice_scatter, cat: a concat of pieces along one dim) only
  // puts values somewhere. It is absorbed when each operand it writes whole
  // reaches, intact and at the offset it was written to, a same-rank reader
  // that agrees, and every other piece is a slice of an operand kept at its
  // own offset (the base a slice_scatter copies). vLLM writes q, then k, into
  // the fused qkv: when the k write is moved, the q write is still read whole
  // by the q split and is not what is wrong.
  bool placementVouched(int id, const std::vector<char>& good) {
    const ops::Syms& s = ops::syms();
    const auto& def = impl_.node(id).def.nodes;
    const interp::Tensor* out = implValue(id);
    if (def.empty() || !out || def.back().op != s.concat || def.back().attrs.size() != 1) return false;
    const int64_t rank = static_cast<int64_t>(out->shape.size());
    int64_t d = def.back().attrs[0].i;
    if (d < 0) d += rank;
    if (d < 0 || d >= rank) return false;
    int64_t off = 0;
    bool wrote = false;
    for (const CanonTerm::Ref& r : def.back().children) {
      int64_t len = 0;
      if (r.kind == CanonTerm::Ref::Kind::Operand) {
        const interp::Tensor* src = implValue(impl_.resolve(static_cast<int>(r.operand)));
        if (!src || static_cast<int64_t>(src->shape.size()) != rank) return false;
        len = src->shape[static_cast<size_t>(d)];
        if (!reachesGood(id, d, off, off + len, good, 0)) return false;
        wrote = true;
      } else if (r.kind == CanonTerm::Ref::Kind::Local) {
        const CanonTerm::Node& sl = def[static_cast<size_t>(r.local)];
        if (sl.op != s.slice || sl.attrs.size() != 4 || sl.attrs[3].i != 1 || sl.children.size() != 1) return false;
        int64_t sd = sl.attrs[0].i < 0 ? sl.attrs[0].i + rank : sl.attrs[0].i;
        if (sd != d || sl.attrs[1].i != off) return false;  // kept at its own offset
        len = std::min(sl.attrs[2].i, out->shape[static_cast<size_t>(d)]) - off;
      } else {
        return false;
      }
      off += len;
    }
    return wrote && off == out->shape[static_cast<size_t>(d)];
  }

  // The region [a, b) along dim d of tensor t reaches an agreeing same-rank
  // reader intact: through slices and split items that contain it, and
  // through later placements that keep it at its offset.
  bool reachesGood(int t, int64_t d, int64_t a, int64_t b, const std::vector<char>& good, int depth) {
    if (depth > 8) return false;
    const ops::Syms& s = ops::syms();
    const interp::Tensor* tv = implValue(t);
    if (!tv) return false;
    const int64_t rank = static_cast<int64_t>(tv->shape.size());
    auto axis = [&](int64_t x) { return x < 0 ? x + rank : x; };
    auto readsT = [&](const CanonTerm::Ref& r) {
      return r.kind == CanonTerm::Ref::Kind::Operand && impl_.resolve(static_cast<int>(r.operand)) == t;
    };
    for (int u : impl_.users[static_cast<size_t>(t)]) {
      if (impl_.node(u).graph != impl_.node(t).graph) continue;
      const auto& def = impl_.node(u).def.nodes;
      if (def.empty()) continue;
      const CanonTerm::Node& root = def.back();
      const eg::AttrList& at = root.attrs;
      if (def.size() == 1 && root.op == s.slice && at.size() == 4 && at[3].i == 1 && readsT(root.children[0]) &&
          axis(at[0].i) == d && at[1].i <= a && b <= at[2].i) {
        if (good[static_cast<size_t>(u)] || reachesGood(u, d, a - at[1].i, b - at[1].i, good, depth + 1)) return true;
      } else if (def.size() == 1 && root.op == s.split && at.size() == 2 && at[1].kind == eg::Attr::Kind::IntList &&
                 readsT(root.children[0]) && axis(at[0].i) == d) {
        std::vector<int64_t> starts{0};
        for (int64_t k : at[1].list) starts.push_back(starts.back() + k);
        for (int g : impl_.users[static_cast<size_t>(u)]) {
          const auto& gd = impl_.node(g).def.nodes;
          if (gd.size() != 1 || gd[0].op != s.getitem || gd[0].attrs.size() != 1) continue;
          int64_t k = gd[0].attrs[0].i;
          if (k < 0 || k + 1 >= static_cast<int64_t>(starts.size())) continue;
          int64_t gs = starts[static_cast<size_t>(k)], ge = starts[static_cast<size_t>(k) + 1];
          if (gs <= a && b <= ge &&
              (good[static_cast<size_t>(g)] || reachesGood(g, d, a - gs, b - gs, good, depth + 1)))
            return true;
        }
      } else if (root.op == s.concat && at.size() == 1 && axis(at[0].i) == d) {
        for (const CanonTerm::Ref& r : root.children) {
          if (r.kind != CanonTerm::Ref::Kind::Local) continue;
          const CanonTerm::Node& sl = def[static_cast<size_t>(r.local)];
          if (sl.op == s.slice && sl.attrs.size() == 4 && sl.attrs[3].i == 1 && sl.children.size() == 1 &&
              readsT(sl.children[0]) && axis(sl.attrs[0].i) == d && sl.attrs[1].i <= a && b <= sl.attrs[2].i &&
              offsetOf(def, r.local) == sl.attrs[1].i && reachesGood(u, d, a, b, good, depth + 1))
            return true;
        }
      }
    }
    return false;
  }

  // Offset along the concat's dim of piece `local` of a concat root (-1 if unknown).
  int64_t offsetOf(const std::vector<CanonTerm::Node>& def, int local) {
    int64_t off = 0;
    const CanonTerm::Node& root = def.back();
    int64_t d = root.attrs[0].i;
    for (const CanonTerm::Ref& r : root.children) {
      if (r.kind == CanonTerm::Ref::Kind::Local && r.local == local) return off;
      if (r.kind == CanonTerm::Ref::Kind::Operand) {
        const interp::Tensor* src = implValue(impl_.resolve(static_cast<int>(r.operand)));
        if (!src) return -1;
        int64_t dd = d < 0 ? d + static_cast<int64_t>(src->shape.size()) : d;
        off += src->shape[static_cast<size_t>(dd)];
      } else if (r.kind == CanonTerm::Ref::Kind::Local) {
        const CanonTerm::Node& sl = def[static_cast<size_t>(r.local)];
        if (sl.op != ops::syms().slice || sl.attrs.size() != 4 || sl.children.empty()) return -1;
        const interp::Tensor* src = implValue(impl_.resolve(static_cast<int>(sl.children[0].operand)));
        if (!src) return -1;
        int64_t dd = d < 0 ? d + static_cast<int64_t>(src->shape.size()) : d;
        off += std::min(sl.attrs[2].i, src->shape[static_cast<size_t>(dd)]) - sl.attrs[1].i;
      } else {
        return -1;
      }
    }
    return -1;
  }

  // An operator that reads only part of an operand (a slice, a split, a
  // reduce-scatter lowered to a slice of a sum) vouches for none of it: a
  // rank's own chunk may be right while the rest of the tensor is wrong.
  bool readsWhole(int id) {
    const ops::Syms& s = ops::syms();
    const auto& def = impl_.node(id).def.nodes;
    return std::none_of(def.begin(), def.end(), [&](const CanonTerm::Node& t) {
      return t.op == s.slice || t.op == s.split;
    });
  }


  // A view, transpose, permute or expand: it moves values without computing
  // any. One with no spec counterpart cannot be told wrong from right by value
  // (its only evidence is what later operators make of it), so it is not
  // blamed: the first operator that computes with it is.
  bool rearrangement(int id) {
    const ops::Syms& s = ops::syms();
    const auto& def = impl_.node(id).def.nodes;
    return !def.empty() && std::all_of(def.begin(), def.end(), [&](const CanonTerm::Node& t) {
      return t.op == s.reshape || t.op == s.transpose || t.op == s.permute || t.op == s.expand;
    });
  }
  // Sound, or a rearrangement of sound operands.
  bool soundThrough(int id) {
    if (verdicts_[static_cast<size_t>(id)].sound()) return true;
    auto [it, fresh] = soundThrough_.try_emplace(id, false);
    if (!fresh) return it->second;
    const auto& ops = impl_.node(id).operands;
    bool ok = rearrangement(id) &&
              std::all_of(ops.begin(), ops.end(), [&](int o) { return soundThrough(impl_.resolve(o)); });
    soundThrough_[id] = ok;
    return ok;
  }

  // Only a value that agrees and could not agree by chance vouches for what it
  // was computed from: a mask, an index tensor or a tensor of one repeated
  // value (all zeros) equals some spec tensor of the same shape too often.
  bool vouches(int id) {
    const Verdict& v = verdicts_[static_cast<size_t>(id)];
    if (!v.sound() || v.status == Status::Absorbed || v.status == Status::Unevaluated || v.status == Status::Input)
      return false;
    if (v.status == Status::Proven) return true;
    const TensorType* t = impl_.node(id).data.tensor();
    const interp::Tensor* x = implValue(id);
    if (!t || !isFloating(t->dtype) || !x) return false;
    return x->data.size() < 2 ||
           !std::all_of(x->data.begin(), x->data.end(), [&](double e) { return e == x->data[0]; });
  }

  // Dev aid: the nearest agreeing floating tensor computed from an absorbed one.
  std::string witness(int id) {
    if (verdicts_[static_cast<size_t>(id)].status != Status::Absorbed) return "";
    std::vector<int> queue{id};
    std::set<int> seen{id};
    for (size_t k = 0; k < queue.size(); ++k)
      for (int u : impl_.users[static_cast<size_t>(queue[k])]) {
        if (!seen.insert(u).second) continue;
        if (vouches(u)) return " [via " + describe(u) + "]";
        queue.push_back(u);
      }
    return "";
  }

  std::string describe(int id) {
    const Verdict& v = verdicts_[static_cast<size_t>(id)];
    const std::string& name = impl_.node(id).name;
    auto s = [&] { return spec_.node(v.spec).name; };
    switch (v.status) {
      case Status::Input: return name + ": a graph input";
      case Status::Proven: return name + ": in a relation inference proved";
      case Status::Equal: return name + " equals " + s();
      case Status::Block:
        return fmt::format("{} equals rank {}'s block of {} along dim {}", name, impl_.node(id).graph, s(), v.dim);
      case Status::Partial: return name + ": summed over the ranks it equals " + s() + " (a partial sum)";
      case Status::Absorbed: return name + ": no spec counterpart, but a tensor computed from it agrees";
      case Status::Unevaluated: return name + ": not evaluated";
      default:
        if (refusals_.count(id)) return name + ": cannot be computed on these operands (" + refusals_[id] + ")";
        return name + (rearrangement(id) ? ": a view that agrees with no spec value (views are not blamed)"
                                         : ": agrees with no spec value");
    }
  }

  // Graph inputs an operator reads: operands that are inputs, or reached through single-operand ops.
  std::vector<std::string> readsOf(int op) {
    std::vector<std::string> out;
    for (int o : impl_.node(op).operands) {
      int cur = impl_.resolve(o);
      for (int depth = 0; !impl_.node(cur).isInput && impl_.node(cur).operands.size() == 1 && depth < 8; ++depth)
        cur = impl_.resolve(impl_.node(cur).operands[0]);
      const std::string& name = impl_.node(cur).name;
      if (impl_.node(cur).isInput && std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
    }
    return out;
  }

  LocatedOperator located(int id) {
    LocatedOperator l;
    l.tensor = impl_.node(id).name;
    l.rank = impl_.node(id).graph;
    l.op = impl_.origin(id).op;
    l.location = whereOf(impl_, id);
    l.source = trimmed(impl_.origin(id).source);
    l.reads = readsOf(id);
    for (int o : impl_.node(id).operands) l.operands.push_back(describe(impl_.resolve(o)));
    return l;
  }
};

nlohmann::json operatorJson(const LocatedOperator& l) {
  return {{"tensor", l.tensor}, {"rank", l.rank},   {"op", l.op},
          {"location", l.location}, {"source", l.source}, {"reads", l.reads}, {"operands", l.operands}};
}

}  // namespace

std::string Localization::text() const {
  std::string out = summary + "\n";
  if (first) {
    if (!first->source.empty()) out += "  source: " + first->source + "\n";
    if (!first->reads.empty()) out += fmt::format("  graph inputs it reads: {}\n", fmt::join(first->reads, ", "));
    for (auto& o : first->operands) out += "  operand " + o + "\n";
  }
  if (!specOperator.empty()) out += "  inference's failing spec operator: " + specOperator + "\n";
  if (!tiedRanks.empty() && tieBroken.empty())
    out += fmt::format("  the same operator on ranks {} is as suspect: values alone cannot tell which rank's is "
                       "wrong (e.g. shares of a sum over ranks)\n",
                       fmt::join(tiedRanks, ", "));
  else if (!tiedRanks.empty())
    out += fmt::format("  the same operator on ranks {} is as suspect by value; rank {} is named: {}\n",
                       fmt::join(tiedRanks, ", "), first->rank, tieBroken);
  for (auto& o : others) out += fmt::format("  also wrong with agreeing operands: {} ({}) at {} on rank {}\n", o.tensor, o.op, o.location, o.rank);
  out += fmt::format("  implementation tensors: {} agree, {} absorbed, {} wrong, {} not evaluated\n", agreeing,
                     absorbed, wrong, unevaluated);
  return out;
}

nlohmann::json Localization::json() const {
  nlohmann::json j{{"found", found},        {"summary", summary},   {"spec_operator", specOperator},
                   {"agreeing", agreeing},  {"absorbed", absorbed}, {"wrong", wrong},
                   {"unevaluated", unevaluated}};
  j["first"] = first ? operatorJson(*first) : nlohmann::json(nullptr);
  j["tied_ranks"] = tiedRanks;
  j["tie_broken"] = tieBroken.empty() ? nlohmann::json(nullptr) : nlohmann::json(tieBroken);
  j["others"] = nlohmann::json::array();
  for (auto& o : others) j["others"].push_back(operatorJson(o));
  return j;
}

bool Localization::nameRank(int rank, std::string evidence) {
  auto it = std::find_if(tied.begin(), tied.end(), [&](const LocatedOperator& l) { return l.rank == rank; });
  if (!first || it == tied.end()) return false;
  if (it->rank != first->rank) {
    std::erase_if(others, [&](const LocatedOperator& l) { return l.tensor == it->tensor && l.rank == it->rank; });
    others.insert(others.begin(), *first);
    first = *it;
    summary = fmt::format("localization: first wrong implementation operator {} ({}) at {} on rank {}", first->tensor,
                          first->op, first->location, first->rank);
  }
  tieBroken = std::move(evidence);
  return true;
}

Localization localize(const LGraph& spec, const LGraph& impl, const InferResult& result, detail::Trial& t) {
  return Localizer(spec, impl, result, t).run();
}

}  // namespace tangle::replay
