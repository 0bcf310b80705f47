#include "lower/fsdp.h"

#include <optional>
#include <set>
#include <string>
#include <unordered_map>

#include "support/error.h"

namespace tangle {

namespace {

const std::string kCopyIn = "fsdp.all_gather_copy_in.default";
const std::string kSplitCopy = "fsdp.split_with_sizes_copy.default";
const std::string kChunkCat = "fsdp.chunk_cat.default";
const std::string kAllGather = "c10d._allgather_base_.default";
const std::string kReduceScatter = "c10d._reduce_scatter_base_.default";
const std::string kView = "aten.view.default";
const std::string kAsStrided = "aten.as_strided.default";
const std::string kCatOut = "aten.cat.out";  // Shard(d != 0): the all-gathered chunks laid out along d
const std::string kEmptyLike = "aten.empty_like.default";
const std::string kForeachCopy = "aten._foreach_copy_.default";  // mixed precision: shards cast into pieces
const std::string kSplit = "aten.split_with_sizes.default";
const std::string kToCopy = "aten._to_copy.default";

bool isEmpty(const Node& n) { return n.op.rfind("aten.empty", 0) == 0; }

bool isFsdpOp(const std::string& op) {
  return op == kCopyIn || op == kSplitCopy || op == kChunkCat || op == kAllGather || op == kReduceScatter;
}

InputError fsdpError(const Node& n, const std::string& what) {
  return InputError(n.loc, "node '" + n.name + "' (" + n.op + "): " + what);
}

NodeId tensorAt(const Node& n, const Value& v, const char* what) {
  if (auto* r = std::get_if<TensorRef>(&v.v)) return r->node;
  throw fsdpError(n, std::string("expected a tensor as ") + what);
}

const Value& argAt(const Node& n, size_t i, const char* what) {
  if (i < n.args.size()) return n.args[i];
  throw fsdpError(n, std::string("missing ") + what + " (argument " + std::to_string(i) + ")");
}

int64_t intAt(const Node& n, size_t i, const char* what) {
  if (auto* v = std::get_if<int64_t>(&argAt(n, i, what).v)) return *v;
  throw fsdpError(n, std::string("expected an integer ") + what + " as argument " + std::to_string(i));
}

std::vector<int64_t> intsOf(const Node& n, const Value& v, const char* what) {
  std::vector<int64_t> out;
  auto* list = std::get_if<ValueList>(&v.v);
  if (!list) throw fsdpError(n, std::string("expected a list of integers as ") + what);
  for (const Value& x : *list) {
    auto* i = std::get_if<int64_t>(&x.v);
    if (!i) throw fsdpError(n, std::string("expected a list of integers as ") + what);
    out.push_back(*i);
  }
  return out;
}

// The n-th string argument: c10d ops carry their group (and reduce op) as strings (tangle.fsdp).
std::string stringAt(const Node& n, int k, const char* what) {
  for (const Value& v : n.args)
    if (auto* s = std::get_if<std::string>(&v.v))
      if (k-- == 0) return *s;
  throw fsdpError(n, std::string("expected the ") + what + " as a string (capture it with tangle.fsdp)");
}

int64_t numel(const std::vector<Dim>& shape) {
  int64_t n = 1;
  for (Dim d : shape) n *= d;
  return n;
}

class Rewriter {
 public:
  explicit Rewriter(const Graph& g) : g_(g) {
    out_.path = g.path;
    const size_t n = g.size();
    base_.resize(n);
    version_.assign(n, 0);
    sub_.assign(n, std::nullopt);
    written_.assign(n, false);
    ver_.assign(n, 0);
    partial_.assign(n, false);
    std::unordered_map<std::string, NodeId> attrs;  // repeated reads of one self.<attr> share its storage
    for (NodeId id = 0; id < static_cast<NodeId>(n); ++id) {
      const Node& node = g.node(id);
      auto* target = node.op == "get_attr" && !node.args.empty() ? std::get_if<std::string>(&node.args[0].v) : nullptr;
      base_[static_cast<size_t>(id)] = target ? attrs.try_emplace(*target, id).first->second : findBase(id);
    }
    for (NodeId id = 0; id < static_cast<NodeId>(n); ++id)
      for (NodeId t : targets(id)) written_[static_cast<size_t>(base_[static_cast<size_t>(t)])] = true;
  }

