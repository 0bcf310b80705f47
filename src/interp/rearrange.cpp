// Rearrangements as gathers, the n-ary elementwise combinations (sum, rmax,
// rmin), tuples (split, getitem).
#include <algorithm>
#include <numeric>

#include "interp/detail.h"
#include "support/dims.h"

namespace tangle::interp {

namespace detail {

std::optional<std::vector<const Tensor*>> tensors(const Inputs& in, int n) {
  if (n >= 0 ? static_cast<int>(in.size()) != n : in.empty()) return std::nullopt;
  std::vector<const Tensor*> out;
  for (const Value& v : in) {
    const Tensor* t = v.tensor();
    if (!t) return std::nullopt;
    out.push_back(t);
  }
  return out;
}

std::vector<int64_t> viewOffsets(const Shape& shape, const std::vector<int64_t>& strides, int64_t base) {
  int64_t n = numelOf(shape);
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(std::max<int64_t>(n, 0)));
  if (n <= 0) return out;
  std::vector<int64_t> idx(shape.size(), 0);
  int64_t off = base;
  for (int64_t i = 0; i < n; ++i) {
    out.push_back(off);
    for (size_t k = shape.size(); k-- > 0;) {  // odometer increment
      if (++idx[k] < shape[k]) {
        off += strides[k];
        break;
      }
      off -= strides[k] * (shape[k] - 1);
      idx[k] = 0;
    }
  }
  return out;
}

std::optional<std::vector<int64_t>> broadcastStrides(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return std::nullopt;
  std::vector<int64_t> st(to.size(), 0);
  std::vector<int64_t> fs = stridesOf(from);
  size_t lead = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i) {
    if (from[i] == to[lead + i]) st[lead + i] = from[i] == 1 ? 0 : fs[i];
    else if (from[i] != 1) return std::nullopt;
  }
  return st;
}

std::optional<Shape> broadcast(const Shape& a, const Shape& b) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i + a.size() >= n ? a[i + a.size() - n] : 1;
    int64_t db = i + b.size() >= n ? b[i + b.size() - n] : 1;
    if (da == db || db == 1) out[i] = da;
    else if (da == 1) out[i] = db;
    else return std::nullopt;
  }
  return out;
}

}  // namespace detail

