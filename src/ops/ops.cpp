// The operator registry: name -> (clean?, inference rule).
#include "ops/ops.h"

#include <cctype>
#include <unordered_map>

#include "ops/infer.h"

namespace tangle::ops {

namespace {
using namespace detail;

// The canonical vocabulary. Attributes in brackets, children after.
constexpr OpInfo kOps[] = {
    // leaves
    {"tensor", false, inferTensorLeaf},   // tensor["S.x"]; clean iff an implementation tensor
    {"const", false, inferConst},         // const[v]
    // clean rearrangements and the cross-rank sum
    {"slice", true, inferSlice},          // slice[dim, start, end, step] x
    {"concat", true, inferConcat},        // concat[dim] x1 ... xn
    {"transpose", true, inferTranspose},  // transpose[d0, d1] x
    {"permute", true, inferPermute},      // permute[[p...]] x
    {"reshape", true, inferReshape},      // reshape[[shape...]] x
    {"sum", true, inferSum},              // sum x1 ... xn
    // tuples
    {"getitem", false, inferGetitem},     // getitem[i] t
    {"split", false, inferSplit},         // split[dim, [sizes]] x -> tuple of slices
    // broadcast
    {"expand", false, inferExpand},       // expand[[sizes]] x
    // elementwise
    {"add", false, inferBinary},
    {"sub", false, inferBinary},
    {"mul", false, inferBinary},
    {"div", false, inferBinary},
    {"neg", false, inferUnary},
    {"exp", false, inferUnary},
    {"log", false, inferUnary},
    {"gelu", false, inferUnary},          // gelu["none" | "tanh"] x
    {"silu", false, inferUnary},
    {"relu", false, inferUnary},
    {"tanh", false, inferUnary},
    {"sigmoid", false, inferUnary},
    {"rsqrt", false, inferUnary},
    {"sqrt", false, inferUnary},
    {"pow_scalar", false, inferUnary},    // pow_scalar[e] x = x ** e
    {"cast", false, inferCast},           // cast["f32"] x
    // products
    {"mm", false, inferMm},
    {"bmm", false, inferBmm},
    {"matmul", false, inferMatmul},
    // reductions and normalizations
    {"sum_dim", false, inferReduce},      // sum_dim[[dims], keepdim] x   ([] = all dims)
    {"mean_dim", false, inferReduce},     // mean_dim[[dims], keepdim] x
    {"amax", false, inferReduce},         // amax[[dims], keepdim] x
    {"softmax", false, inferSoftmax},     // softmax[dim, half_to_float] x
    {"native_layer_norm", false, inferLayerNorm},  // native_layer_norm[[shape], eps] x w b
    {"apex_layer_norm", false, inferLayerNorm},    // apex fused_layer_norm_affine_fwd: stats flattened to [n1]
    // model-level ops
    {"dropout", false, inferDropout},
    {"where", false, inferWhere},         // where c a b  (masked_fill, boolean-mask index_put)
    {"lt", false, inferCompare},
    {"le", false, inferCompare},
    {"gt", false, inferCompare},
    {"ge", false, inferCompare},
    {"eq", false, inferCompare},
    {"ne", false, inferCompare},
    {"or", false, inferCompare},
    {"and", false, inferCompare},
    {"index_rows", false, inferIndexRows},    // index_rows w idx = w[idx] (embedding)
    {"gather_rows", false, inferGatherRows},  // gather_rows x idx = x[arange(N), idx]
    {"max_dim", false, inferMaxDim},          // max_dim[d, keep] x -> (values, indices)
    {"gelu_backward", false, inferGeluBackward},         // gelu_backward[approx] grad x
    {"rms_norm", false, inferRmsNorm},                   // rms_norm[eps] x w (over the last dim)
    {"rotary", false, inferRotary},                      // rotary[head_size, neox] positions x cos_sin_cache
    {"attention", false, inferAttention},                // attention[layer] q k v: causal GQA (vLLM)
    {"apex_layer_norm_bwd", false, inferApexLayerNormBwd},  // (grad, mean, invvar, x, w, b) -> (dx, dw, db)
    // cross-rank combines of an all_reduce other than sum: clean like sum
    {"rmax", true, inferCrossRank},
    {"rmin", true, inferCrossRank},     // dropout[p, train] x -> (out, mask); see lemmas/model.cpp
};

struct Registry {
  std::unordered_map<eg::Symbol, const OpInfo*> bySymbol;
  Registry() {
    for (const OpInfo& op : kOps) bySymbol.emplace(eg::intern(op.name), &op);
  }
};
const Registry& registry() {
  static const Registry r;
  return r;
}

// "D<digits>.<name>"
bool isImplName(const std::string& s) {
  if (s.size() < 4 || s[0] != 'D') return false;
  size_t i = 1;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  return i > 1 && i + 1 < s.size() && s[i] == '.';
}
}  // namespace

static std::unordered_map<eg::Symbol, CustomInfer>& customOps() {
  static std::unordered_map<eg::Symbol, CustomInfer> m;
  return m;
}

void registerCustomOp(eg::Symbol op, CustomInfer infer) { customOps()[op] = std::move(infer); }
bool isCustomOp(eg::Symbol op) { return customOps().count(op) != 0; }

const OpInfo* find(eg::Symbol op) {
  const auto& m = registry().bySymbol;
  auto it = m.find(op);
  return it == m.end() ? nullptr : it->second;
}

std::optional<eg::ClassData> inferData(const eg::EGraph& g, const eg::ENode& n) {
  const OpInfo* info = find(n.op);
  if (!info) {
    if (auto& custom = customOps(); !custom.empty())
      if (auto it = custom.find(n.op); it != custom.end()) return it->second(g, n);
    return eg::ClassData{};  // opaque: typed by the lowering, never refused
  }
  return info->infer(g, n);
}

const std::string* tensorName(eg::Symbol op, eg::AttrsId attrs) {
  if (op != syms().tensor) return nullptr;
  const auto& a = eg::attrs(attrs);
  if (a.size() != 1 || a[0].kind != eg::Attr::Kind::Str) return nullptr;
  return &eg::symbolName(static_cast<eg::Symbol>(a[0].i));
}

bool isCleanNode(const eg::ENode& n) {
  if (const std::string* name = tensorName(n)) return isImplName(*name);
  const OpInfo* info = find(n.op);
  return info && info->clean;
}

const Syms& syms() {
  static const Syms s{eg::intern("tensor"),    eg::intern("const"),   eg::intern("slice"),
                      eg::intern("concat"),    eg::intern("transpose"), eg::intern("permute"),
                      eg::intern("reshape"),   eg::intern("sum"),     eg::intern("getitem")};
  return s;
}

}  // namespace tangle::ops
