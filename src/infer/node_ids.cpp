// Flat per-node records for operator reuse (reuse_match.cpp, reuse_verify.cpp).
// At 256 ranks reuse compares millions of (earlier, new) tensor pairs: their
// types, definitions and users. Read from the lowered nodes, each comparison
// chased several heap pointers per node and was memory-bound; a record holds
// what they read in one cache line, with integers for the types and the
// definitions. Those ids are exact (a hash picks a bucket, full equality
// decides), so the soundness gate may compare them in place of the data.
#include <bit>
#include <cstring>
#include <unordered_map>

#include "infer/infer_state.h"

namespace tangle {

namespace {

struct Hasher {
  uint64_t h = 0x2545f4914f6cdd1dULL;
  void mix(uint64_t v) { h = (h ^ v) * 0x100000001b3ULL + (h >> 29); }
};

// Ids for 0..n-1, equal exactly when same(i, j): a hash table of the first
// index of each hash, chained on collisions to the other representatives.
template <class Hash, class Same>
std::vector<uint32_t> internIndexes(size_t n, Hash hash, Same same) {
  constexpr uint32_t kNone = UINT32_MAX;
  std::vector<uint32_t> ids(n);
  std::unordered_map<uint64_t, uint32_t> first;  // hash -> first id of that hash
  std::vector<size_t> representative;           // id -> an index of that id
  std::vector<uint32_t> next;                    // id -> the next id of the same hash
  for (size_t i = 0; i < n; ++i) {
    auto fresh = static_cast<uint32_t>(representative.size());
    auto [it, inserted] = first.try_emplace(hash(i), fresh);
    uint32_t id = it->second;
    if (!inserted) {
      while (!same(representative[id], i) && next[id] != kNone) id = next[id];
      if (!same(representative[id], i)) {
        next[id] = fresh;
        id = fresh;
        inserted = true;
      }
    }
    if (inserted) {
      representative.push_back(i);
      next.push_back(kNone);
    }
    ids[i] = id;
  }
  return ids;
}

void mixAttrs(Hasher& h, const eg::AttrList& attrs) {
  h.mix(attrs.size());
  for (const eg::Attr& a : attrs) {
    h.mix(static_cast<uint64_t>(a.kind));
    h.mix(static_cast<uint64_t>(a.i));
    h.mix(a.f == 0 ? 0 : std::bit_cast<uint64_t>(a.f));  // == holds for 0.0 and -0.0
    for (int64_t x : a.list) h.mix(static_cast<uint64_t>(x));
  }
}

// Definitions equal but for which tensors their operands are: sameDef's
// comparison (reuse_verify.cpp) with every operand taken to match.
bool sameShape(const CanonTerm& a, const CanonTerm& b) {
  if (a.nodes.size() != b.nodes.size() || a.aliasOf.has_value() != b.aliasOf.has_value()) return false;
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    const auto &x = a.nodes[i], &y = b.nodes[i];
    if (x.op != y.op || x.attrs != y.attrs || x.children.size() != y.children.size()) return false;
    for (size_t c = 0; c < x.children.size(); ++c) {
      const auto &rx = x.children[c], &ry = y.children[c];
      if (rx.kind != ry.kind) return false;
      if (rx.kind == CanonTerm::Ref::Kind::Local && rx.local != ry.local) return false;
      if (rx.kind == CanonTerm::Ref::Kind::Scalar && std::memcmp(&rx.scalar, &ry.scalar, sizeof(double)) != 0)
        return false;
    }
  }
  return true;
}

uint64_t hashShape(const CanonTerm& t) {
  Hasher h;
  h.mix(t.aliasOf.has_value());
  h.mix(t.nodes.size());
  for (const auto& n : t.nodes) {
    h.mix(n.op);
    mixAttrs(h, n.attrs);
    h.mix(n.children.size());
    for (const auto& r : n.children) {
      h.mix(static_cast<uint64_t>(r.kind));
      if (r.kind == CanonTerm::Ref::Kind::Local) h.mix(static_cast<uint64_t>(r.local));
      if (r.kind == CanonTerm::Ref::Kind::Scalar) h.mix(std::bit_cast<uint64_t>(r.scalar));
    }
  }
  return h.h;
}

}  // namespace

std::vector<uint32_t> classDataIds(const LGraph& g) {
  auto hash = [&](size_t i) {
    const eg::ClassData& d = g.nodes[i].data;
    Hasher h;
    h.mix(d.tuple);
    for (const TensorType& t : d.types) {
      h.mix(static_cast<uint64_t>(t.dtype) + 0x9e37);
      h.mix(t.shape.size());
      for (Dim x : t.shape) h.mix(static_cast<uint64_t>(x));
    }
    h.mix(!d.constant ? 1 : *d.constant == 0 ? 0 : std::bit_cast<uint64_t>(*d.constant));
    return h.h;
  };
  return internIndexes(g.nodes.size(), hash, [&](size_t i, size_t j) { return g.nodes[i].data == g.nodes[j].data; });
}

std::vector<uint32_t> definitionIds(const LGraph& g) {
  return internIndexes(
      g.nodes.size(), [&](size_t i) { return hashShape(g.nodes[i].def); },
      [&](size_t i, size_t j) { return sameShape(g.nodes[i].def, g.nodes[j].def); });
}

FlatNodes flatNodes(const LGraph& g, const std::vector<uint32_t>& defIds, std::vector<uint64_t> userOps) {
  FlatNodes out;
  out.nodes.resize(g.nodes.size());
  out.userOps = std::move(userOps);
  size_t users = 0;
  for (const auto& us : g.users) users += us.size();
  out.users.reserve(users);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const LNode& n = g.nodes[i];
    FlatNode& f = out.nodes[i];
    f.def = defIds[i];
    f.graph = n.graph;
    f.aliasOf = n.aliasOf;
    f.isInput = n.isInput;
    f.specOwned = n.owner.isSpec();
    f.operandCount = static_cast<uint32_t>(n.operands.size());
    f.refStart = static_cast<uint32_t>(out.refs.size());
    for (const auto& tn : n.def.nodes)
      for (const auto& r : tn.children)
        if (r.kind == CanonTerm::Ref::Kind::Operand) out.refs.push_back(g.resolve(r.operand));
    f.refCount = static_cast<uint32_t>(out.refs.size()) - f.refStart;
    f.userStart = static_cast<uint32_t>(out.users.size());
    if (i < g.users.size()) out.users.insert(out.users.end(), g.users[i].begin(), g.users[i].end());
    f.userCount = static_cast<uint32_t>(out.users.size()) - f.userStart;
  }
  return out;
}

std::vector<uint64_t> userOperatorHashes(const LGraph& g) {
  // Each node's root operator and attributes (0 for an identity), hashed
  // and mixed again so that a sum of them is a multiset's hash.
  std::vector<uint64_t> root(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const auto& def = g.nodes[i].def.nodes;
    Hasher h;
    if (!def.empty()) {
      h.mix(def.back().op);
      mixAttrs(h, def.back().attrs);
    }
    uint64_t x = h.h;
    x ^= x >> 31;
    x *= 0x7fb5d329728ea185ULL;
    x ^= x >> 27;
    root[i] = x;
  }
  std::vector<uint64_t> out(g.nodes.size(), 0);
  for (size_t d = 0; d < g.users.size() && d < g.nodes.size(); ++d)
    for (int u : g.users[d]) out[d] += root[static_cast<size_t>(u)];
  return out;
}

}  // namespace tangle
