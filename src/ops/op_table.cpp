// The operator records: one line per canonical operator. A record names its
// attribute schema, cleanliness, type rule (infer_*.cpp), reference kernel
// (src/interp), attribute sampler (samplers.cpp) and the ATen ops lowered to
// it one-to-one. tests/ops/op_table_test.cpp checks every record against
// its parts (schema, sampler, kernel and type rule agree on random inputs).
#include <cmath>

#include "ops/infer.h"
#include "ops/op_table.h"
#include "ops/samplers.h"

namespace tangle::ops {

namespace {
using namespace detail;
namespace k = interp::kernels;
namespace s = samplers;

// clang-format off
const OpDef kOps[] = {
  // name        attribute schema                          clean  type rule        kernel         gather              sampler         ATen
  // leaves
  {"tensor",     "name:str owner:int",                          false, inferTensorLeaf, nullptr,       nullptr,            nullptr,        ""},  // clean iff an implementation tensor
  {"const",      "value:number",                           false, inferConst,      k::constant,   nullptr,            s::constant,    ""},
  // clean rearrangements and the cross-rank combines
  {"slice",      "dim:int start:dim end:dim step:int",     true,  inferSlice,      k::slice,      k::sliceGather,     s::slice,       ""},
  {"concat",     "dim:int",                                true,  inferConcat,     k::concat,     k::concatGather,    s::dim,         ""},
  {"transpose",  "dim0:int dim1:int",                      true,  inferTranspose,  k::transpose,  k::transposeGather, s::dim,         ""},
  {"permute",    "perm:ints",                              true,  inferPermute,    k::permute,    k::permuteGather,   s::permute,     ""},
  {"reshape",    "shape:ints",                             true,  inferReshape,    k::reshape,    k::reshapeGather,   s::reshape,     ""},
  {"sum",        "",                                       true,  inferSum,        k::sum,        nullptr,            nullptr,        ""},
  {"rmax",       "",                                       true,  inferCrossRank,  k::rmax,       nullptr,            nullptr,        ""},  // all_reduce max
  {"rmin",       "",                                       true,  inferCrossRank,  k::rmin,       nullptr,            nullptr,        ""},  // all_reduce min
  // tuples and broadcast
  {"getitem",    "index:int",                              false, inferGetitem,    k::getitem,    nullptr,            s::getitem,     ""},
  {"split",      "dim:int sizes:ints",                     false, inferSplit,      k::split,      nullptr,            s::split,       ""},
  {"expand",     "sizes:ints",                             false, inferExpand,     k::expand,     k::expandGather,    s::expand,      ""},
  // elementwise
  {"add",        "",                                       false, inferBinary,     k::add,        nullptr,            nullptr,        ""},
  {"sub",        "",                                       false, inferBinary,     k::sub,        nullptr,            nullptr,        ""},
  {"mul",        "",                                       false, inferBinary,     k::mul,        nullptr,            nullptr,        ""},
  {"div",        "",                                       false, inferBinary,     k::div,        nullptr,            nullptr,        ""},
  {"neg",        "",                                       false, inferUnary,      k::neg,        nullptr,            nullptr,        "aten.neg"},
  {"exp",        "",                                       false, inferUnary,      k::exp,        nullptr,            nullptr,        "aten.exp"},
  {"log",        "",                                       false, inferUnary,      k::log,        nullptr,            nullptr,        "aten.log"},
  {"gelu",       "approximate:str?",                       false, inferUnary,      k::gelu,       nullptr,            s::approximate, ""},
  {"silu",       "",                                       false, inferUnary,      k::silu,       nullptr,            nullptr,        "aten.silu"},
  {"relu",       "",                                       false, inferUnary,      k::relu,       nullptr,            nullptr,        "aten.relu"},
  {"tanh",       "",                                       false, inferUnary,      k::tanh,       nullptr,            nullptr,        "aten.tanh"},
  {"sigmoid",    "",                                       false, inferUnary,      k::sigmoid,    nullptr,            nullptr,        "aten.sigmoid"},
  {"log_sigmoid", "",                                      false, inferPairOfInput, k::logSigmoid, nullptr,           nullptr,        "aten.log_sigmoid_forward"},  // x -> (log sigmoid x, exp(-|x|)): ATen's CPU pair
  {"rsqrt",      "",                                       false, inferUnary,      k::rsqrt,      nullptr,            nullptr,        "aten.rsqrt"},
  {"sqrt",       "",                                       false, inferUnary,      k::sqrt,       nullptr,            nullptr,        "aten.sqrt"},
  {"abs",        "",                                       false, inferUnary,      k::unary<+[](double x) { return std::fabs(x); }>, nullptr, nullptr, "aten.abs"},
  {"pow_scalar", "exponent:number",                        false, inferUnary,      k::powScalar,  nullptr,            s::exponent,    ""},
  {"cast",       "dtype:str",                              false, inferCast,       k::cast,       nullptr,            s::dtype,       ""},
  // products
  {"mm",         "",                                       false, inferMm,         k::mm,         nullptr,            nullptr,        ""},
  {"bmm",        "",                                       false, inferBmm,        k::bmm,        nullptr,            nullptr,        ""},
  {"matmul",     "",                                       false, inferMatmul,     k::matmul,     nullptr,            nullptr,        ""},
  // reductions and normalizations
  {"sum_dim",    "dims:ints keepdim:bool",                 false, inferReduce,     k::sumDim,     nullptr,            s::reduce,      ""},  // [] = all dims
  {"mean_dim",   "dims:ints keepdim:bool",                 false, inferReduce,     k::meanDim,    nullptr,            s::reduce,      ""},
  {"amax",       "dims:ints keepdim:bool",                 false, inferReduce,     k::amax,       nullptr,            s::reduce,      ""},
  {"softmax",    "dim:int half_to_float:bool",             false, inferSoftmax,    k::softmax,    nullptr,            s::softmax,     ""},
  {"safe_softmax", "dim:int half_to_float:bool",            false, inferSoftmax,    k::safeSoftmax, nullptr,           s::softmax,     ""},  // all -inf row -> 0
  {"native_layer_norm", "normalized_shape:ints eps:number", false, inferLayerNorm, k::layerNorm,  nullptr,            s::layerNorm,   ""},  // x w b -> (y, mean, rstd)
  {"apex_layer_norm",   "normalized_shape:ints eps:number", false, inferLayerNorm, k::apexLayerNorm, nullptr,         s::layerNorm,   ""},  // stats flattened to [n1]
  // model-level ops
  {"dropout",    "p:number train:bool",                    false, inferDropout,    k::dropout,    nullptr,            s::dropout,     ""},  // x -> (out, mask); see lemmas/model.cpp
  {"where",      "",                                       false, inferWhere,      k::where,      nullptr,            nullptr,        ""},  // where c a b
  {"lt",         "",                                       false, inferCompare,    k::lt,         nullptr,            nullptr,        ""},
  {"le",         "",                                       false, inferCompare,    k::le,         nullptr,            nullptr,        ""},
  {"gt",         "",                                       false, inferCompare,    k::gt,         nullptr,            nullptr,        ""},
  {"ge",         "",                                       false, inferCompare,    k::ge,         nullptr,            nullptr,        ""},
  {"eq",         "",                                       false, inferCompare,    k::eq,         nullptr,            nullptr,        ""},
  {"ne",         "",                                       false, inferCompare,    k::ne,         nullptr,            nullptr,        ""},
  {"or",         "",                                       false, inferCompare,    k::logicalOr,  nullptr,            nullptr,        ""},
  {"and",        "",                                       false, inferCompare,    k::logicalAnd, nullptr,            nullptr,        ""},
  {"index_rows", "",                                       false, inferIndexRows,  k::indexRows,  nullptr,            nullptr,        ""},  // w[idx] (embedding)
  {"gather_rows", "",                                      false, inferGatherRows, k::gatherRows, nullptr,            nullptr,        ""},  // x[arange(N), idx]
  {"max_dim",    "dim:int keepdim:bool",                   false, inferMaxDim,     k::maxDim,     nullptr,            s::maxDim,      ""},  // x -> (values, indices)
  {"gelu_backward", "approximate:str?",                    false, inferGeluBackward, k::geluBackward, nullptr,        s::approximate, ""},  // grad x
  {"rms_norm",   "eps:number",                             false, inferRmsNorm,    k::rmsNorm,    nullptr,            s::epsilon,     ""},  // x w, over the last dim
  {"rotary",     "head_size:int neox:bool",                false, inferRotary,     k::rotary,     nullptr,            s::rotary,      ""},  // positions x cos_sin_cache
  {"attention",  "layer:int",                              false, inferAttention,  k::attention,  nullptr,            s::layer,       ""},  // q k v: causal GQA (vLLM)
  {"sdpa",       "causal:bool scale:number",               false, inferSdpa,       k::sdpa,       nullptr,            s::sdpa,        ""},  // q k v mask -> (out, lse); CPU flash attention
  {"sdpa_backward", "causal:bool scale:number",            false, inferSdpaBackward, k::sdpaBackward, nullptr,        s::sdpa,        ""},  // dO q k v out lse mask -> (dq, dk, dv)
  {"apex_layer_norm_bwd", "normalized_shape:ints eps:number", false, inferApexLayerNormBwd, k::apexLayerNormBwd, nullptr, s::layerNormBwd, ""},  // (grad, mean, invvar, x, w, b) -> (dx, dw, db)
  // training graphs (src/lower/canon_grad.cpp writes the backward ATen calls with these)
  {"one_hot",    "classes:int",                            false, inferOneHot,     k::oneHot,     nullptr,            s::classes,     ""},  // idx -> i64 [..., classes]
  // causal masks (tril(ones(n, n)), torchtitan's sdpa path; lowered in src/lower/canon_grad.cpp)
  {"tril",       "diagonal:int",                           false, inferTril,       k::tril,       nullptr,            s::dim,         ""},  // x: zero above the diagonal
  // mixture-of-experts routing
  {"topk",       "dim:int k:int largest:bool",             false, inferTopk,       k::topk,       nullptr,            s::topk,        ""},  // x -> (values, indices), sorted
  // HF's attention-mask construction (lowered in src/lower/canon_mask.cpp)
  {"arange",     "start:dim end:dim step:int",             false, inferArange,     k::arange,     nullptr,            s::arange,      ""},  // () -> i64 [n]
  {"cumsum",     "dim:int",                                false, inferCumsum,     k::cumsum,     nullptr,            s::dim,         ""},  // bool/int -> i64
  {"index_nd",   "",                                       false, inferIndexNd,    k::indexNd,    nullptr,            nullptr,        ""},  // x[i_0, .., i_k-1], broadcast indices
  // rotary tables computed in the program (XLA HLO cosine / sine of the positions)
  {"cos",        "",                                       false, inferUnary,      k::unary<+[](double x) { return std::cos(x); }>, nullptr, nullptr, "aten.cos"},
  {"sin",        "",                                       false, inferUnary,      k::unary<+[](double x) { return std::sin(x); }>, nullptr, nullptr, "aten.sin"},
};
// clang-format on
}  // namespace

std::span<const OpDef> opTable() { return kOps; }

}  // namespace tangle::ops