  Graph run() {
    for (NodeId id = 0; id < static_cast<NodeId>(g_.size()); ++id) {
      const Node& n = g_.node(id);
      NodeId b = base_[static_cast<size_t>(id)];
      bool unfilled = ver_[static_cast<size_t>(b)] == 0 || partial_[static_cast<size_t>(b)];
      if (b != id && n.op != "getitem" && unfilled && (written_[static_cast<size_t>(b)] || isEmpty(g_.node(b))))
        ;  // a view of a buffer not filled yet (an out= target): no value; reading it is refused in read()
      else if (n.op == "get_attr" && b != id) sub_[static_cast<size_t>(id)] = sub_[static_cast<size_t>(b)];
      else if (n.op == kCopyIn) copyIn(id);
      else if (n.op == kAllGather || n.op == kReduceScatter) collective(id);
      else if (n.op == kSplitCopy) splitCopy(id);
      else if (n.op == kChunkCat) chunkCat(id);
      else if (n.op == kCatOut) catOut(id);
      else if (n.op == kEmptyLike) emptyLike(id);
      else if (n.op == kForeachCopy) foreachCopy(id);
      else if (freshPieces(id)) continue;  // each piece its own buffer, filled by a later copy
      else if (n.op == "getitem" && items_.count(tupleOf(n))) item(id);
      else if (n.op == kAsStrided) asStrided(id);
      else if (n.op == "output") continue;
      else copy(id);
      version_[static_cast<size_t>(id)] = ver_[static_cast<size_t>(base_[static_cast<size_t>(id)])];
    }
    for (const Value& v : g_.outputs) out_.outputs.push_back(remap(v, g_.size(), g_.nodes.back()));
    return std::move(out_);
  }

 private:
  const Graph& g_;
  Graph out_;
  std::vector<NodeId> base_;                  // old node -> old node owning its storage
  std::vector<int> version_;                  // the base's write count when the node was defined
  std::vector<std::optional<NodeId>> sub_;    // old node -> new node holding its value (none: no tensor)
  std::vector<bool> written_;                 // bases some FSDP op writes
  std::vector<int> ver_;                      // base -> writes so far
  std::vector<bool> partial_;                 // base -> only part of it written so far
  std::unordered_map<NodeId, std::vector<std::optional<NodeId>>> items_;  // rewritten tuple -> its items

  NodeId tupleOf(const Node& n) const {
    return n.args.empty() ? -1 : (n.args[0].isTensor() ? std::get<TensorRef>(n.args[0].v).node : -1);
  }

  // Storage owner: through views and the buffers FSDP's ops return.
  NodeId findBase(NodeId id) const {
    const Node& n = g_.node(id);
    if ((n.op == kView || n.op == kAsStrided || n.op == "aten.slice.Tensor") && !n.args.empty() && n.args[0].isTensor())
      return base_[static_cast<size_t>(std::get<TensorRef>(n.args[0].v).node)];
    if (n.op == "getitem" && n.args.size() == 2) {
      NodeId t = tupleOf(n);
      auto* i = std::get_if<int64_t>(&n.args[1].v);
      if (t >= 0 && i) {
        const Node& tn = g_.node(t);
        // item 0 (this rank's slot) keeps its value: the all-gather writes the same data there
        if (tn.op == kCopyIn && *i == 1 && tn.args.size() > 1 && tn.args[1].isTensor())
          return base_[static_cast<size_t>(std::get<TensorRef>(tn.args[1].v).node)];
        if ((tn.op == kAllGather || tn.op == kReduceScatter) && *i == 0 && !tn.args.empty() && tn.args[0].isTensor())
          return base_[static_cast<size_t>(std::get<TensorRef>(tn.args[0].v).node)];
      }
    }
    return id;
  }

