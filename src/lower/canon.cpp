// ATen call -> canonical vocabulary (src/ops). Purely syntactic: it reads the
// node's arguments and the type annotations of the node and its operands,
// never the e-graph. Known ops whose arguments are malformed raise an
// InputError; known ops that cannot be resolved for lack of type
// information (e.g. a slice of an unannotated tensor) fall back to opaque.
#include "lower/canon.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string_view>
#include <unordered_map>

#include "lower/canon_hlo.h"
#include "lower/canon_grad.h"
#include "lower/canon_mask.h"
#include "lower/canon_optim.h"
#include "lower/canon_model.h"
#include "ops/ops.h"
#include "ops/shape.h"
#include "sym/context.h"

namespace tangle {

namespace {

using Ref = CanonTerm::Ref;
using eg::Attr;

constexpr int64_t kNoInt = std::numeric_limits<int64_t>::min();

struct Canon {
  const Graph& g;
  NodeId id;
  const Node& n;
  std::string_view target;    // without "torch.ops."
  std::string_view base;      // "aten.add"
  std::string_view overload;  // "Tensor"
  CanonTerm out;

  Canon(const Graph& graph, NodeId nid) : g(graph), id(nid), n(graph.node(nid)) {
    target = n.op;
    if (target.rfind("torch.ops.", 0) == 0) target.remove_prefix(10);
    size_t first = target.find('.');
    size_t second = first == std::string_view::npos ? first : target.find('.', first + 1);
    base = target.substr(0, second);
    overload = second == std::string_view::npos ? std::string_view("default") : target.substr(second + 1);
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(n.loc, "node '" + n.name + "' (" + n.op + "): " + what);
  }

  // --- arguments -----------------------------------------------------------
  // Positional argument i, or keyword `kw`; nullptr when absent.
  const Value* arg(size_t i, const char* kw) const {
    if (i < n.args.size()) return &n.args[i];
    return kw ? n.kwarg(kw) : nullptr;
  }
  static bool isNone(const Value* v) { return !v || std::holds_alternative<NoneValue>(v->v); }
  static std::optional<double> number(const Value& v) {
    if (auto p = std::get_if<int64_t>(&v.v)) return static_cast<double>(*p);
    if (auto p = std::get_if<double>(&v.v)) return *p;
    if (auto p = std::get_if<bool>(&v.v)) return *p ? 1.0 : 0.0;
    return std::nullopt;
  }
  int64_t intArg(size_t i, const char* kw, const char* what, int64_t dflt = kNoInt) const {
    const Value* v = arg(i, kw);
    if (isNone(v)) {
      if (dflt == kNoInt) fail(std::string("missing ") + what);
      return dflt;
    }
    if (auto p = std::get_if<int64_t>(&v->v)) return *p;
    if (auto p = std::get_if<bool>(&v->v)) return *p;
    if (auto e = symValueOf(*v)) {
      if (auto c = sym::constantValue(*e)) return *c;
      fail(std::string(what) + " is the symbolic " + sym::toString(*e) + ", which is not supported here");
    }
    fail(std::string(what) + " must be an integer");
  }
  // The value of a reference to a Sym(...) node.
  std::optional<sym::ExprId> symValueOf(const Value& v) const {
    auto t = std::get_if<TensorRef>(&v.v);
    if (!t) return std::nullopt;
    return g.node(t->node).symValue;
  }
  // An integer or symbolic integer argument; nullopt for None/absent.
  std::optional<sym::ExprId> symIntArg(size_t i, const char* kw, const char* what) const {
    const Value* v = arg(i, kw);
    if (isNone(v)) return std::nullopt;
    if (auto e = symValueOf(*v)) return *e;
    return sym::constant(intArg(i, kw, what));
  }
  // Optional integer: nullopt for None/absent.
  std::optional<int64_t> optIntArg(size_t i, const char* kw, const char* what) const {
    const Value* v = arg(i, kw);
    if (isNone(v)) return std::nullopt;
    return intArg(i, kw, what);
  }
  double numberArg(size_t i, const char* kw, const char* what, double dflt) const {
    const Value* v = arg(i, kw);
    if (isNone(v)) return dflt;
    auto x = number(*v);
    if (!x) fail(std::string(what) + " must be a number");
    return *x;
  }
  bool boolArg(size_t i, const char* kw, const char* what, bool dflt) const {
    const Value* v = arg(i, kw);
    if (isNone(v)) return dflt;
    if (auto p = std::get_if<bool>(&v->v)) return *p;
    if (auto p = std::get_if<int64_t>(&v->v)) return *p != 0;
    fail(std::string(what) + " must be a bool");
  }
  // An int list (a bare int is accepted as a one-element list, as ATen does).
  std::optional<std::vector<int64_t>> intsArg(size_t i, const char* kw, const char* what, bool required) const {
    const Value* v = arg(i, kw);
    if (isNone(v)) {
      if (required) fail(std::string("missing ") + what);
      return std::nullopt;
    }
    if (auto p = std::get_if<int64_t>(&v->v)) return std::vector<int64_t>{*p};
    auto l = std::get_if<ValueList>(&v->v);
    if (!l) fail(std::string(what) + " must be a list of integers");
    std::vector<int64_t> out;
    for (const Value& e : *l) {
      auto p = std::get_if<int64_t>(&e.v);
      if (!p) return std::nullopt;  // symbolic sizes: let the caller use the annotation
      out.push_back(*p);
    }
    return out;
  }
  NodeId tensorArg(size_t i, const char* kw, const char* what) const {
    const Value* v = arg(i, kw);
    auto t = v ? std::get_if<TensorRef>(&v->v) : nullptr;
    if (!t) fail(std::string(what) + " must be a tensor");
    return t->node;
  }
  // A tensor or a python number (which becomes a const leaf).
  Ref operandArg(size_t i, const char* kw, const char* what) const {
    const Value* v = arg(i, kw);
    if (!v) fail(std::string("missing ") + what);
    if (auto t = std::get_if<TensorRef>(&v->v)) return tensorRef(t->node);
    if (auto x = number(*v)) return scalarRef(*x);
    fail(std::string(what) + " must be a tensor or a number");
  }
  std::optional<DType> dtypeArg(size_t i, const char* kw) const {
    const Value* v = arg(i, kw);
    if (isNone(v)) return std::nullopt;
    if (auto p = std::get_if<DType>(&v->v)) return *p;
    if (auto p = std::get_if<Symbol>(&v->v)) return parseDType(p->text);
    if (auto p = std::get_if<std::string>(&v->v)) return parseDType(*p);
    fail("dtype argument is not a dtype");
  }

