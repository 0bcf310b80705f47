// Scaled-dot-product attention over a sequence split into blocks: what ring
// attention (torch's context parallelism) computes.
//
// Without a causal mask, attention is independent per query row (sdpa-rows),
// and over the keys it is a softmax-weighted average: attention over key
// blocks A and B is the merge of the attentions over each, weighted by their
// log-sum-exps lA, lB:
//   out = oA - sigmoid(lB - lA) * (oA - oB)      (= (e^lA oA + e^lB oB) / (e^lA + e^lB))
//   lse = lA - log_sigmoid(lA - lB)              (= log(e^lA + e^lB))
// A ring on rank r starts from block r and merges r-1, r-2, ... (cyclically)
// into its state, as torch writes it (the state A first, the log-sum-exps
// unsqueezed to [B, H, L, 1]); with a causal mask and no load balancing,
// rank r starts from its own block, masked, and merges r-1, ..., 0
// (sdpa-causal-ring). sdpa-ring writes the attention over n blocks
// as that chain from every starting block: n chains of n - 1 merges, each
// node of which is a value the ring computes, so the search explores the
// ring's operators one by one. (Rewriting the spec into merges of a block and
// "the rest", recursively, would name only the states of one order, and
// reading the ring's merges back as attentions would not be explored: the
// search follows implementation operators from values the spec's e-graph has.)
#include "lemmas/lemma_util.h"

