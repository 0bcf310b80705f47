// The operator registry over the records of op_table.cpp, custom (lemma
// file) operators, and the interned symbols.
#include "ops/ops.h"

#include <sstream>
#include <unordered_map>

#include "ops/op_table.h"

namespace tangle::ops {

namespace {

struct Registry {
  std::vector<const OpDef*> all;
  std::unordered_map<eg::Symbol, const OpDef*> bySymbol;
  Registry() {
    for (const OpDef& op : opTable()) {
      all.push_back(&op);
      bySymbol.emplace(eg::intern(op.name), &op);
    }
  }
};
const Registry& registry() {
  static const Registry r;
  return r;
}

struct Custom {
  std::unordered_map<eg::Symbol, CustomInfer> infer;
  std::unordered_map<eg::Symbol, CustomEval> eval;
};
Custom& customs() {
  static Custom c;
  return c;
}

bool fitsKind(const eg::Attr& a, const std::string& kind) {
  using K = eg::Attr::Kind;
  if (kind == "int") return a.kind == K::Int;
  if (kind == "dim") return a.kind == K::Int || a.kind == K::SymDim;
  if (kind == "ints") return a.kind == K::IntList;
  if (kind == "real") return a.kind == K::Float;
  if (kind == "number") return a.kind == K::Int || a.kind == K::Float || a.kind == K::Bool;
  if (kind == "bool") return a.kind == K::Bool || (a.kind == K::Int && (a.i == 0 || a.i == 1));
  if (kind == "str") return a.kind == K::Str;
  return false;
}
}  // namespace

const std::vector<const OpDef*>& allOps() { return registry().all; }

const OpDef* find(eg::Symbol op) {
  const auto& m = registry().bySymbol;
  auto it = m.find(op);
  return it == m.end() ? nullptr : it->second;
}

std::vector<AttrSpec> attrSchema(const OpDef& op) {
  std::vector<AttrSpec> out;
  std::istringstream in(op.attrs);
  std::string word;
  while (in >> word) {
    AttrSpec s;
    size_t colon = word.find(':');
    s.name = word.substr(0, colon);
    s.kind = colon == std::string::npos ? "" : word.substr(colon + 1);
    if (!s.kind.empty() && s.kind.back() == '?') {
      s.optional = true;
      s.kind.pop_back();
    }
    out.push_back(std::move(s));
  }
  return out;
}

bool fitsSchema(const OpDef& op, const eg::AttrList& a) {
  std::vector<AttrSpec> schema = attrSchema(op);
  if (a.size() > schema.size()) return false;
  for (size_t i = 0; i < schema.size(); ++i) {
    if (i >= a.size()) return schema[i].optional;
    if (!fitsKind(a[i], schema[i].kind)) return false;
  }
  return true;
}

void registerCustomOp(eg::Symbol op, CustomInfer infer) { customs().infer[op] = std::move(infer); }
void registerCustomEval(eg::Symbol op, CustomEval eval) { customs().eval[op] = std::move(eval); }
bool isCustomOp(eg::Symbol op) { return customs().infer.count(op) != 0; }

std::optional<eg::ClassData> inferData(const eg::EGraph& g, const eg::ENode& n) {
  if (const OpDef* def = find(n.op)) return def->type(g, n);
  if (auto& custom = customs().infer; !custom.empty())
    if (auto it = custom.find(n.op); it != custom.end()) return it->second(g, n);
  return eg::ClassData{};  // opaque: typed by the lowering, never refused
}

std::optional<eg::Id> identityChild(const eg::EGraph& g, const eg::ENode& n) {
  if (n.children.size() != 1) return std::nullopt;
  const Syms& s = syms();
  if (n.op != s.reshape && n.op != s.transpose && n.op != s.permute && n.op != s.concat) return std::nullopt;
  eg::Id x = n.children[0];
  const TensorType* t = g.data(x).tensor();
  if (!t) return std::nullopt;
  const eg::AttrList& a = eg::attrs(n.attrs);
  auto rank = static_cast<int64_t>(t->shape.size());
  auto validDim = [&](const eg::Attr& d) { return d.kind == eg::Attr::Kind::Int && d.i >= 0 && d.i < rank; };
  if (n.op == s.reshape)
    return a.size() == 1 && a[0].kind == eg::Attr::Kind::IntList && a[0].list == t->shape ? std::optional(x)
                                                                                           : std::nullopt;
  if (n.op == s.transpose)
    return a.size() == 2 && validDim(a[0]) && a[1] == a[0] ? std::optional(x) : std::nullopt;
  if (n.op == s.concat) return a.size() == 1 && validDim(a[0]) ? std::optional(x) : std::nullopt;
  // permute
  if (a.size() != 1 || a[0].kind != eg::Attr::Kind::IntList || static_cast<int64_t>(a[0].list.size()) != rank)
    return std::nullopt;
  for (int64_t i = 0; i < rank; ++i)
    if (a[0].list[static_cast<size_t>(i)] != i) return std::nullopt;
  return x;
}

std::optional<interp::Value> evaluate(const eg::ENode& n, const std::vector<interp::Value>& children) {
  if (children.size() != n.children.size()) return std::nullopt;
  if (const OpDef* def = find(n.op)) {
    if (!def->eval) return std::nullopt;
    return def->eval(eg::attrs(n.attrs), children);
  }
  if (auto it = customs().eval.find(n.op); it != customs().eval.end()) return it->second(n, children);
  return std::nullopt;
}

bool hasKernel(eg::Symbol op) {
  const OpDef* def = find(op);
  return def ? def->eval != nullptr : customs().eval.count(op) != 0;
}

bool isGatherOp(eg::Symbol op) {
  const OpDef* def = find(op);
  return def && def->gather;
}

std::optional<interp::Gather> gatherOf(const eg::ENode& n, const std::vector<interp::Shape>& childShapes) {
  const OpDef* def = find(n.op);
  if (!def || !def->gather) return std::nullopt;
  return def->gather(eg::attrs(n.attrs), childShapes);
}

const std::string* tensorName(eg::Symbol op, eg::AttrsId attrs) {
  if (op != syms().tensor) return nullptr;
  const auto& a = eg::attrs(attrs);
  if (a.empty() || a[0].kind != eg::Attr::Kind::Str) return nullptr;
  return &eg::symbolName(static_cast<eg::Symbol>(a[0].i));
}

std::optional<Owner> tensorOwner(eg::Symbol op, eg::AttrsId attrs) {
  if (op != syms().tensor) return std::nullopt;
  const auto& a = eg::attrs(attrs);
  if (a.size() != 2 || a[1].kind != eg::Attr::Kind::Int) return std::nullopt;
  return Owner{static_cast<int32_t>(a[1].i)};
}

eg::AttrsId tensorAttrs(std::string_view name, Owner owner) { return tensorAttrs(eg::intern(name), owner); }

namespace {
// The two attributes of a tensor leaf, at `out`.
void leafAttrList(eg::Symbol name, Owner owner, eg::Attr* out) {
  out[0] = eg::Attr{};
  out[0].kind = eg::Attr::Kind::Str;
  out[0].i = name;
  out[1] = eg::Attr::integer(owner.rank);
}
}  // namespace

eg::AttrsId tensorAttrs(eg::Symbol name, Owner owner) {
  eg::Attr a[2];
  leafAttrList(name, owner, a);
  return eg::internAttrs(a, 2);  // no list is allocated unless it is new
}

void tensorAttrsAll(std::span<const eg::Symbol> names, std::span<const Owner> owners, eg::AttrsId* out) {
  constexpr size_t kChunk = 1024;  // leaves a batch: the lists are built in one small buffer
  std::vector<eg::Attr> flat(2 * std::min(kChunk, names.size()));
  for (size_t begin = 0; begin < names.size(); begin += kChunk) {
    const size_t count = std::min(kChunk, names.size() - begin);
    for (size_t k = 0; k < count; ++k) leafAttrList(names[begin + k], owners[begin + k], &flat[2 * k]);
    eg::internAttrsAll(std::span<const eg::Attr>(flat.data(), 2 * count), 2, out + begin);
  }
}

bool isCleanNode(const eg::ENode& n) {
  if (n.op == syms().tensor) {  // implementation tensors are clean, spec tensors are not
    auto owner = tensorOwner(n);
    return owner && !owner->isSpec();
  }
  const OpDef* def = find(n.op);
  return def && def->clean;
}

std::optional<eg::Id> addSplat(eg::EGraph& g, DType dt, const std::vector<int64_t>& shape, double v) {
  const Syms& y = syms();
  eg::Id c = g.add(eg::ENode{y.constant, eg::internAttrs({eg::Attr::real(v)}), {}});
  if (dt != DType::Unknown) {
    auto typed = g.tryAdd(eg::ENode{y.cast, eg::internAttrs({eg::Attr::str(dtypeName(dt))}), {c}});
    if (!typed) return std::nullopt;
    c = *typed;
  }
  if (shape.empty()) return c;
  return g.tryAdd(eg::ENode{y.expand, eg::internAttrs({eg::Attr::ints(shape)}), {c}});
}

const Syms& syms() {
  static const Syms s = [] {
    // Every name must be a record: a typo here would silently make an opaque op.
    auto op = [](const char* name) {
      eg::Symbol sym = eg::intern(name);
      if (!find(sym)) std::abort();
      return sym;
    };
    Syms y;
    y.tensor = op("tensor"), y.constant = op("const"), y.slice = op("slice"), y.concat = op("concat");
    y.transpose = op("transpose"), y.permute = op("permute"), y.reshape = op("reshape"), y.sum = op("sum");
    y.getitem = op("getitem"), y.split = op("split"), y.expand = op("expand");
    y.add = op("add"), y.sub = op("sub"), y.mul = op("mul"), y.div = op("div"), y.neg = op("neg"), y.exp = op("exp");
    y.log = op("log"), y.gelu = op("gelu"), y.silu = op("silu"), y.relu = op("relu"), y.tanh = op("tanh");
    y.sigmoid = op("sigmoid"), y.logSigmoid = op("log_sigmoid"), y.rsqrt = op("rsqrt"), y.sqrt = op("sqrt"), y.powScalar = op("pow_scalar");
    y.cast = op("cast"), y.mm = op("mm"), y.bmm = op("bmm"), y.matmul = op("matmul");
    y.sumDim = op("sum_dim"), y.meanDim = op("mean_dim"), y.amax = op("amax"), y.softmax = op("softmax");
    y.layerNorm = op("native_layer_norm"), y.apexLayerNorm = op("apex_layer_norm");
    y.dropout = op("dropout"), y.where = op("where"), y.lt = op("lt"), y.le = op("le"), y.gt = op("gt");
    y.ge = op("ge"), y.eq = op("eq"), y.ne = op("ne"), y.logicalOr = op("or"), y.logicalAnd = op("and");
    y.indexRows = op("index_rows"), y.gatherRows = op("gather_rows"), y.maxDim = op("max_dim");
    y.geluBackward = op("gelu_backward"), y.rmsNorm = op("rms_norm"), y.rotary = op("rotary");
    y.attention = op("attention"), y.apexLayerNormBwd = op("apex_layer_norm_bwd"), y.rmax = op("rmax");
    y.rmin = op("rmin"), y.sdpa = op("sdpa"), y.sdpaBackward = op("sdpa_backward");
    y.safeSoftmax = op("safe_softmax");
    return y;
  }();
  return s;
}

}  // namespace tangle::ops