  // --- types -----------------------------------------------------------------
  const TensorType* typeOf(NodeId t) const {
    if (t < 0 || static_cast<size_t>(t) >= g.size()) return nullptr;
    const Node& o = g.node(t);
    return o.type ? &*o.type : nullptr;
  }
  const TensorType* selfType() const { return n.type ? &*n.type : nullptr; }
  // Rank of operand t, falling back to the node's own annotation when the
  // op preserves rank.
  std::optional<int64_t> rankOf(NodeId t, bool sameRankAsResult) const {
    if (auto tt = typeOf(t)) return tt->rank();
    if (sameRankAsResult && selfType()) return selfType()->rank();
    return std::nullopt;
  }
  int64_t normDim(int64_t d, int64_t rank, const char* what) const {
    int64_t r = std::max<int64_t>(rank, 1);  // 0-d tensors accept dim 0 / -1
    if (d < -r || d >= r) fail(std::string(what) + " " + std::to_string(d) + " out of range for rank " + std::to_string(rank));
    return d < 0 ? d + r : d;
  }

  // --- building --------------------------------------------------------------
  static Ref tensorRef(NodeId t) { Ref r; r.kind = Ref::Kind::Operand; r.operand = t; return r; }
  static Ref scalarRef(double v) { Ref r; r.kind = Ref::Kind::Scalar; r.scalar = v; return r; }
  Ref emit(std::string_view op, eg::AttrList attrs, std::vector<Ref> children) {
    out.nodes.push_back({eg::intern(op), std::move(attrs), std::move(children)});
    Ref r;
    r.kind = Ref::Kind::Local;
    r.local = static_cast<int>(out.nodes.size()) - 1;
    return r;
  }
  void alias(NodeId t) { out.nodes.clear(); out.aliasOf = t; }
  // x * k (k != 1), folding scalars.
  Ref scale(Ref x, double k) {
    if (k == 1) return x;
    if (x.kind == Ref::Kind::Scalar) return scalarRef(x.scalar * k);
    return emit("mul", {}, {x, scalarRef(k)});
  }

  // --- opaque ----------------------------------------------------------------
  static Attr literal(const Value& v) {
    struct V {
      Attr operator()(const NoneValue&) const { return Attr::none(); }
      Attr operator()(bool b) const { return Attr::boolean(b); }
      Attr operator()(int64_t i) const { return Attr::integer(i); }
      Attr operator()(double d) const { return Attr::real(d); }
      Attr operator()(const std::string& s) const { return Attr::str(s); }
      Attr operator()(DType t) const { return Attr::str(std::string("dtype:") + dtypeName(t)); }
      Attr operator()(const Symbol& s) const { return Attr::str(s.text); }
      Attr operator()(const TensorRef&) const { return Attr::str("<tensor>"); }
      Attr operator()(const ValueList& l) const {
        std::vector<int64_t> ints;
        for (const Value& e : l) {
          auto p = std::get_if<int64_t>(&e.v);
          if (!p) return Attr::str(render(l));
          ints.push_back(*p);
        }
        return Attr::ints(std::move(ints));
      }
    };
    return std::visit(V{}, v.v);
  }
  // A structural rendering of a list (tensors as <tensor>), for list attrs
  // that are not plain int lists.
  static std::string render(const Value& v) {
    if (auto l = std::get_if<ValueList>(&v.v)) return render(*l);
    return literal(v).toString();
  }
  static std::string render(const ValueList& l) {
    std::string s = "[";
    for (size_t i = 0; i < l.size(); ++i) s += (i ? ", " : "") + render(l[i]);
    return s + "]";
  }
  static void collect(const Value& v, std::vector<Ref>& children) {
    if (auto t = std::get_if<TensorRef>(&v.v)) children.push_back(tensorRef(t->node));
    else if (auto l = std::get_if<ValueList>(&v.v))
      for (const Value& e : *l) collect(e, children);
  }
  // Opaque op named by its target; non-tensor arguments become attributes,
  // tensor positions are marked "<tensor>" so they are part of the identity.
  void opaque() {
    out = CanonTerm{};
    eg::AttrList attrs;
    std::vector<Ref> children;
    for (const Value& a : n.args) {
      attrs.push_back(literal(a));
      collect(a, children);
    }
    for (const auto& [k, v] : n.kwargs) {
      attrs.push_back(Attr::str(k + "="));
      attrs.push_back(literal(v));
      collect(v, children);
    }
    // Uninitialized memory and random draws are not functions of their
    // arguments: two such calls are never equal (no congruence), only a
    // relation file can relate them.
    static const std::string_view kFresh[] = {"aten.empty", "aten.empty_like", "aten.new_empty", "aten.new_empty_strided",
                                              "aten.empty_strided", "aten.rand", "aten.randn", "aten.rand_like",
                                              "aten.randn_like", "aten.randint", "aten.randint_like", "aten.bernoulli",
                                              "aten.normal", "aten.uniform", "aten.randperm"};
    if (std::find(std::begin(kFresh), std::end(kFresh), base) != std::end(kFresh))
      attrs.push_back(Attr::str("fresh:" + n.loc.file + ":" + n.name));
    // An HLO instruction's result shape is not among its operands and
    // attributes (iota(), custom-call): it is part of the identity, so two
    // calls that differ only in their result shape never meet.
    if (target.rfind("hlo.", 0) == 0 && n.type) attrs.push_back(Attr::str("type=" + toString(*n.type)));
    emit(target, std::move(attrs), std::move(children));
  }