namespace tangle::lemmas::detail {

namespace {

bool notCausal(const Match& m) { return m.subst.attr("c") == Attr::boolean(false); }

// Key and value pieces along the sequence (dim 2), matching in length.
std::optional<std::vector<int64_t>> keySizes(const EGraph& g, const std::vector<Id>& ks, const std::vector<Id>& vs) {
  if (ks.size() < 2 || ks.size() != vs.size()) return std::nullopt;
  auto sk = sizesAlong(g, ks, 2), sv = sizesAlong(g, vs, 2);
  if (!sk || !sv || *sk != *sv) return std::nullopt;
  return sk;
}

// The mask adds the same to every key of a row (absent, or size 1 along the keys).
bool broadcastsOverKeys(const EGraph& g, Id mask) {
  const TensorType* t = typeOf(g, mask);
  return t && (t->rank() == 0 || t->shape.back() == 1);
}

std::optional<Id> sdpaItem(EGraph& g, const Match& m, int64_t item, Id q, Id k, Id v, Id mask) {
  auto r = make(g, op().sdpa, {m.subst.attr("c"), m.subst.attr("s")}, {q, k, v, mask});
  return r ? make(g, op().getitem, {Attr::integer(item)}, {*r}) : std::nullopt;
}

// The [B, H, L, 1] shape of q's unsqueezed log-sum-exp.
std::optional<Shape> lseColumn(const EGraph& g, Id q) {
  const TensorType* t = typeOf(g, q);
  if (!t || t->rank() != 4) return std::nullopt;
  return Shape{t->shape[0], t->shape[1], t->shape[2], 1};
}

// getitem[i](sdpa(concat[2](q_j), k, v, m)) = concat[2](getitem[i](sdpa(q_j, k, v, m_j))).
std::optional<Id> rows(EGraph& g, const Match& m) {
  if (!notCausal(m)) return std::nullopt;
  const auto& qs = m.subst.list("qs");
  auto sizes = sizesAlong(g, qs, 2);
  if (qs.size() < 2 || !sizes) return std::nullopt;
  auto masks = maskPieces(g, m.subst.cls("m"), 2, *sizes);
  if (!masks) return std::nullopt;
  int64_t item = m.subst.attr("i").i;
  std::vector<Id> parts;
  for (size_t j = 0; j < qs.size(); ++j) {
    auto p = sdpaItem(g, m, item, qs[j], m.subst.cls("k"), m.subst.cls("v"), (*masks)[j]);
    if (!p) return std::nullopt;
    parts.push_back(*p);
  }
  return makeConcat(g, 2, parts);  // out [B, H, L, E] and lse [B, H, L] both split along dim 2
}

// The merge of (out, unsqueezed lse) of state A with block B, as torch writes it.
std::optional<Id> mergeForm(EGraph& g, int64_t item, Id oA, Id uA, Id oB, Id uB) {
  if (item == 1) {
    auto d = make(g, op().sub, {}, {uA, uB});
    auto ls = d ? make(g, op().logSigmoid, {}, {*d}) : std::nullopt;
    auto l0 = ls ? make(g, op().getitem, {Attr::integer(0)}, {*ls}) : std::nullopt;
    return l0 ? make(g, op().sub, {}, {uA, *l0}) : std::nullopt;
  }
  auto d = make(g, op().sub, {}, {uB, uA});
  auto w = d ? make(g, op().sigmoid, {}, {*d}) : std::nullopt;
  auto diff = make(g, op().sub, {}, {oA, oB});
  auto step = w && diff ? make(g, op().mul, {}, {*w, *diff}) : std::nullopt;
  return step ? make(g, op().sub, {}, {oA, *step}) : std::nullopt;
}

// One block's attention: its output and unsqueezed log-sum-exp.
struct Block {
  Id o, u;
};

std::optional<Block> block(EGraph& g, bool causal, const Match& m, Id q, Id k, Id v, Id mask, const Shape& column) {
  auto r = make(g, op().sdpa, {Attr::boolean(causal), m.subst.attr("s")}, {q, k, v, mask});
  auto o = r ? make(g, op().getitem, {Attr::integer(0)}, {*r}) : std::nullopt;
  auto l = r ? make(g, op().getitem, {Attr::integer(1)}, {*r}) : std::nullopt;
  auto u = l ? make(g, op().reshape, {Attr::ints(column)}, {*l}) : std::nullopt;
  if (!o || !u) return std::nullopt;
  return Block{*o, *u};
}

// Item `item` (0: out, 1: lse) of `state` with `rest` merged into it in turn, as torch's ring does.
std::optional<Id> chain(EGraph& g, int64_t item, Block state, const std::vector<Block>& rest, const Shape& column) {
  for (const Block& b : rest) {
    auto o = item == 0 ? mergeForm(g, 0, state.o, state.u, b.o, b.u) : std::optional<Id>(state.o);
    auto u = mergeForm(g, 1, state.o, state.u, b.o, b.u);
    if (!o || !u) return std::nullopt;
    state = {*o, *u};
  }
  if (item == 0) return state.o;
  Shape lse(column.begin(), column.end() - 1);
  return make(g, op().reshape, {Attr::ints(lse)}, {state.u});
}

// getitem[i](sdpa(q, concat[2](k_j), concat[2](v_j), m)) as torch's ring
// merges the blocks from each starting block s: s, s-1, ..., s+1.
std::optional<Id> ring(EGraph& g, const Match& m) {
  const auto &ks = m.subst.list("ks"), &vs = m.subst.list("vs");
  Id q = m.subst.cls("q"), mask = m.subst.cls("m");
  auto column = lseColumn(g, q);
  if (!notCausal(m) || !keySizes(g, ks, vs) || !broadcastsOverKeys(g, mask) || !column) return std::nullopt;
  // Search control: queries split along the sequence are split first (sdpa-rows); each row block's
  // attention gets its chains, which the whole query's would only repeat.
  for (const ENode* c : nodesOf(g, q, op().concat))
    if (attrsOf(*c)[0].i == 2 && c->children.size() > 1) return std::nullopt;
  size_t n = ks.size();
  std::vector<Block> blocks;
  for (size_t j = 0; j < n; ++j) {
    auto b = block(g, false, m, q, ks[j], vs[j], mask, *column);
    if (!b) return std::nullopt;
    blocks.push_back(*b);
  }
  int64_t item = m.subst.attr("i").i;
  std::vector<Id> chains;
  for (size_t s = 0; s < n; ++s) {
    std::vector<Block> rest;
    for (size_t t = 1; t < n; ++t) rest.push_back(blocks[(s + n - t) % n]);
    auto c = chain(g, item, blocks[s], rest, *column);
    if (!c) return std::nullopt;
    chains.push_back(*c);
  }
  for (size_t s = 1; s < n; ++s) g.merge(chains[0], chains[s]);
  return chains[0];
}

// Causal (top-left) attention with queries and keys split alike along the
// sequence: row block r sees blocks 0..r-1 whole and its own block causally,
// which torch's ring (without load balancing) merges as: block r causal, then
// r-1, ..., 0 without the mask.
std::optional<Id> causalRing(EGraph& g, const Match& m) {
  const auto &qs = m.subst.list("qs"), &ks = m.subst.list("ks"), &vs = m.subst.list("vs");
  Id mask = m.subst.cls("m");
  if (m.subst.attr("c") != Attr::boolean(true) || qs.size() != ks.size() || !broadcastsOverKeys(g, mask))
    return std::nullopt;
  auto sk = keySizes(g, ks, vs), sq = sizesAlong(g, qs, 2);
  if (!sk || !sq || *sk != *sq) return std::nullopt;
  auto masks = maskPieces(g, mask, 2, *sq);
  if (!masks) return std::nullopt;
  int64_t item = m.subst.attr("i").i;
  std::vector<Id> rows;
  for (size_t r = 0; r < qs.size(); ++r) {
    auto column = lseColumn(g, qs[r]);
    auto diag = column ? block(g, true, m, qs[r], ks[r], vs[r], (*masks)[r], *column) : std::nullopt;
    if (!diag) return std::nullopt;
    std::vector<Block> before;
    for (size_t b = r; b-- > 0;) {
      auto x = block(g, false, m, qs[r], ks[b], vs[b], (*masks)[r], *column);
      if (!x) return std::nullopt;
      before.push_back(*x);
    }
    auto row = chain(g, item, *diag, before, *column);
    if (!row) return std::nullopt;
    rows.push_back(*row);
  }
  return makeConcat(g, 2, rows);
}

}  // namespace

void addSdpaSequenceLemmas(std::vector<Lemma>& out) {
  out.push_back(applier("sdpa-rows",
                        "getitem[i](sdpa(concat[2](q_j), k, v, m)) = concat[2](getitem[i](sdpa(q_j, k, v, m_j))), "
                        "not causal: each query row attends on its own",
                        "(getitem[?i] (sdpa[?c, ?s] (concat[2] ?qs...) ?k ?v ?m))", rows));
  out.push_back(applier("sdpa-ring",
                        "getitem[i](sdpa(q, concat[2](k_j), concat[2](v_j), m)) = torch's ring-attention merge of the "
                        "blocks' attentions from any starting block s (s, s-1, ..., s+1): state (o, u) and block "
                        "(o_b, u_b) give o - sigmoid(u_b - u) * (o - o_b), u - log_sigmoid(u - u_b), u the "
                        "log-sum-exp unsqueezed; not causal, m broadcast over keys",
                        "(getitem[?i] (sdpa[?c, ?s] ?q (concat[2] ?ks...) (concat[2] ?vs...) ?m))", ring));
  out.push_back(applier("sdpa-causal-ring",
                        "getitem[i](sdpa[causal](concat[2](q_j), concat[2](k_j), concat[2](v_j), m)), q_j and k_j of "
                        "equal lengths = concat[2] over rows r of torch's ring merge of block r's causal attention "
                        "with blocks r-1, ..., 0 unmasked; m broadcast over keys",
                        "(getitem[?i] (sdpa[?c, ?s] (concat[2] ?qs...) (concat[2] ?ks...) (concat[2] ?vs...) ?m))",
                        causalRing));
}

}  // namespace tangle::lemmas::detail