  // The buffers an FSDP op writes.
  std::vector<NodeId> targets(NodeId id) const {
    const Node& n = g_.node(id);
    std::vector<NodeId> out;
    auto add = [&](const Value& v) {
      if (v.isTensor()) out.push_back(std::get<TensorRef>(v.v).node);
      if (auto* l = std::get_if<ValueList>(&v.v))
        for (const Value& x : *l)
          if (x.isTensor()) out.push_back(std::get<TensorRef>(x.v).node);
    };
    if ((n.op == kAllGather || n.op == kReduceScatter) && !n.args.empty()) add(n.args[0]);
    if (n.op == kCopyIn && n.args.size() > 1) add(n.args[1]);
    if (n.op == kForeachCopy && !n.args.empty()) add(n.args[0]);
    if (n.op == kSplitCopy || n.op == kChunkCat || n.op == kCatOut)
      if (const Value* o = n.kwarg("out")) add(*o);
    return out;
  }

  const TensorType& typeOf(NodeId old, const Node& at) const {
    const Node& m = g_.node(old);
    if (!m.type) throw fsdpError(at, "operand '" + m.name + "' has no type annotation");
    for (Dim d : m.type->shape)
      if (isSymbolic(d)) throw fsdpError(at, "operand '" + m.name + "' has a symbolic shape");
    return *m.type;
  }

  // The new value of `m` read at `at`: refuses stale, partly written and unwritten buffers.
  NodeId read(NodeId m, const Node& at) {
    const Node& mn = g_.node(m);
    NodeId b = base_[static_cast<size_t>(m)];
    const Node& bn = g_.node(b);
    auto why = [&](const std::string& s) { return fsdpError(at, "reads '" + mn.name + "', " + s); };
    if (m != b && version_[static_cast<size_t>(m)] != ver_[static_cast<size_t>(b)])
      throw why("a view of buffer '" + bn.name + "' made before a later write into it (stale)");
    if (partial_[static_cast<size_t>(b)]) throw why("whose buffer '" + bn.name + "' is only partly written");
    if (ver_[static_cast<size_t>(b)] == 0 && (written_[static_cast<size_t>(b)] || isEmpty(bn) || freshPieces(b)))
      throw why("whose buffer '" + bn.name + "' is read before anything writes it");
    if (!sub_[static_cast<size_t>(m)]) throw why("which has no tensor value");
    return *sub_[static_cast<size_t>(m)];
  }

  Value remap(const Value& v, NodeId, const Node& at) {
    if (auto* r = std::get_if<TensorRef>(&v.v)) return TensorRef{read(r->node, at)};
    if (auto* l = std::get_if<ValueList>(&v.v)) {
      ValueList out;
      for (const Value& x : *l) out.push_back(remap(x, 0, at));
      return out;
    }
    return v;
  }

  // A new node; named `keep` (the old node it replaces, so relations and expectations that name
  // the old node still find it) or else a fresh name no old or new node has.
  NodeId emit(const Node& at, const std::string& op, std::vector<Value> args, TensorType type,
              const std::string& keep = "") {
    Node n;
    std::string stem = at.name + "_fsdp";
    n.name = keep.empty() || out_.find(keep) ? stem : keep;
    for (int k = 1; n.name != keep && (out_.find(n.name) || g_.find(n.name)); ++k) n.name = stem + std::to_string(k);
    n.op = op;
    n.args = std::move(args);
    n.type = std::move(type);
    n.loc = at.loc;
    return out_.add(std::move(n));
  }

  const TensorType& newType(NodeId id) const {
    const Node& n = out_.node(id);
    if (!n.type) throw InputError(n.loc, "node '" + n.name + "' (" + n.op + ") has no type annotation; FSDP's buffer ops need one");
    return *n.type;
  }

  NodeId reshape(const Node& at, NodeId x, const std::vector<Dim>& shape, const std::string& keep = "") {
    if (newType(x).shape == shape) return x;
    if (numel(newType(x).shape) != numel(shape)) throw fsdpError(at, "sizes do not match its buffer's");
    ValueList dims(shape.begin(), shape.end());
    return emit(at, kView, {TensorRef{x}, dims}, TensorType{newType(x).dtype, shape}, keep);
  }

