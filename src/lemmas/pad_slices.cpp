// Slices moved outwards: a rank holding some real heads and some padding
// relates to the spec through slice(x, heads 0:k) of its own tensors; moving
// the slice past the head split / merge reshapes, the batched products, the
// softmax and scalings lets the spec's per-head computation meet the rank's.
#include "lemmas/lemma_util.h"
#include "ops/ops.h"

namespace tangle::lemmas::detail {

namespace {

// reshape[O](slice[d, s, e, 1](x)), x: I, is slice[dd, s*T/To, e*T/To](reshape[O'](x))
// when the slice is a contiguous block of the output along dd: equal leading
// products prod(I[:d]) = prod(O[:dd]), T = prod(I[d+1:]), To = prod(O[dd+1:]),
// O[dd]*To = (e-s)*T, s*T, e*T and I[d]*T multiples of To; O' = O but
// I[d]*T/To at dd. All sizes concrete.
std::optional<Id> reshapeOfSlice(EGraph& g, const Match& m) {
  const Attr &sa = m.subst.attr("s"), &ea = m.subst.attr("e");
  const Attr& oa = m.subst.attr("o");
  if (sa.kind != Attr::Kind::Int || ea.kind != Attr::Kind::Int || oa.kind != Attr::Kind::IntList) return std::nullopt;
  const TensorType* t = typeOf(g, m.subst.cls("x"));
  if (!t) return std::nullopt;
  std::vector<int64_t> in;
  for (Dim x : t->shape) {
    if (isSymbolic(x)) return std::nullopt;
    in.push_back(x);
  }
  const std::vector<int64_t>& out = oa.list;
  int64_t d = m.subst.integer("d"), s = sa.i, e = ea.i, rank = static_cast<int64_t>(in.size());
  if (d < 0 || d >= rank || s < 0 || e <= s || e > in[d]) return std::nullopt;
  for (int64_t o : out)
    if (o <= 0) return std::nullopt;
  auto prod = [](const std::vector<int64_t>& v, size_t from, size_t to) {
    int64_t p = 1;
    for (size_t i = from; i < to; ++i) p *= v[i];
    return p;
  };
  int64_t L = prod(in, 0, d), T = prod(in, d + 1, in.size());
  for (size_t dd = 0; dd < out.size(); ++dd) {
    if (prod(out, 0, dd) != L) continue;
    int64_t To = prod(out, dd + 1, out.size());
    if (out[dd] * To != (e - s) * T || (s * T) % To || (e * T) % To || (in[d] * T) % To) continue;
    std::vector<int64_t> whole = out;
    whole[dd] = in[d] * T / To;
    if (whole == in && s == 0 && e == in[d]) return std::nullopt;
    // Constrained: reshape[O'](x) must exist already (a rank's own head view);
    // creating it for every slice under a reshape blows sequence-parallel
    // e-graphs up.
    auto r = g.lookup(eg::ENode{op().reshape, eg::internAttrs({Attr::ints(whole)}), {m.subst.cls("x")}});
    return r ? makeSlice(g, *r, static_cast<int64_t>(dd), s * T / To, e * T / To) : std::nullopt;
  }
  return std::nullopt;
}

// softmax[dim](slice[d](x)) = slice[d](softmax[dim](x)) when d is not the softmax dim.
bool otherDim(const EGraph& g, Subst& s) {
  const TensorType* t = typeOf(g, s.cls("x"));
  if (!t) return false;
  int64_t r = static_cast<int64_t>(t->rank()), a = s.integer("dim"), d = s.integer("d");
  return (a < 0 ? a + r : a) != (d < 0 ? d + r : d);
}

bool scalarC(const EGraph& g, Subst& s) {
  const TensorType* t = typeOf(g, s.cls("c"));
  return t && t->shape.empty();
}

}  // namespace

void addPadSliceLemmas(std::vector<Lemma>& out) {
  out.push_back(rewrite("bmm-slice-batch", "bmm(slice[0, s, e](a), slice[0, s, e](b)) = slice[0, s, e](bmm(a, b))",
                        "(bmm (slice[0, ?s, ?e, 1] ?a) (slice[0, ?s, ?e, 1] ?b))", "(slice[0, ?s, ?e, 1] (bmm ?a ?b))"));
  out.push_back(rewrite("bmm-slice-rows", "bmm(slice[1, s, e](a), b) = slice[1, s, e](bmm(a, b))",
                        "(bmm (slice[1, ?s, ?e, 1] ?a) ?b)", "(slice[1, ?s, ?e, 1] (bmm ?a ?b))"));
  out.push_back(rewrite("bmm-slice-cols", "bmm(a, slice[2, s, e](b)) = slice[2, s, e](bmm(a, b))",
                        "(bmm ?a (slice[2, ?s, ?e, 1] ?b))", "(slice[2, ?s, ?e, 1] (bmm ?a ?b))"));
  out.push_back(rewrite("softmax-slice", "softmax[dim](slice[d](x)) = slice[d](softmax[dim](x)), d != dim",
                        "(softmax[?dim, ?h] (slice[?d, ?s, ?e, ?st] ?x))",
                        "(slice[?d, ?s, ?e, ?st] (softmax[?dim, ?h] ?x))", otherDim));
  for (const char* f : {"add", "sub", "mul", "div"}) {
    std::string F = f;
    eg::Symbol sym = eg::intern(f);
    Guard guard = [sym](const EGraph& g, Subst& s) {
      return scalarC(g, s) && !isIdentityOperand(g, sym, s.cls("c"), false);
    };
    out.push_back(rewrite(F + "-scalar-slice", F + "(slice[..](x), c) = slice[..](" + F + "(x, c)), c 0-d",
                          "(" + F + " (slice[?d, ?s, ?e, ?st] ?x) ?c)", "(slice[?d, ?s, ?e, ?st] (" + F + " ?x ?c))",
                          guard));
  }
  out.push_back(applier("reshape-slice",
                        "constrained: reshape[O](slice[d, s, e](x)) = slice[d', s', e'](reshape[O'](x)) when the slice is a "
                        "contiguous block of the output along d' (equal leading products, aligned bounds)",
                        "(reshape[?o] (slice[?d, ?s, ?e, 1] ?x))", reshapeOfSlice));
}

}  // namespace tangle::lemmas::detail