namespace {
using namespace detail;

// A single-input rearrangement as a strided view of its input: element i of
// the result is element `offsets[i]` of the input, where the offsets are
// those viewOffsets(shape, strides, base) lists.
struct View {
  Shape shape;
  std::vector<int64_t> strides;
  int64_t base = 0;
};

Gather gatherOf(const View& v) {
  Gather g;
  g.shape = v.shape;
  g.offset = viewOffsets(v.shape, v.strides, v.base);
  g.child.assign(g.offset.size(), 0);
  return g;
}

// The view's elements of x, copied (a contiguous view as one block).
Tensor copyView(const View& v, const Tensor& x) {
  Tensor out;
  out.shape = v.shape;
  int64_t n = numelOf(v.shape);
  if (n <= 0) return out;
  if (v.strides == stridesOf(v.shape)) {
    out.data.assign(x.data.begin() + v.base, x.data.begin() + v.base + n);
    return out;
  }
  out.data.resize(static_cast<size_t>(n));
  std::array<std::vector<int64_t>, 1> st{v.strides};
  stridedLoop<1>(v.shape, st, {v.base}, [&](int64_t i, const std::array<int64_t, 1>& o) {
    out.data[static_cast<size_t>(i)] = x.data[static_cast<size_t>(o[0])];
  });
  return out;
}

// slice[dim, start, end, step] x (end clamped to the size, as canon does).
std::optional<View> sliceOf(const eg::AttrList& a, const Shape& x) {
  auto dim = eg::attrInt(a, 0), start = eg::attrInt(a, 1), end = eg::attrInt(a, 2), step = eg::attrInt(a, 3);
  if (a.size() != 4 || !dim || !start || !end || !step) return std::nullopt;
  auto d = normDim(*dim, static_cast<int64_t>(x.size()));
  if (!d || *step < 1 || *start < 0 || *end < *start) return std::nullopt;
  int64_t e = std::min(*end, x[*d]);
  int64_t s = std::min(*start, e);
  Shape out = x;
  out[*d] = (e - s + *step - 1) / *step;
  std::vector<int64_t> st = stridesOf(x);
  int64_t base = s * st[*d];
  st[*d] *= *step;
  return View{out, st, base};
}

// The result shape of concat[dim] over inputs of shapes xs, and its dim.
std::optional<std::pair<Shape, int64_t>> concatShape(const eg::AttrList& a, const std::vector<Shape>& xs) {
  auto dim = eg::attrInt(a, 0);
  if (a.size() != 1 || !dim || xs.empty()) return std::nullopt;
  auto d = normDim(*dim, static_cast<int64_t>(xs[0].size()));
  if (!d) return std::nullopt;
  Shape out = xs[0];
  out[*d] = 0;
  for (const Shape& x : xs) {
    if (x.size() != out.size()) return std::nullopt;
    for (size_t k = 0; k < x.size(); ++k)
      if (static_cast<int64_t>(k) != *d && x[k] != out[k]) return std::nullopt;
    out[*d] += x[*d];
  }
  return std::make_pair(out, *d);
}

// Elements after the concat dim (one row of it) and the number of outer rows.
std::pair<int64_t, int64_t> concatBlocks(const Shape& out, int64_t d) {
  return {numelOf(Shape(out.begin(), out.begin() + d)), numelOf(Shape(out.begin() + d + 1, out.end()))};
}

std::optional<Gather> concatOf(const eg::AttrList& a, const std::vector<Shape>& xs) {
  auto sd = concatShape(a, xs);
  if (!sd) return std::nullopt;
  auto [out, d] = *sd;
  auto [outer, inner] = concatBlocks(out, d);
  Gather g;
  g.shape = out;
  for (int64_t o = 0; o < outer; ++o)
    for (uint32_t i = 0; i < xs.size(); ++i) {
      int64_t block = xs[i][d] * inner;
      for (int64_t k = 0; k < block; ++k) {
        g.child.push_back(i);
        g.offset.push_back(o * block + k);
      }
    }
  return g;
}

// concat on values: the gather above as block copies.
Result concatValues(const eg::AttrList& a, const Inputs& in) {
  auto xs = tensors(in, -1);
  if (!xs) return std::nullopt;
  std::vector<Shape> shapes;
  for (const Tensor* t : *xs) shapes.push_back(t->shape);
  auto sd = concatShape(a, shapes);
  if (!sd) return std::nullopt;
  auto [shape, d] = *sd;
  auto [outer, inner] = concatBlocks(shape, d);
  Tensor out;
  out.shape = shape;
  out.data.reserve(static_cast<size_t>(numelOf(shape)));
  for (int64_t o = 0; o < outer; ++o)
    for (size_t i = 0; i < xs->size(); ++i) {
      int64_t block = shapes[i][d] * inner;
      auto from = (*xs)[i]->data.begin() + o * block;
      out.data.insert(out.data.end(), from, from + block);
    }
  return Value::of(std::move(out));
}

std::optional<View> permuteOf(const std::vector<int64_t>& p, const Shape& x) {
  if (p.size() != x.size()) return std::nullopt;
  std::vector<bool> seen(p.size(), false);
  std::vector<int64_t> st = stridesOf(x), outSt(p.size());
  Shape out(p.size());
  for (size_t i = 0; i < p.size(); ++i) {
    auto d = normDim(p[i], static_cast<int64_t>(x.size()));
    if (!d || seen[*d]) return std::nullopt;
    seen[*d] = true;
    out[i] = x[*d];
    outSt[i] = st[*d];
  }
  return View{out, outSt, 0};
}

std::optional<View> transposeOf(const eg::AttrList& a, const Shape& x) {
  auto d0 = eg::attrInt(a, 0), d1 = eg::attrInt(a, 1);
  int64_t r = static_cast<int64_t>(x.size());
  if (a.size() != 2 || !d0 || !d1) return std::nullopt;
  // A 0-d tensor transposes with dims 0/-1 as itself (ATen wraps dims to rank 1).
  auto n0 = normDim(*d0, std::max<int64_t>(r, 1)), n1 = normDim(*d1, std::max<int64_t>(r, 1));
  if (!n0 || !n1) return std::nullopt;
  if (r == 0) return View{{}, {}, 0};
  return permuteOf(transposePerm(*n0, *n1, r), x);
}

std::optional<View> reshapeOf(const eg::AttrList& a, const Shape& x) {
  const auto* s = eg::attrInts(a, 0);
  if (a.size() != 1 || !s) return std::nullopt;
  Shape out = *s;
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1 && infer < 0) infer = static_cast<int64_t>(i);
    else if (out[i] < 0) return std::nullopt;
    else known *= out[i];
  }
  int64_t n = numelOf(x);
  if (infer >= 0) {
    if (known == 0 || n % known) return std::nullopt;
    out[infer] = n / known;
  }
  if (numelOf(out) != n) return std::nullopt;
  return View{out, stridesOf(out), 0};  // row-major order is kept
}

std::optional<View> expandOf(const eg::AttrList& a, const Shape& x) {
  const auto* s = eg::attrInts(a, 0);
  if (a.size() != 1 || !s || s->size() < x.size()) return std::nullopt;
  Shape out = *s;
  size_t lead = out.size() - x.size();
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1 && i >= lead) out[i] = x[i - lead];  // -1 keeps the size
    if (out[i] < 0) return std::nullopt;
  }
  auto st = broadcastStrides(x, out);
  if (!st) return std::nullopt;
  return View{out, *st, 0};
}