  NodeId slice(const Node& at, NodeId x, int64_t dim, int64_t start, int64_t end, const std::string& keep = "") {
    TensorType t = newType(x);
    if (start < 0 || end > t.shape[static_cast<size_t>(dim)] || start > end)
      throw fsdpError(at, "a piece [" + std::to_string(start) + ", " + std::to_string(end) + ") out of bounds");
    t.shape[static_cast<size_t>(dim)] = end - start;
    return emit(at, "aten.slice.Tensor", {TensorRef{x}, dim, start, end}, t, keep);
  }

  // `value` (any shape of the buffer's numel) becomes the whole content of the buffer behind `target`.
  void write(NodeId target, NodeId value, const Node& at) {
    NodeId b = base_[static_cast<size_t>(target)];
    const TensorType& bt = typeOf(b, at);
    if (numel(typeOf(target, at).shape) != numel(bt.shape))
      throw fsdpError(at, "writes '" + g_.node(target).name + "', only part of its buffer '" + g_.node(b).name + "'");
    // a copy into a buffer of another float dtype converts (FSDP's mixed precision casts there):
    // a cast of the value. Any other conversion (to or from an integer or bool) is refused.
    DType from = newType(value).dtype;
    if (from != bt.dtype && from != DType::Unknown && bt.dtype != DType::Unknown) {
      if (!isFloating(from) || !isFloating(bt.dtype))
        throw fsdpError(at, std::string("writes a ") + dtypeName(from) + " value into the " + dtypeName(bt.dtype) +
                                " buffer '" + g_.node(b).name + "': only a conversion between float dtypes is supported");
      TensorType t = newType(value);
      t.dtype = bt.dtype;
      value = emit(at, kToCopy, {TensorRef{value}}, t);
      out_.nodes[static_cast<size_t>(value)].kwargs.push_back({"dtype", Value(bt.dtype)});
    }
    sub_[static_cast<size_t>(b)] = reshape(at, value, bt.shape);
    ++ver_[static_cast<size_t>(b)];
    partial_[static_cast<size_t>(b)] = false;
  }

  void copy(NodeId id) {
    Node n = g_.node(id);
    for (Value& v : n.args) v = remap(v, 0, g_.node(id));
    for (auto& kv : n.kwargs) kv.second = remap(kv.second, 0, g_.node(id));
    sub_[static_cast<size_t>(id)] = out_.add(std::move(n));
  }

  void item(NodeId id) {
    const Node& n = g_.node(id);
    auto& items = items_.at(tupleOf(n));
    auto i = std::get_if<int64_t>(&n.args[1].v);
    if (!i || *i < 0 || *i >= static_cast<int64_t>(items.size())) throw fsdpError(n, "index out of range");
    sub_[static_cast<size_t>(id)] = items[static_cast<size_t>(*i)];
  }

  // all_gather_copy_in(shards, buf, sizes, n, rank): item 0 = the shards flattened end to end;
  // the buffer holds them at [rank*n, (rank+1)*n) only (read it after the all-gather).
  void copyIn(NodeId id) {
    const Node& n = g_.node(id);
    auto* list = std::get_if<ValueList>(&argAt(n, 0, "shards").v);
    if (!list) throw fsdpError(n, "expected a list of shards as argument 0");
    std::vector<int64_t> sizes = intsOf(n, argAt(n, 2, "sizes"), "the sizes");
    int64_t total = intAt(n, 3, "total size");
    if (sizes.size() != list->size()) throw fsdpError(n, "one size per shard expected");
    ValueList flats;
    int64_t sum = 0;
    DType dt = DType::Unknown;
    for (size_t k = 0; k < list->size(); ++k) {
      NodeId x = read(tensorAt(n, (*list)[k], "a shard"), n);
      dt = newType(x).dtype;
      if (numel(newType(x).shape) != sizes[k]) throw fsdpError(n, "shard " + std::to_string(k) + " has not its size");
      flats.push_back(TensorRef{reshape(n, x, {sizes[k]})});
      sum += sizes[k];
    }
    if (sum != total) throw fsdpError(n, "the shard sizes do not add up to " + std::to_string(total));
    NodeId cat = emit(n, "aten.cat.default", {flats, int64_t{0}}, TensorType{dt, {total}});
    NodeId buf = tensorAt(n, argAt(n, 1, "buffer"), "the buffer");
    NodeId b = base_[static_cast<size_t>(buf)];
    ++ver_[static_cast<size_t>(b)];
    partial_[static_cast<size_t>(b)] = true;
    sub_[static_cast<size_t>(b)] = std::nullopt;
    items_[id] = {cat, std::nullopt};
  }

