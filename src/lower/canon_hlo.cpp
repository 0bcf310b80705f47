// Canonical forms of XLA HLO instructions (graphs from src/import/hlo_importer:
// ops "hlo.<opcode>", attributes as kwargs). Collectives (all-reduce) are
// lowered in lower.cpp; parameters and array constants are inputs there.
//
// dot is a general contraction: both operands are permuted to
// [batch..., free, contracted] / [batch..., contracted, free] (flattened by a
// reshape when several dims are free or contracted), multiplied with mm or
// matmul, and reshaped to XLA's result order [batch..., lhs free..., rhs free...].
// broadcast is a reshape that inserts the new dims as 1s, then an expand.
#include "lower/canon_hlo.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>

#include "ops/shape.h"

namespace tangle {

namespace {

using Ref = CanonTerm::Ref;
using eg::Attr;
using canon::emit;
using canon::operand;

struct Hlo {
  const Graph& g;
  const Node& n;
  CanonTerm& out;

  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(n.loc, "node '" + n.name + "' (" + n.op + "): " + what);
  }
  NodeId arg(size_t i) const {
    if (i >= n.args.size()) fail("missing operand " + std::to_string(i));
    auto t = std::get_if<TensorRef>(&n.args[i].v);
    if (!t) fail("operand " + std::to_string(i) + " must be an instruction");
    return t->node;
  }
  const TensorType& typeOfArg(size_t i) const {
    const Node& a = g.node(arg(i));
    if (!a.type) fail("operand '" + a.name + "' has no tensor type");
    return *a.type;
  }
  const TensorType& self() const {
    if (!n.type) fail("no tensor type");
    return *n.type;
  }
  std::vector<int64_t> ints(const char* key, bool required = true) const {
    const Value* v = n.kwarg(key);
    if (!v) {
      if (required) fail(std::string("missing attribute ") + key);
      return {};
    }
    auto l = std::get_if<ValueList>(&v->v);
    if (!l) fail(std::string(key) + " must be a list of integers");
    std::vector<int64_t> out;
    for (const Value& e : *l) {
      auto p = std::get_if<int64_t>(&e.v);
      if (!p) fail(std::string(key) + " must be a list of integers");
      out.push_back(*p);
    }
    return out;
  }
  std::string word(const char* key) const {
    const Value* v = n.kwarg(key);
    if (v)
      if (auto s = std::get_if<Symbol>(&v->v)) return s->text;
    if (v)
      if (auto s = std::get_if<std::string>(&v->v)) return *s;
    return {};
  }

  Ref reshape(Ref x, const std::vector<Dim>& from, const std::vector<Dim>& to) {
    if (from == to) return x;
    return emit(out, "reshape", {Attr::ints(to)}, {x});
  }
  Ref permute(Ref x, const std::vector<int64_t>& perm) {
    std::vector<int64_t> id(perm.size());
    std::iota(id.begin(), id.end(), 0);
    if (perm == id) return x;
    if (perm.size() == 2) return emit(out, "transpose", {Attr::integer(0), Attr::integer(1)}, {x});
    return emit(out, "permute", {Attr::ints(perm)}, {x});
  }
  static std::vector<Dim> pick(const std::vector<Dim>& shape, const std::vector<int64_t>& dims) {
    std::vector<Dim> out;
    for (int64_t d : dims) out.push_back(shape[static_cast<size_t>(d)]);
    return out;
  }
  Dim product(const std::vector<Dim>& s) const {
    Dim p = 1;
    for (Dim d : s)
      if (__builtin_mul_overflow(p, d, &p)) fail("dimensions too large: their product does not fit in 64 bits");
    return p;
  }

  // A batch dim list, a contracted dim list and the rest, in order.
  std::vector<int64_t> freeDims(int64_t rank, const std::vector<int64_t>& batch, const std::vector<int64_t>& contracted) {
    std::vector<int64_t> free;
    for (int64_t d = 0; d < rank; ++d)
      if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
          std::find(contracted.begin(), contracted.end(), d) == contracted.end())
        free.push_back(d);
    return free;
  }