// sum / rmax / rmin x1 ... xn: elementwise over same-shape tensors.
template <class F>
Result combine(const Inputs& in, F f) {
  auto xs = tensors(in, -1);
  if (!xs) return std::nullopt;
  Tensor out = *(*xs)[0];
  for (size_t i = 1; i < xs->size(); ++i) {
    if ((*xs)[i]->shape != out.shape) return std::nullopt;
    for (size_t k = 0; k < out.data.size(); ++k) out.data[k] = f(out.data[k], (*xs)[i]->data[k]);
  }
  return Value::of(std::move(out));
}

Result splitOf(const eg::AttrList& a, const Inputs& in) {
  auto xs = tensors(in, 1);
  auto dim = eg::attrInt(a, 0);
  const auto* sizes = eg::attrInts(a, 1);
  if (!xs || a.size() != 2 || !dim || !sizes || sizes->empty()) return std::nullopt;
  const Tensor& x = *(*xs)[0];
  auto d = normDim(*dim, x.rank());
  if (!d) return std::nullopt;
  int64_t total = 0;
  for (int64_t s : *sizes) {
    if (s < 0) return std::nullopt;
    total += s;
  }
  if (total != x.shape[*d]) return std::nullopt;
  std::vector<Tensor> parts;
  int64_t off = 0;
  for (int64_t s : *sizes) {
    auto g = sliceOf({eg::Attr::integer(*d), eg::Attr::integer(off), eg::Attr::integer(off + s), eg::Attr::integer(1)},
                         x.shape);
    if (!g) return std::nullopt;
    parts.push_back(copyView(*g, x));
    off += s;
  }
  return Value::tupleOf(std::move(parts));
}

}  // namespace


namespace kernels {

namespace {
using ViewFn = std::optional<View> (*)(const eg::AttrList&, const Shape&);
// A single-input view as a gather (for symbolic evaluation).
std::optional<Gather> one(ViewFn f, const eg::AttrList& a, const std::vector<Shape>& xs) {
  if (xs.size() != 1) return std::nullopt;
  auto v = f(a, xs[0]);
  if (!v) return std::nullopt;
  return gatherOf(*v);
}
// A single-input view applied to a value: a strided copy, no offsets list.
Result viewed(ViewFn f, const eg::AttrList& a, const Inputs& in) {
  auto xs = detail::tensors(in, 1);
  if (!xs) return std::nullopt;
  auto v = f(a, (*xs)[0]->shape);
  if (!v) return std::nullopt;
  return Value::of(copyView(*v, *(*xs)[0]));
}
std::optional<View> permuteAttr(const eg::AttrList& a, const Shape& x) {
  const auto* p = eg::attrInts(a, 0);
  if (a.size() != 1 || !p) return std::nullopt;
  return permuteOf(*p, x);
}
}  // namespace

std::optional<Gather> sliceGather(const eg::AttrList& a, const std::vector<Shape>& xs) { return one(sliceOf, a, xs); }
std::optional<Gather> concatGather(const eg::AttrList& a, const std::vector<Shape>& xs) { return concatOf(a, xs); }
std::optional<Gather> transposeGather(const eg::AttrList& a, const std::vector<Shape>& xs) { return one(transposeOf, a, xs); }
std::optional<Gather> permuteGather(const eg::AttrList& a, const std::vector<Shape>& xs) { return one(permuteAttr, a, xs); }
std::optional<Gather> reshapeGather(const eg::AttrList& a, const std::vector<Shape>& xs) { return one(reshapeOf, a, xs); }
std::optional<Gather> expandGather(const eg::AttrList& a, const std::vector<Shape>& xs) { return one(expandOf, a, xs); }

Result slice(const eg::AttrList& a, const Inputs& in) { return viewed(sliceOf, a, in); }
Result concat(const eg::AttrList& a, const Inputs& in) { return concatValues(a, in); }
Result transpose(const eg::AttrList& a, const Inputs& in) { return viewed(transposeOf, a, in); }
Result permute(const eg::AttrList& a, const Inputs& in) { return viewed(permuteAttr, a, in); }
Result reshape(const eg::AttrList& a, const Inputs& in) { return viewed(reshapeOf, a, in); }
Result expand(const eg::AttrList& a, const Inputs& in) { return viewed(expandOf, a, in); }

Result sum(const eg::AttrList& a, const Inputs& in) {
  return a.empty() ? combine(in, [](double x, double y) { return x + y; }) : std::nullopt;
}
Result rmax(const eg::AttrList&, const Inputs& in) { return combine(in, [](double x, double y) { return std::max(x, y); }); }
Result rmin(const eg::AttrList&, const Inputs& in) { return combine(in, [](double x, double y) { return std::min(x, y); }); }
Result split(const eg::AttrList& a, const Inputs& in) { return splitOf(a, in); }
Result getitem(const eg::AttrList& a, const Inputs& in) {
  auto i = eg::attrInt(a, 0);
  if (in.size() != 1 || a.size() != 1 || !i || !in[0].tuple || *i < 0 || *i >= static_cast<int64_t>(in[0].items.size()))
    return std::nullopt;
  return Value::of(in[0].items[*i]);
}

}  // namespace kernels
}  // namespace tangle::interp