  // _allgather_base_(out, in, group) / _reduce_scatter_base_(out, in, group, op): the functional
  // collective over the flattened input; `out` is its whole buffer.
  void collective(NodeId id) {
    const Node& n = g_.node(id);
    bool gather = n.op == kAllGather;
    NodeId outBuf = tensorAt(n, argAt(n, 0, "output"), "the output");
    NodeId in = read(tensorAt(n, argAt(n, 1, "input"), "the input"), n);
    std::string group = stringAt(n, 0, "process group name");
    int64_t inN = numel(newType(in).shape), outN = numel(typeOf(outBuf, n).shape);
    int64_t big = gather ? outN : inN, small = gather ? inN : outN;
    if (small == 0 || big % small != 0) throw fsdpError(n, "output and input sizes do not fit a group");
    int64_t ranks = big / small;
    DType dt = newType(in).dtype;
    NodeId flat = reshape(n, in, {inN});
    NodeId c;
    if (gather) {
      c = emit(n, "_c10d_functional.all_gather_into_tensor.default", {TensorRef{flat}, ranks, group},
               TensorType{dt, {outN}});
    } else {
      std::string op = stringAt(n, 1, "reduce op");
      if (op != "sum" && op != "avg") throw fsdpError(n, "reduce op '" + op + "' is not supported (sum, avg)");
      c = emit(n, "_c10d_functional.reduce_scatter_tensor.default", {TensorRef{flat}, op, ranks, group},
               TensorType{dt, {outN}});
    }
    NodeId w = emit(n, "_c10d_functional.wait_tensor.default", {TensorRef{c}}, TensorType{dt, {outN}});
    write(outBuf, w, n);
    items_[id] = {sub_[static_cast<size_t>(base_[static_cast<size_t>(outBuf)])], std::nullopt};
  }

  std::vector<NodeId> outTargets(const Node& n) {
    const Value* o = n.kwarg("out");
    if (!o) throw fsdpError(n, "expected out=");
    std::vector<NodeId> out;
    if (o->isTensor()) out.push_back(std::get<TensorRef>(o->v).node);
    else if (auto* l = std::get_if<ValueList>(&o->v))
      for (const Value& x : *l) out.push_back(tensorAt(n, x, "an out= buffer"));
    return out;
  }

  // split_with_sizes_copy(x, sizes, dim, out=[...]): out[k] = the k-th piece of x along dim.
  void splitCopy(NodeId id) {
    const Node& n = g_.node(id);
    NodeId x = read(tensorAt(n, argAt(n, 0, "input"), "the input"), n);
    std::vector<int64_t> sizes = intsOf(n, argAt(n, 1, "sizes"), "the sizes");
    int64_t dim = intAt(n, 2, "dim");
    std::vector<NodeId> outs = outTargets(n);
    if (dim < 0) dim += newType(x).rank();
    if (dim < 0 || dim >= newType(x).rank() || outs.size() != sizes.size())
      throw fsdpError(n, "dim or out= list does not fit the input");
    int64_t off = 0;
    for (size_t k = 0; k < sizes.size(); ++k) {
      NodeId piece = slice(n, x, dim, off, off + sizes[k]);
      off += sizes[k];
      if (newType(piece).shape != typeOf(outs[k], n).shape)
        throw fsdpError(n, "piece " + std::to_string(k) + " does not have the shape of its out= buffer");
      write(outs[k], piece, n);
    }
    if (off != newType(x).shape[static_cast<size_t>(dim)]) throw fsdpError(n, "the sizes do not cover the input");
  }