  bool dot() {
    const TensorType &l = typeOfArg(0), &r = typeOfArg(1);
    if (!ops::allConcrete(l.shape) || !ops::allConcrete(r.shape)) return false;
    auto lb = ints("lhs_batch_dims", false), rb = ints("rhs_batch_dims", false);
    auto lc = ints("lhs_contracting_dims", false), rc = ints("rhs_contracting_dims", false);
    if (lb.size() != rb.size() || lc.size() != rc.size()) fail("mismatched batch or contracting dims");
    auto lf = freeDims(l.rank(), lb, lc), rf = freeDims(r.rank(), rb, rc);
    std::vector<Dim> batch = pick(l.shape, lb);
    // [batch..., M, K] x [batch..., K, N]
    std::vector<int64_t> lp = lb, rp = rb;
    lp.insert(lp.end(), lf.begin(), lf.end());
    lp.insert(lp.end(), lc.begin(), lc.end());
    rp.insert(rp.end(), rc.begin(), rc.end());
    rp.insert(rp.end(), rf.begin(), rf.end());
    Dim M = product(pick(l.shape, lf)), K = product(pick(l.shape, lc)), N = product(pick(r.shape, rf));
    std::vector<Dim> l3 = batch, r3 = batch;
    l3.insert(l3.end(), {M, K});
    r3.insert(r3.end(), {K, N});
    Ref a = reshape(permute(operand(arg(0)), lp), pick(l.shape, lp), l3);
    Ref b = reshape(permute(operand(arg(1)), rp), pick(r.shape, rp), r3);
    Ref p = emit(out, batch.empty() ? "mm" : "matmul", {}, {a, b});
    std::vector<Dim> mn = batch;
    mn.insert(mn.end(), {M, N});
    std::vector<Dim> want = self().shape;
    if (mn != want) emit(out, "reshape", {Attr::ints(want)}, {p});
    return true;
  }