  void run();
  bool known();
  // Handlers return false to fall back to opaque.
  bool binary(std::string_view op);
  bool rsub();
  bool addmm(std::string_view product);
  bool unary(std::string_view op);
  bool direct(const char* op);
  bool t();
  bool transpose();
  bool permute();
  bool reshapeLike();
  bool slice();
  bool symbolicSlice(NodeId x, int64_t dim, Dim size, std::optional<sym::ExprId> start, std::optional<sym::ExprId> end,
                     int64_t step);
  bool cat();
  bool layerNorm();
  bool softmax(bool halfToFloatArg);
  bool reduce(std::string_view op, bool hasDims);
  bool expand();
  bool split(bool sizesGiven);
  bool toCopy();
  bool copy();
  bool clamp();
  // Complex tensors are real views with a trailing dim of 2 (import/type_annotation.cpp).
  bool isComplex(NodeId t) const { return t >= 0 && static_cast<size_t>(t) < g.size() && g.node(t).complexView; }
  bool touchesComplex() const;
  bool complexOp();
  bool complexMul();
  bool complexConj();
};

// clamp(x, lo, hi) = where(lt(x, lo), lo, where(gt(x, hi), hi, x)) for lo <= hi
// (NaN passes through both compares unchanged, as in ATen); one-sided
// when a bound is None. Bounds must be numbers.
bool Canon::clamp() {
  if (overload != "default") return false;
  Ref x = tensorRef(tensorArg(0, "self", "self"));
  const Value* lo = arg(1, "min");
  const Value* hi = arg(2, "max");
  std::optional<double> l = isNone(lo) ? std::nullopt : number(*lo);
  std::optional<double> h = isNone(hi) ? std::nullopt : number(*hi);
  if ((!isNone(lo) && !l) || (!isNone(hi) && !h)) return false;  // tensor bounds: opaque
  if (l && h && *l > *h) return false;                          // ATen gives hi everywhere: opaque
  Ref r = x;
  if (h) r = emit("where", {}, {emit("gt", {}, {x, scalarRef(*h)}), scalarRef(*h), x});
  if (l) r = emit("where", {}, {emit("lt", {}, {x, scalarRef(*l)}), scalarRef(*l), r});
  if (!l && !h) alias(x.operand);
  return true;
}

bool Canon::touchesComplex() const {
  if (n.complexView) return true;
  // collect's walk, without collecting: this runs on every node.
  auto any = [&](auto& self, const Value& v) -> bool {
    if (auto t = std::get_if<TensorRef>(&v.v)) return isComplex(t->node);
    if (auto l = std::get_if<ValueList>(&v.v))
      for (const Value& e : *l)
        if (self(self, e)) return true;
    return false;
  };
  for (const Value& a : n.args)
    if (any(any, a)) return true;
  for (const auto& kv : n.kwargs)
    if (any(any, kv.second)) return true;
  return false;
}

// An op on complex tensors: only those whose reading of the real view is
// right are lowered; any other is opaque (never related, never wrong).
bool Canon::complexOp() {
  if (base == "aten.view_as_real" || base == "aten.view_as_complex") {
    if (overload != "default") return false;
    alias(tensorArg(0, "self", "self"));  // same real view, same trailing dim of 2
    return true;
  }
  if (base == "aten.mul") return complexMul();
  if (base == "aten._conj" || base == "aten.conj" || base == "aten.conj_physical") return complexConj();
  // Shapes come from the node's own (real-view) annotation: right for complex.
  static const std::string_view kViews[] = {"aten.view", "aten.reshape", "aten._unsafe_view", "aten.unsqueeze",
                                            "aten.squeeze", "aten.flatten"};
  if (std::find(std::begin(kViews), std::end(kViews), base) != std::end(kViews))
    return selfType() && reshapeLike();
  if (base == "aten.slice") {  // a dim of the complex tensor, never the trailing 2
    int64_t dim = intArg(1, "dim", "dim", 0);
    const TensorType* in = typeOf(tensorArg(0, "self", "self"));
    // A negative dim would count the trailing 2: left opaque.
    return in && dim >= 0 && dim < in->rank() - 1 && slice();
  }
  static const std::string_view kSame[] = {"aten.clone", "aten.detach", "aten.alias", "aten.contiguous",
                                           "_c10d_functional.wait_tensor"};
  if (std::find(std::begin(kSame), std::end(kSame), base) != std::end(kSame)) {
    alias(tensorArg(0, nullptr, "the tensor argument"));
    return true;
  }
  return false;
}

// (a + bi)(c + di) = (ac - bd) + (ad + bc)i on the real views, both operands complex.
bool Canon::complexMul() {
  if (overload != "Tensor") return false;
  const Value* va = arg(0, "self");
  const Value* vb = arg(1, "other");
  auto ta = va ? std::get_if<TensorRef>(&va->v) : nullptr;
  auto tb = vb ? std::get_if<TensorRef>(&vb->v) : nullptr;
  if (!ta || !tb || !isComplex(ta->node) || !isComplex(tb->node) || !n.complexView || !typeOf(ta->node) ||
      !typeOf(tb->node) || !selfType())
    return false;
  auto part = [&](NodeId t, int64_t k) {
    int64_t last = typeOf(t)->rank() - 1;
    return emit("slice", {Attr::integer(last), Attr::integer(k), Attr::integer(k + 1), Attr::integer(1)}, {tensorRef(t)});
  };
  Ref a = part(ta->node, 0), b = part(ta->node, 1), c = part(tb->node, 0), d = part(tb->node, 1);
  Ref re = emit("sub", {}, {emit("mul", {}, {a, c}), emit("mul", {}, {b, d})});
  Ref im = emit("add", {}, {emit("mul", {}, {a, d}), emit("mul", {}, {b, c})});
  emit("concat", {Attr::integer(selfType()->rank() - 1)}, {re, im});
  return true;
}

// conj(a + bi) = a - bi on the real view (the complex RoPE backward multiplies by
// the conjugate of the rotation). The lazy conj bit of _conj is a storage detail:
// the value read is the conjugate.
bool Canon::complexConj() {
  if (overload != "default") return false;
  NodeId x = tensorArg(0, "self", "self");
  const TensorType* t = typeOf(x);
  if (!isComplex(x) || !n.complexView || !t) return false;
  int64_t last = t->rank() - 1;
  auto part = [&](int64_t k) {
    return emit("slice", {Attr::integer(last), Attr::integer(k), Attr::integer(k + 1), Attr::integer(1)}, {tensorRef(x)});
  };
  Ref re = part(0);
  emit("concat", {Attr::integer(last)}, {re, emit("neg", {}, {part(1)})});
  return true;
}

bool Canon::binary(std::string_view op) {
  if (overload == "Tensor_mode" || overload == "Scalar_mode") {
    if (!isNone(n.kwarg("rounding_mode")) || n.args.size() > 2) return false;
  } else if (overload != "Tensor" && overload != "Scalar") {
    return false;
  }
  Ref a = operandArg(0, "self", "self");
  Ref b = operandArg(1, "other", "other");
  if (op == "add" || op == "sub") b = scale(b, numberArg(2, "alpha", "alpha", 1.0));
  emit(op, {}, {a, b});
  return true;
}

// rsub(self, other, alpha) = other - alpha * self
bool Canon::rsub() {
  if (overload != "Tensor" && overload != "Scalar") return false;
  Ref self = operandArg(0, "self", "self");
  Ref other = operandArg(1, "other", "other");
  emit("sub", {}, {other, scale(self, numberArg(2, "alpha", "alpha", 1.0))});
  return true;
}

// addmm(b, x, w, beta, alpha) = beta * b + alpha * mm(x, w); baddbmm likewise.
bool Canon::addmm(std::string_view product) {
  if (overload != "default") return false;
  Ref b = tensorRef(tensorArg(0, "self", "self"));
  Ref x = tensorRef(tensorArg(1, product == "mm" ? "mat1" : "batch1", "first factor"));
  Ref w = tensorRef(tensorArg(2, product == "mm" ? "mat2" : "batch2", "second factor"));
  double beta = numberArg(3, "beta", "beta", 1.0);
  double alpha = numberArg(4, "alpha", "alpha", 1.0);
  Ref prod = scale(emit(product, {}, {x, w}), alpha);
  if (beta == 0) return true;  // ATen ignores self (even NaN) when beta == 0
  emit("add", {}, {prod, scale(b, beta)});
  return true;
}

bool Canon::unary(std::string_view op) {
  if (overload != "default") return false;
  Ref x = tensorRef(tensorArg(0, "self", "self"));
  if (op == "gelu") {
    const Value* v = arg(1, "approximate");
    std::string approx = "none";
    if (!isNone(v)) {
      auto s = std::get_if<std::string>(&v->v);
      if (!s) fail("approximate must be a string");
      approx = *s;
    }
    emit("gelu", {Attr::str(approx)}, {x});
  } else {
    emit(op, {}, {x});
  }
  return true;
}

// op(x1, ..., xn): the tensor operands in order, no attributes (the default overload).
bool Canon::direct(const char* op) {
  if (overload != "default") return false;
  std::vector<Ref> kids;
  for (size_t i = 0; i < std::max<size_t>(n.args.size(), 1); ++i)
    kids.push_back(tensorRef(tensorArg(i, i == 0 ? "self" : nullptr, i == 0 ? "self" : "operand")));
  emit(op, {}, std::move(kids));
  return true;
}

bool Canon::t() {
  NodeId x = tensorArg(0, "self", "self");
  auto rank = rankOf(x, true);
  if (!rank) return false;
  if (*rank < 2) alias(x);
  else if (*rank == 2) emit("transpose", {Attr::integer(0), Attr::integer(1)}, {tensorRef(x)});
  else fail("t() expects a tensor of rank <= 2");
  return true;
}

bool Canon::transpose() {
  if (overload != "int") return false;
  NodeId x = tensorArg(0, "self", "self");
  int64_t d0 = intArg(1, "dim0", "dim0"), d1 = intArg(2, "dim1", "dim1");
  auto rank = rankOf(x, true);
  if (!rank) return false;
  d0 = normDim(d0, *rank, "dim0");
  d1 = normDim(d1, *rank, "dim1");
  if (d0 == d1 || *rank == 0) alias(x);
  else emit("transpose", {Attr::integer(std::min(d0, d1)), Attr::integer(std::max(d0, d1))}, {tensorRef(x)});
  return true;
}

bool Canon::permute() {
  if (overload != "default") return false;
  NodeId x = tensorArg(0, "self", "self");
  auto dims = intsArg(1, "dims", "dims", true);
  if (!dims) fail("dims must be a list of integers");
  auto rank = rankOf(x, true);
  if (!rank) return false;
  if (static_cast<int64_t>(dims->size()) != *rank) fail("permute dims do not match the rank");
  std::vector<bool> seen(dims->size(), false);
  bool identity = true;
  for (size_t i = 0; i < dims->size(); ++i) {
    int64_t d = normDim((*dims)[i], *rank, "dim");
    if (seen[d]) fail("permute dims repeat " + std::to_string(d));
    seen[d] = true;
    (*dims)[i] = d;
    identity = identity && d == static_cast<int64_t>(i);
  }
  if (identity) alias(x);
  else emit("permute", {Attr::ints(*dims)}, {tensorRef(x)});
  return true;
}

// view/reshape/_unsafe_view/unsqueeze/squeeze/flatten -> reshape[[result shape]].
bool Canon::reshapeLike() {
  bool viewFamily = base == "aten.view" || base == "aten.reshape" || base == "aten._unsafe_view";
  if (viewFamily && overload != "default") return false;  // view.dtype is a bitcast
  NodeId x = tensorArg(0, "self", "self");
  const TensorType* in = typeOf(x);
  std::optional<std::vector<int64_t>> shape;
  if (selfType()) {
    if (in && in->dtype != DType::Unknown && selfType()->dtype != DType::Unknown && in->dtype != selfType()->dtype)
      return false;
    shape = selfType()->shape;
  } else if (viewFamily && in && ops::allConcrete(in->shape)) {
    // Resolve a -1 entry from the operand's size.
    shape = intsArg(1, "size", "size", true);
    if (!shape) return false;
    int64_t known = 1, numel = 1, holes = 0;
    for (int64_t d : in->shape) numel *= d;
    for (int64_t d : *shape) d == -1 ? ++holes : known *= d;
    if (holes > 1 || (holes == 1 && known == 0)) fail("view size is ambiguous");
    for (int64_t& d : *shape)
      if (d == -1) d = numel / known;
  }
  if (!shape) return false;
  if (in && in->shape == *shape) alias(x);
  else emit("reshape", {Attr::ints(*shape)}, {tensorRef(x)});
  return true;
}

// slice.Tensor(x, dim=0, start=None, end=None, step=1)
bool Canon::slice() {
  if (overload != "Tensor") return false;
  NodeId x = tensorArg(0, "self", "self");
  int64_t dim = intArg(1, "dim", "dim", 0);
  auto start = symIntArg(2, "start", "start");
  auto end = symIntArg(3, "end", "end");
  int64_t step = intArg(4, "step", "step", 1);
  if (step < 1) fail("slice step must be positive");
  const TensorType* in = typeOf(x);
  if (!in) return false;
  dim = normDim(dim, in->rank(), "dim");
  if (in->rank() == 0) fail("slice of a 0-d tensor");
  Dim size = in->shape[dim];
  auto sc = start ? sym::constantValue(*start) : std::optional<int64_t>(0);
  auto ec = end ? sym::constantValue(*end) : std::nullopt;
  if (isSymbolic(size) || !sc || (end && !ec)) return symbolicSlice(x, dim, size, start, end, step);
  auto clamp = [&](int64_t v) {
    if (v < 0) v += size;
    return std::clamp<int64_t>(v, 0, size);
  };
  int64_t s = clamp(*sc);
  int64_t e = ec ? clamp(*ec) : size;
  if (e < s) e = s;
  if (s == 0 && e == size && step == 1) alias(x);
  else emit("slice", {Attr::integer(dim), Attr::integer(s), Attr::integer(e), Attr::integer(step)}, {tensorRef(x)});
  return true;
}

// A slice with a symbolic size or bound. Python clamps bounds to [0, size]
// and counts negative ones from the end; with symbols this reads the bounds
// as given (a constant past the end, as `x[n:]` prints 2**63-1, is the size;
// a negative constant counts from the end), which is right when
// 0 <= start <= end <= size. That is proved once the check's facts are known
// (checkSymbolicSlices), not here.
bool Canon::symbolicSlice(NodeId x, int64_t dim, Dim size, std::optional<sym::ExprId> start,
                          std::optional<sym::ExprId> end, int64_t step) {
  if (step != 1) fail("a slice with a symbolic size or bound needs step 1");
  sym::ExprId sz = sym::fromDim(size);
  auto bound = [&](std::optional<sym::ExprId> b, sym::ExprId dflt) {
    if (!b) return dflt;
    auto c = sym::constantValue(*b);
    if (c && *c >= std::numeric_limits<int32_t>::max()) return sz;
    if (c && *c < 0) return sym::add(sz, *b);
    return *b;
  };
  auto s = sym::toDim(bound(start, sym::constant(0))), e = sym::toDim(bound(end, sz));
  if (!s || !e) fail("slice bounds are negative");
  if (*s == 0 && *e == size) {
    alias(x);
    return true;
  }
  emit("slice", {Attr::integer(dim), Attr::dim(*s), Attr::dim(*e), Attr::integer(1)}, {tensorRef(x)});
  return true;
}

// cat(tensors, dim=0) -> concat[dim]
bool Canon::cat() {
  if (overload != "default") return false;
  const Value* v = arg(0, "tensors");
  auto l = v ? std::get_if<ValueList>(&v->v) : nullptr;
  if (!l || l->empty()) fail("cat expects a non-empty list of tensors");
  std::vector<Ref> xs;
  for (const Value& e : *l) {
    auto t = std::get_if<TensorRef>(&e.v);
    if (!t) fail("cat expects a list of tensors");
    xs.push_back(tensorRef(t->node));
  }
  int64_t dim = intArg(1, "dim", "dim", 0);
  std::optional<int64_t> rank = rankOf(xs[0].operand, true);
  if (!rank) return false;
  dim = normDim(dim, *rank, "dim");
  // A piece of size 0 along dim adds nothing (vLLM's rotary concatenates an
  // empty "pass" part); dropped here, it cannot seed products over empty
  // pieces (zeros) that sums would then repeat without end.
  std::vector<Ref> kept;
  for (const Ref& x : xs) {
    const TensorType* t = typeOf(x.operand);
    bool empty = t && t->rank() == *rank && !isSymbolic(t->shape[dim]) && t->shape[dim] == 0;
    if (!empty) kept.push_back(x);
  }
  if (!kept.empty() && kept.size() < xs.size()) xs = std::move(kept);
  if (xs.size() == 1) alias(xs[0].operand);
  else emit("concat", {Attr::integer(dim)}, std::move(xs));
  return true;
}

// native_layer_norm(x, normalized_shape, w, b, eps); None w/b are 1 and 0.
bool Canon::layerNorm() {
  if (overload != "default") return false;
  Ref x = tensorRef(tensorArg(0, "input", "input"));
  auto ns = intsArg(1, "normalized_shape", "normalized_shape", true);
  if (!ns) return false;
  const Value* w = arg(2, "weight");
  const Value* b = arg(3, "bias");
  Ref wr = isNone(w) ? scalarRef(1.0) : tensorRef(tensorArg(2, "weight", "weight"));
  Ref br = isNone(b) ? scalarRef(0.0) : tensorRef(tensorArg(3, "bias", "bias"));
  double eps = numberArg(4, "eps", "eps", 1e-5);
  emit("native_layer_norm", {Attr::ints(*ns), Attr::real(eps)}, {x, wr, br});
  return true;
}

bool Canon::softmax(bool halfToFloatArg) {
  NodeId x = tensorArg(0, "self", "self");
  int64_t dim = intArg(1, "dim", "dim");
  bool h2f = false;
  if (halfToFloatArg) {
    if (overload != "default") return false;
    h2f = boolArg(2, "half_to_float", "half_to_float", false);
  } else {
    if (overload != "int" || dtypeArg(2, "dtype")) return false;
  }
  auto rank = rankOf(x, true);
  if (!rank) return false;
  dim = normDim(dim, *rank, "dim");
  emit("softmax", {Attr::integer(dim), Attr::boolean(h2f)}, {tensorRef(x)});
  return true;
}

// sum/mean(x, dims, keepdim, dtype) and amax(x, dims, keepdim).
bool Canon::reduce(std::string_view op, bool hasDims) {
  NodeId x = tensorArg(0, "self", "self");
  auto rank = rankOf(x, false);
  std::vector<int64_t> dims;
  bool keep = false;
  std::optional<DType> dt;
  if (hasDims) {
    auto d = intsArg(1, "dim", "dim", false);
    if (d) dims = *d;
    else if (!isNone(arg(1, "dim"))) fail("dim must be a list of integers");
    keep = boolArg(2, "keepdim", "keepdim", false);
    if (op != "amax") dt = dtypeArg(3, "dtype");
  } else {
    dt = dtypeArg(1, "dtype");
  }
  if (!dims.empty()) {
    if (!rank) return false;
    for (int64_t& d : dims) d = normDim(d, *rank, "dim");
    std::sort(dims.begin(), dims.end());
    dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  } else if (rank) {
    for (int64_t i = 0; i < *rank; ++i) dims.push_back(i);  // all dims, explicitly
  }
  Ref in = tensorRef(x);
  if (dt) in = emit("cast", {Attr::str(dtypeName(*dt))}, {in});
  emit(op, {Attr::ints(dims), Attr::boolean(keep)}, {in});
  return true;
}

bool Canon::expand() {
  if (overload != "default") return false;
  NodeId x = tensorArg(0, "self", "self");
  const TensorType* in = typeOf(x);
  std::optional<std::vector<int64_t>> shape;
  if (selfType()) {
    shape = selfType()->shape;
  } else if (in) {
    shape = intsArg(1, "size", "size", true);
    if (!shape || shape->size() < in->shape.size()) return false;
    size_t lead = shape->size() - in->shape.size();
    for (size_t i = 0; i < shape->size(); ++i)
      if ((*shape)[i] == -1) {
        if (i < lead) fail("expand: -1 in a new leading dim");
        (*shape)[i] = in->shape[i - lead];
      }
  }
  if (!shape) return false;
  if (in && in->shape == *shape) alias(x);
  else emit("expand", {Attr::ints(*shape)}, {tensorRef(x)});
  return true;
}

// split_with_sizes(x, sizes, dim) / split.Tensor(x, split_size, dim) -> split[dim, [sizes]]
bool Canon::split(bool sizesGiven) {
  NodeId x = tensorArg(0, "self", "self");
  const TensorType* in = typeOf(x);
  int64_t dim = intArg(2, "dim", "dim", 0);
  auto rank = rankOf(x, false);
  if (!rank) return false;
  dim = normDim(dim, *rank, "dim");
  std::vector<int64_t> sizes;
  if (sizesGiven) {
    if (overload != "default") return false;
    auto s = intsArg(1, "split_sizes", "split_sizes", true);
    if (!s) return false;
    sizes = *s;
  } else {
    if (overload != "Tensor") return false;
    int64_t chunk = intArg(1, "split_size", "split_size");
    if (!in || isSymbolic(in->shape[dim])) return false;
    if (chunk <= 0) fail("split_size must be positive");
    for (int64_t off = 0; off < in->shape[dim]; off += chunk) sizes.push_back(std::min(chunk, in->shape[dim] - off));
    if (sizes.empty()) sizes.push_back(0);
  }
  emit("split", {Attr::integer(dim), Attr::ints(sizes)}, {tensorRef(x)});
  return true;
}

// _to_copy / to: identity unless the dtype changes (device/layout do not
// change values).
bool Canon::toCopy() {
  NodeId x = tensorArg(0, "self", "self");
  std::optional<DType> to = dtypeArg(SIZE_MAX, "dtype");
  if (!to)  // to.dtype(x, dtype, ...) / to.device(x, device, dtype, ...)
    for (size_t i = 1; i < n.args.size() && !to; ++i)
      if (auto p = std::get_if<DType>(&n.args[i].v)) to = *p;
  const TensorType* in = typeOf(x);
  if (!to && selfType() && in && selfType()->dtype != in->dtype) to = selfType()->dtype;
  if (!to || *to == DType::Unknown || (in && in->dtype == *to)) alias(x);
  else emit("cast", {Attr::str(dtypeName(*to))}, {tensorRef(x)});
  return true;
}

// copy(dst, src): the values of src, in dst's dtype and shape.
bool Canon::copy() {
  if (overload != "default") return false;
  NodeId dst = tensorArg(0, "self", "self");
  NodeId src = tensorArg(1, "src", "src");
  const TensorType* d = typeOf(dst);
  const TensorType* s = typeOf(src);
  if (!d || !s || d->shape != s->shape) return false;
  if (d->dtype == s->dtype) alias(src);
  else emit("cast", {Attr::str(dtypeName(d->dtype))}, {tensorRef(src)});
  return true;
}

bool Canon::known() {
  using H = std::function<bool(Canon&)>;
  static const std::unordered_map<std::string_view, H> handlers = [] {
    std::unordered_map<std::string_view, H> m;
    static const char* const kBinary[][2] = {{"aten.add", "add"}, {"aten.sub", "sub"}, {"aten.mul", "mul"},
                                             {"aten.div", "div"}};
    for (const auto& [aten, op] : kBinary) {
      const char* o = op;
      m.emplace(aten, [o](Canon& c) { return c.binary(o); });
    }
    m.emplace("aten.rsub", [](Canon& c) { return c.rsub(); });
    m.emplace("aten.mm", [](Canon& c) {
      if (c.overload != "default") return false;
      c.emit("mm", {}, {tensorRef(c.tensorArg(0, "self", "self")), tensorRef(c.tensorArg(1, "mat2", "mat2"))});
      return true;
    });
    m.emplace("aten.bmm", [](Canon& c) {
      if (c.overload != "default") return false;
      c.emit("bmm", {}, {tensorRef(c.tensorArg(0, "self", "self")), tensorRef(c.tensorArg(1, "mat2", "mat2"))});
      return true;
    });
    m.emplace("aten.matmul", [](Canon& c) {
      if (c.overload != "default") return false;
      c.emit("matmul", {}, {tensorRef(c.tensorArg(0, "self", "self")), tensorRef(c.tensorArg(1, "other", "other"))});
      return true;
    });
    m.emplace("aten.addmm", [](Canon& c) { return c.addmm("mm"); });
    m.emplace("aten.baddbmm", [](Canon& c) { return c.addmm("bmm"); });
    m.emplace("aten.gelu", [](Canon& c) { return c.unary("gelu"); });
    // Ops whose record lists ATen names lowered one-to-one.
    for (const ops::OpDef* def : ops::allOps()) {
      std::string_view names = def->aten;
      while (!names.empty()) {
        size_t end = names.find(' ');
        std::string_view aten = names.substr(0, end);
        names = end == std::string_view::npos ? std::string_view() : names.substr(end + 1);
        if (aten.empty()) continue;
        const char* op = def->name;
        m.emplace(aten, [op](Canon& c) { return c.direct(op); });
      }
    }
    m.emplace("aten.pow", [](Canon& c) {
      if (c.overload != "Tensor_Scalar") return false;
      Ref x = tensorRef(c.tensorArg(0, "self", "self"));
      double e = c.numberArg(1, "exponent", "exponent", std::nan(""));
      if (std::isnan(e)) c.fail("missing exponent");
      c.emit("pow_scalar", {Attr::real(e)}, {x});
      return true;
    });
    m.emplace("aten.t", [](Canon& c) { return c.overload == "default" && c.t(); });
    m.emplace("aten.transpose", [](Canon& c) { return c.transpose(); });
    m.emplace("aten.permute", [](Canon& c) { return c.permute(); });
    for (const char* op : {"aten.view", "aten.reshape", "aten._unsafe_view", "aten.unsqueeze", "aten.squeeze",
                           "aten.flatten"})
      m.emplace(op, [](Canon& c) { return c.reshapeLike(); });
    m.emplace("aten.slice", [](Canon& c) { return c.slice(); });
    m.emplace("aten.cat", [](Canon& c) { return c.cat(); });
    m.emplace("aten.native_layer_norm", [](Canon& c) { return c.layerNorm(); });
    // apex.fused_layer_norm_affine_fwd(x, w, b, normalized_shape, eps)
    m.emplace("apex.fused_layer_norm_affine_fwd", [](Canon& c) {
      if (c.overload != "default") return false;
      Ref x = tensorRef(c.tensorArg(0, "input", "input"));
      Ref w = tensorRef(c.tensorArg(1, "weight", "weight"));
      Ref b = tensorRef(c.tensorArg(2, "bias", "bias"));
      auto ns = c.intsArg(3, "normalized_shape", "normalized_shape", true);
      if (!ns) return false;
      double eps = c.numberArg(4, "eps", "eps", 1e-5);
      c.emit("apex_layer_norm", {Attr::ints(*ns), Attr::real(eps)}, {x, w, b});
      return true;
    });
    m.emplace("aten.native_dropout", [](Canon& c) {
      if (c.overload != "default") return false;
      Ref x = tensorRef(c.tensorArg(0, "input", "input"));
      double p = c.numberArg(1, "p", "p", 0.5);
      bool train = c.boolArg(2, "train", "train", true);
      c.emit("dropout", {Attr::real(p), Attr::boolean(train)}, {x});
      return true;
    });
    m.emplace("aten._softmax", [](Canon& c) { return c.softmax(true); });
    m.emplace("aten.softmax", [](Canon& c) { return c.softmax(false); });
    // _safe_softmax(x, dim, dtype): softmax with all -inf rows giving 0 (sdpa's math path)
    m.emplace("aten._safe_softmax", [](Canon& c) {
      if (c.overload != "default") return false;
      NodeId x = c.tensorArg(0, "self", "self");
      int64_t dim = c.intArg(1, "dim", "dim");
      auto rank = c.rankOf(x, true);
      if (!rank) return false;
      dim = c.normDim(dim, *rank, "dim");
      Ref in = tensorRef(x);
      if (auto dt = c.dtypeArg(2, "dtype")) in = c.emit("cast", {Attr::str(dtypeName(*dt))}, {in});
      c.emit("safe_softmax", {Attr::integer(dim), Attr::boolean(false)}, {in});
      return true;
    });
    m.emplace("aten.sum", [](Canon& c) {
      if (c.overload == "dim_IntList") return c.reduce("sum_dim", true);
      return c.overload == "default" && c.reduce("sum_dim", false);
    });
    m.emplace("aten.mean", [](Canon& c) {
      if (c.overload == "dim") return c.reduce("mean_dim", true);
      return c.overload == "default" && c.reduce("mean_dim", false);
    });
    m.emplace("aten.amax", [](Canon& c) { return c.overload == "default" && c.reduce("amax", true); });
    m.emplace("aten.expand", [](Canon& c) { return c.expand(); });
    m.emplace("aten.split_with_sizes", [](Canon& c) { return c.split(true); });
    m.emplace("aten.split", [](Canon& c) { return c.split(false); });
    for (const char* op : {"aten.clone", "aten.detach", "aten.alias", "aten.contiguous", "aten.lift_fresh_copy",
                           "tg.log_tensor", "tg.inplace_log_tensor", "_c10d_functional.wait_tensor"})
      m.emplace(op, [](Canon& c) {
        c.alias(c.tensorArg(0, nullptr, "the tensor argument"));
        return true;
      });
    m.emplace("aten._to_copy", [](Canon& c) { return c.toCopy(); });
    m.emplace("aten.to", [](Canon& c) { return c.toCopy(); });
    m.emplace("aten.copy", [](Canon& c) { return c.copy(); });
    m.emplace("aten.clamp", [](Canon& c) { return c.clamp(); });
    return m;
  }();
  auto it = handlers.find(base);
  return it != handlers.end() && it->second(*this);
}

void Canon::run() {
  if (touchesComplex()) {
    if (!complexOp()) opaque();
    return;
  }
  if (known()) return;
  out = CanonTerm{};
  if (canonicalizeHloOp(g, id, out)) return;
  if (canonicalizeModelOp(g, id, base, overload, out)) return;
  out = CanonTerm{};
  if (canonicalizeMaskOp(g, id, base, overload, out)) return;
  out = CanonTerm{};
  if (canonicalizeGradOp(g, id, base, overload, out)) return;
  out = CanonTerm{};
  if (!canonicalizeOptimOp(g, id, base, overload, out)) opaque();
}

}  // namespace

CanonTerm canonicalize(const Graph& g, NodeId id) {
  Canon c(g, id);
  c.run();
  return std::move(c.out);
}

}  // namespace tangle