  // chunk_cat(ts, 0, N, out=o): o[i] = chunk i (ceil(rows/N) rows, zero padded) of every t, flattened, side by side.
  void chunkCat(NodeId id) {
    const Node& n = g_.node(id);
    auto* list = std::get_if<ValueList>(&argAt(n, 0, "tensors").v);
    if (!list || list->empty()) throw fsdpError(n, "expected a list of tensors as argument 0");
    if (intAt(n, 1, "dim") != 0) throw fsdpError(n, "chunk_cat along a dim other than 0 is not supported");
    int64_t chunks = intAt(n, 2, "number of chunks");
    if (chunks <= 0) throw fsdpError(n, "needs a positive number of chunks");
    ValueList rows;
    int64_t width = 0;
    DType dt = DType::Unknown;
    for (const Value& v : *list) {
      NodeId t = read(tensorAt(n, v, "a tensor"), n);
      TensorType tt = newType(t);
      dt = tt.dtype;
      if (tt.shape.empty()) throw fsdpError(n, "cannot chunk a 0-d tensor");
      int64_t d0 = tt.shape[0], c = (d0 + chunks - 1) / chunks, extra = c * chunks - d0;
      if (extra > 0) {
        ValueList pad(2 * tt.shape.size(), Value(int64_t{0}));
        pad.back() = extra;  // pairs run from the last dim: the last pair pads dim 0 at its end
        tt.shape[0] += extra;
        t = emit(n, "aten.constant_pad_nd.default", {TensorRef{t}, pad, 0.0}, tt);
      }
      int64_t w = numel(tt.shape) / chunks;
      rows.push_back(TensorRef{reshape(n, t, {chunks, w})});
      width += w;
    }
    NodeId cat = emit(n, "aten.cat.default", {rows, int64_t{1}}, TensorType{dt, {chunks, width}});
    std::vector<NodeId> outs = outTargets(n);
    if (outs.size() != 1 || typeOf(outs[0], n).shape != newType(cat).shape)
      throw fsdpError(n, "out= is not one [" + std::to_string(chunks) + ", " + std::to_string(width) + "] buffer");
    write(outs[0], cat, n);
  }

  // cat.out(ts, dim, out=o): o = cat(ts, dim), the whole buffer behind o. FSDP's copy-out of a
  // Shard(dim) parameter: the all-gathered [ranks * rows, ...] temporary, chunked on dim 0, laid out
  // along dim in its all-gather buffer.
  void catOut(NodeId id) {
    const Node& n = g_.node(id);
    auto* list = std::get_if<ValueList>(&argAt(n, 0, "tensors").v);
    if (!list || list->empty()) throw fsdpError(n, "expected a list of tensors as argument 0");
    int64_t dim = n.args.size() > 1 ? intAt(n, 1, "dim") : 0;
    ValueList parts;
    std::optional<TensorType> cat;
    for (const Value& v : *list) {
      NodeId t = read(tensorAt(n, v, "a tensor"), n);
      const TensorType& tt = newType(t);
      if (!cat) {
        cat = tt;
        if (dim < 0) dim += tt.rank();
        if (dim < 0 || dim >= tt.rank()) throw fsdpError(n, "dim out of range");
      } else {
        bool fits = tt.rank() == cat->rank() && tt.dtype == cat->dtype;
        for (size_t k = 0; fits && k < tt.shape.size(); ++k) fits = k == static_cast<size_t>(dim) || tt.shape[k] == cat->shape[k];
        if (!fits) throw fsdpError(n, "the tensors do not fit together along dim " + std::to_string(dim));
        cat->shape[static_cast<size_t>(dim)] += tt.shape[static_cast<size_t>(dim)];
      }
      parts.push_back(TensorRef{t});
    }
    std::vector<NodeId> outs = outTargets(n);
    if (outs.size() != 1 || typeOf(outs[0], n).shape != cat->shape)
      throw fsdpError(n, "out= is not one buffer of the concatenation's shape");
    write(outs[0], emit(n, "aten.cat.default", {parts, dim}, *cat), n);
  }