  // broadcast(x), dimensions={d_i}: x's dim i becomes output dim d_i.
  bool broadcast() {
    const TensorType& x = typeOfArg(0);
    std::vector<int64_t> dims = ints("dimensions", false);
    const std::vector<Dim>& want = self().shape;
    if (static_cast<int64_t>(dims.size()) != x.rank()) fail("dimensions must name every operand dim");
    // Operand dims in output order, then each placed with 1s around it.
    std::vector<int64_t> order(dims.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int64_t i, int64_t j) { return dims[i] < dims[j]; });
    Ref y = permute(operand(arg(0)), order);
    std::vector<Dim> shaped(want.size(), 1);
    for (size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] < 0 || dims[i] >= static_cast<int64_t>(want.size())) fail("broadcast dimension out of range");
      shaped[static_cast<size_t>(dims[i])] = x.shape[i];
    }
    y = reshape(y, pick(x.shape, order), shaped);
    if (shaped != want) emit(out, "expand", {Attr::ints(want)}, {y});
    else if (out.nodes.empty()) out.aliasOf = arg(0);
    return true;
  }

  // slice={[start:limit:stride], ...}: one slice per narrowed dim.
  bool slice() {
    const TensorType& x = typeOfArg(0);
    const Value* v = n.kwarg("slice");
    auto dims = v ? std::get_if<ValueList>(&v->v) : nullptr;
    if (!dims || static_cast<int64_t>(dims->size()) != x.rank()) fail("slice needs one [start:limit] per dim");
    Ref y = operand(arg(0));
    for (size_t d = 0; d < dims->size(); ++d) {
      auto b = std::get_if<ValueList>(&(*dims)[d].v);
      auto bound = [&](size_t k) {
        auto v = b && b->size() == 3 ? std::get_if<int64_t>(&(*b)[k].v) : nullptr;
        if (!v) fail("malformed slice bounds");
        return *v;
      };
      int64_t s = bound(0), e = bound(1), st = bound(2);
      if (s == 0 && e == x.shape[d] && st == 1) continue;
      y = emit(out, "slice", {Attr::integer(static_cast<int64_t>(d)), Attr::integer(s), Attr::integer(e), Attr::integer(st)},
               {y});
    }
    if (out.nodes.empty()) out.aliasOf = arg(0);
    return true;
  }

  // gather of whole rows by scalar indices (an embedding lookup): index_rows(w, idx) = w[idx].
  // Any other gather stays opaque.
  bool gather() {
    const TensorType &w = typeOfArg(0), &idx = typeOfArg(1);
    const Value* ivd = n.kwarg("index_vector_dim");
    auto vd = ivd ? std::get_if<int64_t>(&ivd->v) : nullptr;
    auto sizes = ints("slice_sizes", false), offsets = ints("offset_dims", false);
    if (!vd || *vd != idx.rank() || w.rank() < 1 || ints("collapsed_slice_dims", false) != std::vector<int64_t>{0} ||
        ints("start_index_map", false) != std::vector<int64_t>{0} || sizes.size() != w.shape.size() || sizes[0] != 1 ||
        offsets.size() + 1 != w.shape.size())
      return false;
    for (size_t d = 1; d < sizes.size(); ++d)
      if (sizes[d] != w.shape[d] || offsets[d - 1] != idx.rank() + static_cast<int64_t>(d) - 1) return false;
    emit(out, "index_rows", {}, {operand(arg(0)), operand(arg(1))});
    return true;
  }

  bool transpose() {
    permute(operand(arg(0)), ints("dimensions"));
    if (out.nodes.empty()) out.aliasOf = arg(0);  // the identity permutation
    return true;
  }

  bool concatenate() {
    std::vector<Ref> xs;
    for (size_t i = 0; i < n.args.size(); ++i) xs.push_back(operand(arg(i)));
    auto d = ints("dimensions");
    if (d.size() != 1) fail("concatenate needs one dimension");
    emit(out, "concat", {Attr::integer(d[0])}, std::move(xs));
    return true;
  }

  // reduce(x, init), dimensions={...}, to_apply=add|maximum with the identity as init.
  bool reduce() {
    if (n.args.size() != 2) return false;
    const Node& init = g.node(arg(1));
    auto v = init.op == "hlo.constant" && init.args.size() == 1 ? std::get_if<double>(&init.args[0].v) : nullptr;
    std::string fn = word("to_apply");
    const char* op = fn == "add" && v && *v == 0 ? "sum_dim" : fn == "maximum" && v && std::isinf(*v) && *v < 0 ? "amax" : nullptr;
    if (!op) return false;
    emit(out, op, {Attr::ints(ints("dimensions")), Attr::boolean(false)}, {operand(arg(0))});
    return true;
  }

  bool compare() {
    static const std::pair<const char*, const char*> kDir[] = {{"LT", "lt"}, {"LE", "le"}, {"GT", "gt"},
                                                                {"GE", "ge"}, {"EQ", "eq"}, {"NE", "ne"}};
    std::string dir = word("direction");
    for (auto& [hlo, op] : kDir)
      if (dir == hlo) {
        emit(out, op, {}, {operand(arg(0)), operand(arg(1))});
        return true;
      }
    return false;
  }

  // AwsNeuronRmsNorm(x, w, eps), backend_config = the normalized dim: the
  // canonical rms_norm normalizes the last dim, so that dim is moved there
  // and back. Modelling assumption: x * rsqrt(mean(x^2) + eps) * w.
  bool rmsNorm() {
    const TensorType& x = typeOfArg(0);
    const Node& eps = g.node(arg(2));
    auto e = eps.op == "hlo.constant" && eps.args.size() == 1 ? std::get_if<double>(&eps.args[0].v) : nullptr;
    if (!e) return false;
    int64_t d = 0;
    std::string cfg = word("backend_config");
    if (!cfg.empty()) {
      auto [end, ec] = std::from_chars(cfg.data(), cfg.data() + cfg.size(), d);
      if (ec != std::errc() || end != cfg.data() + cfg.size()) return false;  // another config: opaque
    }
    if (d < 0 || d >= x.rank()) fail("RmsNorm dim out of range");
    std::vector<int64_t> perm;
    for (int64_t i = 0; i < x.rank(); ++i)
      if (i != d) perm.push_back(i);
    perm.push_back(d);
    std::vector<int64_t> back(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) back[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
    Ref y = emit(out, "rms_norm", {Attr::real(*e)}, {permute(operand(arg(0)), perm), operand(arg(1))});
    y = permute(y, back);
    if (self().dtype != x.dtype) emit(out, "cast", {Attr::str(dtypeName(self().dtype))}, {y});
    return true;
  }

  bool customCall() {
    std::string target = word("custom_call_target");
    if (target == "AwsNeuronTransferWithStaticRing" && n.args.size() == 1) {  // a copy between memories
      out.aliasOf = arg(0);
      return true;
    }
    if (target == "AwsNeuronRmsNorm" && n.args.size() == 3) return rmsNorm();
    return false;
  }

  bool constant() {
    if (n.args.size() != 1) return false;
    double v = 0;
    if (auto d = std::get_if<double>(&n.args[0].v)) v = *d;
    else if (auto i = std::get_if<int64_t>(&n.args[0].v)) v = static_cast<double>(*i);
    else if (auto b = std::get_if<bool>(&n.args[0].v)) v = *b ? 1 : 0;
    else return false;
    emit(out, "const", {Attr::real(v)}, {});
    return true;
  }

  bool elementwise(const char* op, size_t arity) {
    if (n.args.size() != arity) return false;
    std::vector<Ref> kids;
    for (size_t i = 0; i < arity; ++i) kids.push_back(operand(arg(i)));
    emit(out, op, {}, std::move(kids));
    return true;
  }

  bool run() {
    std::string_view op = std::string_view(n.op).substr(4);  // without "hlo."
    static const std::pair<const char*, const char*> kBinary[] = {
        {"add", "add"}, {"subtract", "sub"}, {"multiply", "mul"}, {"divide", "div"}, {"and", "and"}, {"or", "or"}};
    static const std::pair<const char*, const char*> kUnary[] = {{"exponential", "exp"}, {"logistic", "sigmoid"},
                                                                 {"negate", "neg"},      {"tanh", "tanh"},
                                                                 {"rsqrt", "rsqrt"},     {"sqrt", "sqrt"},
                                                                 {"log", "log"},         {"cosine", "cos"},
                                                                 {"sine", "sin"}};
    for (auto& [h, c] : kBinary)
      if (op == h) return elementwise(c, 2);
    for (auto& [h, c] : kUnary)
      if (op == h) return elementwise(c, 1);
    if (op == "select") return elementwise("where", 3);
    if (op == "convert") {
      if (typeOfArg(0).dtype == self().dtype) out.aliasOf = arg(0);
      else emit(out, "cast", {Attr::str(dtypeName(self().dtype))}, {operand(arg(0))});
      return true;
    }
    if (op == "reshape" || op == "bitcast") {
      if (typeOfArg(0).shape == self().shape) out.aliasOf = arg(0);
      else emit(out, "reshape", {Attr::ints(self().shape)}, {operand(arg(0))});
      return true;
    }
    if (op == "copy") {
      out.aliasOf = arg(0);
      return true;
    }
    if (op == "dot") return dot();
    if (op == "broadcast") return broadcast();
    if (op == "slice") return slice();
    if (op == "transpose") return transpose();
    if (op == "gather") return gather();
    if (op == "concatenate") return concatenate();
    if (op == "reduce") return reduce();
    if (op == "compare") return compare();
    if (op == "custom-call") return customCall();
    if (op == "constant") return constant();
    return false;
  }
};

}  // namespace

bool canonicalizeHloOp(const Graph& g, NodeId id, CanonTerm& out) {
  const Node& n = g.node(id);
  if (n.op.rfind("hlo.", 0) != 0) return false;
  CanonTerm t;
  if (!Hlo{g, n, t}.run()) return false;
  out = std::move(t);
  return true;
}

}  // namespace tangle