  // empty_like(x): fresh memory of x's shape; x's value is not read (it may be a buffer not filled yet).
  void emptyLike(NodeId id) {
    const Node& n = g_.node(id);
    const TensorType& t = typeOf(id, n);
    sub_[static_cast<size_t>(id)] =
        emit(n, "aten.empty.memory_format", {ValueList(t.shape.begin(), t.shape.end())}, t);
  }

  // _foreach_copy_(dsts, srcs): each dst (the whole of its buffer) takes its src's values, cast to
  // its dtype when they differ (FSDP's MixedPrecisionPolicy casts each shard this way).
  void foreachCopy(NodeId id) {
    const Node& n = g_.node(id);
    auto* dsts = std::get_if<ValueList>(&argAt(n, 0, "destinations").v);
    auto* srcs = std::get_if<ValueList>(&argAt(n, 1, "sources").v);
    if (!dsts || !srcs || dsts->size() != srcs->size()) throw fsdpError(n, "expected two lists of one length");
    for (size_t k = 0; k < dsts->size(); ++k) {
      NodeId dst = tensorAt(n, (*dsts)[k], "a destination");
      NodeId src = read(tensorAt(n, (*srcs)[k], "a source"), n);
      if (numel(newType(src).shape) != numel(typeOf(dst, n).shape))
        throw fsdpError(n, "source " + std::to_string(k) + " does not have its destination's size");
      write(dst, src, n);
    }
  }

  // split_with_sizes of a fresh `empty` nothing else writes or reads, and the getitems of it: FSDP
  // (mixed precision) copies each shard into one piece. Each piece is then a buffer of its own
  // (base_ = itself), unfilled until written; the split and the whole buffer get no value, so a read
  // of the whole buffer stays refused.
  bool freshPieces(NodeId id) const {
    const Node& n = g_.node(id);
    NodeId x = n.op == "getitem" ? tupleOf(n) : id;
    if (x < 0 || g_.node(x).op != kSplit || g_.node(x).args.empty() || !g_.node(x).args[0].isTensor()) return false;
    NodeId buf = std::get<TensorRef>(g_.node(x).args[0].v).node;
    const Node& bn = g_.node(buf);
    return isEmpty(bn) && base_[static_cast<size_t>(buf)] == buf && !written_[static_cast<size_t>(buf)];
  }

  // as_strided(x, size, stride, offset) with contiguous strides: a flat slice of x, reshaped. The
  // last new node keeps the old name: FSDP's returned gradients are such views, and a relation's
  // `expect` names them as the dump does.
  void asStrided(NodeId id) {
    const Node& n = g_.node(id);
    NodeId x = read(tensorAt(n, argAt(n, 0, "input"), "the input"), n);
    std::vector<int64_t> size = intsOf(n, argAt(n, 1, "size"), "the size");
    std::vector<int64_t> stride = intsOf(n, argAt(n, 2, "stride"), "the stride");
    int64_t offset = n.args.size() > 3 ? intAt(n, 3, "offset") : 0;
    int64_t expect = 1;
    for (size_t k = size.size(); k-- > 0;) {
      if (size.size() != stride.size() || (size[k] != 1 && stride[k] != expect))
        throw fsdpError(n, "as_strided with non-contiguous strides is not supported");
      expect *= size[k];
    }
    NodeId flat = reshape(n, x, {numel(newType(x).shape)});
    std::vector<Dim> shape(size.begin(), size.end());
    bool flatPiece = shape == std::vector<Dim>{numel(size)};  // the slice is the view itself
    NodeId piece = slice(n, flat, 0, offset, offset + numel(size), flatPiece ? n.name : "");
    sub_[static_cast<size_t>(id)] = reshape(n, piece, shape, n.name);
  }
};

}  // namespace

bool hasFsdpBufferOps(const Graph& g) {
  for (const Node& n : g.nodes)
    if (isFsdpOp(n.op)) return true;
  return false;
}

void lowerFsdpBuffers(Graph& g) {
  if (!hasFsdpBufferOps(g)) return;
  g = Rewriter(g).run();
}

}  // namespace tangle
