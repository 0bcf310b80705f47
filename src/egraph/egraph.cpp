// E-graph core: node store + hashcons, union-find, deferred rebuild.
//
// Storage: every e-node ever added gets a NodeId into `nodes` (the hashcons
// key, kept exactly in sync with the hashcons: a node is re-keyed only after
// being erased). A node that became congruent to another during rebuild is
// marked dead and leaves the hashcons. Each class keeps the ids of its member
// nodes and of the nodes using it (parents); the public EClass (nodes,
// parents) is a canonical, deduplicated copy refreshed by rebuild for the
// classes the rebuild touched.
#include "egraph/egraph.h"

#include <algorithm>
#include <memory>
#include <stdexcept>

#include "egraph/node_index.h"
#include "sym/context.h"

namespace tangle::eg {

namespace {

using NodeId = uint32_t;

std::string dataToString(const ClassData& d) {
  std::string out;
  if (d.types.empty()) out = "unknown type";
  if (d.tuple) out += "(";
  for (size_t i = 0; i < d.types.size(); ++i) {
    if (i) out += ", ";
    out += toString(d.types[i]);
  }
  if (d.tuple) out += ")";
  if (d.constant) out += " = " + std::to_string(*d.constant);
  return out;
}

// Symbolic sizes that differ as expressions may still be provably equal
// (e.g. 2*(n//2) and n when n is even).
bool sameShape(const sym::Context& symbols, const std::vector<Dim>& a, const std::vector<Dim>& b) {
  if (a == b) return true;
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!sym::dimEqual(symbols, a[i], b[i])) return false;
  return true;
}

bool compatible(const sym::Context& symbols, const TensorType& a, const TensorType& b) {
  return sameShape(symbols, a.shape, b.shape) &&
         (a.dtype == b.dtype || a.dtype == DType::Unknown || b.dtype == DType::Unknown);
}

bool sameConstant(double a, double b) { return a == b || (a != a && b != b); }

// The classes by id, in chunks of 64 that never move (references stay valid while classes are
// added, as a deque's do). A std::deque of EClass holds five per 512-byte block: indexing it
// divided by five, on every eclass() of e-matching (a twentieth of a check's instructions), and
// it allocated a block every five classes.
class ClassStore {
 public:
  EClass& operator[](size_t i) { return chunks_[i >> kShift][i & kMask]; }
  const EClass& operator[](size_t i) const { return chunks_[i >> kShift][i & kMask]; }
  // Appends a class {id, {node}, {}, data}; a slot left by clear() keeps its vectors' storage.
  void push_back(Id id, const ENode& node, ClassData&& data) {
    if ((size_ >> kShift) == chunks_.size()) chunks_.push_back(std::make_unique<EClass[]>(kChunk));
    EClass& c = (*this)[size_++];
    c.id = id;
    c.nodes.clear();
    c.nodes.push_back(node);
    c.parents.clear();
    c.data = std::move(data);
  }
  // Forgets every class; their slots are reassigned whole by push_back.
  void clear() { size_ = 0; }

 private:
  static constexpr size_t kShift = 6, kChunk = size_t{1} << kShift, kMask = kChunk - 1;
  std::vector<std::unique_ptr<EClass[]>> chunks_;
  size_t size_ = 0;
};

}  // namespace

struct EGraph::Impl {
  struct ClassState {
    std::vector<NodeId> members;      // may hold dead ids until refreshed
    std::vector<NodeId> parentNodes;  // may hold dead ids / duplicates until refreshed
    bool dirty = false;
  };

  DataFn dataFn;
  IdentityFn identityFn = nullptr;
  std::unique_ptr<sym::Context> ownSymbols;  // the empty context, when none was given
  const sym::Context* symbols = nullptr;      // never null
  Symbol tensorSym = intern("tensor");

  std::vector<ENode> nodes;     // NodeId -> node, exactly as keyed in `memo`
  std::vector<Id> nodeClass;    // NodeId -> class (find() it)
  std::vector<uint8_t> dead;    // NodeId -> removed as a congruent duplicate
  detail::NodeIndex memo;       // the hashcons

  std::vector<Id> uf;           // union-find parents
  ClassStore classes;           // by id; only canonical entries are meaningful
  std::vector<ClassState> state;
  size_t liveClasses = 0;

  std::vector<NodeId> pending;  // nodes whose children may have become non-canonical
  std::vector<Id> analysis;     // classes whose data gained information
  std::vector<Id> dirty;        // classes whose public view must be refreshed
  bool needsRebuild = false;

  std::vector<std::vector<Id>> byOp;  // op -> classes (sorted, canonical when clean)
  std::vector<uint8_t> opDirty;
  std::vector<Symbol> dirtyOps;

  std::vector<std::string> conflicts;
  std::vector<std::pair<int64_t, int64_t>> mergedSizes;
  std::vector<Id> changes;  // the change log (EGraph::changeCount)

  // Two clashing types of one value whose shapes differ only where a dim is
  // symbolic: the value has one shape, so those dims are equal (see mergedSizes()).
  void noteMergedSizes(const ClassData& a, const ClassData& b) {
    if (a.tuple != b.tuple || a.types.size() != b.types.size()) return;
    std::vector<std::pair<int64_t, int64_t>> found;
    for (size_t i = 0; i < a.types.size(); ++i) {
      const auto &x = a.types[i].shape, &y = b.types[i].shape;
      if (x.size() != y.size()) return;
      for (size_t d = 0; d < x.size(); ++d) {
        if (x[d] == y[d]) continue;
        if (x[d] >= 0 && y[d] >= 0) return;  // two different concrete sizes: no fact, a plain conflict
        found.emplace_back(x[d], y[d]);
      }
    }
    mergedSizes.insert(mergedSizes.end(), found.begin(), found.end());
  }

  Id findConst(Id id) const {
    while (uf[id] != id) id = uf[id];
    return id;
  }
  Id findMut(Id id) {
    while (uf[id] != id) {
      uf[id] = uf[uf[id]];  // path halving
      id = uf[id];
    }
    return id;
  }

  void checkIds(const ENode& n) const {
    for (Id c : n.children)
      if (c >= uf.size()) throw std::out_of_range("e-node child e" + std::to_string(c) + " is not an e-class id");
  }

  NodeId lookupCanonical(const ENode& n, uint64_t h) const {
    return memo.find(h, [&](NodeId id) { return nodes[id] == n; });
  }

  void markDirty(Id c) {
    if (!state[c].dirty) {
      state[c].dirty = true;
      dirty.push_back(c);
    }
  }
  void markOpDirty(Symbol op) {
    if (!opDirty[op]) {
      opDirty[op] = 1;
      dirtyOps.push_back(op);
    }
  }

  std::string describe(Id c) const {
    const EClass& cls = classes[c];
    std::string out = "e" + std::to_string(c);
    if (!cls.nodes.empty()) out += " " + toString(cls.nodes.front());
    return out + " : " + dataToString(cls.data);
  }

  // Joins `second` into `first`: unknown parts take the other side's value;
  // contradictory parts keep `first` and set `clash`. Returns whether `first`
  // gained information.
  bool joinData(ClassData& first, const ClassData& second, bool& clash) const {
    bool gained = false;
    if (first.types.empty()) {
      if (!second.types.empty()) {
        first.types = second.types;
        first.tuple = second.tuple;
        gained = true;
      }
    } else if (!second.types.empty()) {
      bool ok = first.tuple == second.tuple && first.types.size() == second.types.size();
      // A known scalar constant is the same value whatever its dtype (0 == 0.0).
      bool scalarConst = (first.constant || second.constant) && first.types.size() == 1 &&
                         first.types[0].shape.empty() && second.types[0].shape.empty();
      for (size_t i = 0; ok && !scalarConst && i < first.types.size(); ++i)
        ok = compatible(*symbols, first.types[i], second.types[i]);
      if (ok) {
        for (size_t i = 0; i < first.types.size(); ++i)
          if (first.types[i].dtype == DType::Unknown && second.types[i].dtype != DType::Unknown) {
            first.types[i].dtype = second.types[i].dtype;
            gained = true;
          }
      } else {
        clash = true;
      }
    }
    if (!first.constant) {
      if (second.constant) {
        first.constant = second.constant;
        gained = true;
      }
    } else if (second.constant && !sameConstant(*first.constant, *second.constant)) {
      clash = true;
    }
    return gained;
  }

  Id addNew(ENode&& node, uint64_t h, ClassData data) {
    NodeId n = static_cast<NodeId>(nodes.size());
    Id c = static_cast<Id>(uf.size());
    uf.push_back(c);
    if (c < state.size()) {  // a slot of a recycled e-graph (reset())
      state[c].members.clear();
      state[c].parentNodes.clear();
      state[c].dirty = false;
    } else {
      state.emplace_back();
    }
    state[c].members.push_back(n);
    for (size_t i = 0; i < node.children.size(); ++i) {
      Id ch = node.children[i];
      if (std::find(node.children.begin(), node.children.begin() + i, ch) != node.children.begin() + i) continue;
      state[ch].parentNodes.push_back(n);
      classes[ch].parents.emplace_back(node, c);
    }
    if (node.op >= byOp.size()) {
      byOp.resize(node.op + 1);
      opDirty.resize(node.op + 1, 0);
    }
    byOp[node.op].push_back(c);  // ids grow, so the list stays sorted
    classes.push_back(c, node, std::move(data));
    nodeClass.push_back(c);
    dead.push_back(0);
    nodes.push_back(std::move(node));
    memo.insert(h, n);
    ++liveClasses;
    changes.push_back(c);
    return c;
  }

  bool unite(Id a, Id b) {
    a = findMut(a);
    b = findMut(b);
    if (a == b) return false;
    needsRebuild = true;
    // Data: `a` is the first argument, its data wins on conflicts. Equal data (most merges) joins
    // to itself, gains nothing and cannot clash: no copy to join into then.
    const bool sameData = classes[a].data == classes[b].data;
    ClassData joined;
    bool gained = false;
    if (!sameData) {
      joined = classes[a].data;
      bool clash = false;
      joinData(joined, classes[b].data, clash);
      if (clash) noteMergedSizes(classes[a].data, classes[b].data);
      if (clash)
        conflicts.push_back("merged e-classes with contradictory data: " + describe(a) + " vs " + describe(b) +
                            " (kept the first)");
      gained = joined != classes[a].data || joined != classes[b].data;
    }

    ClassState& sa = state[a];
    ClassState& sb = state[b];
    bool aIsRoot = sa.members.size() + sa.parentNodes.size() >= sb.members.size() + sb.parentNodes.size();
    Id root = aIsRoot ? a : b;
    Id other = aIsRoot ? b : a;
    ClassState& sr = state[root];
    ClassState& so = state[other];
    EClass& cr = classes[root];
    EClass& co = classes[other];
    uf[other] = root;
    --liveClasses;

    // The parents of `other` now have a non-canonical child.
    pending.insert(pending.end(), so.parentNodes.begin(), so.parentNodes.end());
    // Their children's public parent entries name `other`: refresh them; and
    // the op index lists `other`.
    for (NodeId m : so.members) {
      markOpDirty(nodes[m].op);
      for (Id ch : nodes[m].children) markDirty(findMut(ch));
    }
    sr.members.insert(sr.members.end(), so.members.begin(), so.members.end());
    sr.parentNodes.insert(sr.parentNodes.end(), so.parentNodes.begin(), so.parentNodes.end());
    std::move(co.nodes.begin(), co.nodes.end(), std::back_inserter(cr.nodes));
    std::move(co.parents.begin(), co.parents.end(), std::back_inserter(cr.parents));
    so = ClassState{};
    co.nodes = {};
    co.parents = {};
    co.data = {};
    if (!sameData) cr.data = std::move(joined);  // else cr.data already is the join
    if (gained) analysis.push_back(root);
    markDirty(root);
    changes.push_back(root);
    return true;
  }

  // Re-keys node p after a child was merged away; unites it with an existing
  // congruent node if there is one.
  void repair(NodeId p) {
    if (dead[p]) return;
    ENode& node = nodes[p];
    bool stale = false;
    for (Id ch : node.children) stale |= uf[ch] != ch;
    if (!stale) return;
    ENodeHash hasher;
    memo.erase(hasher(node), p);
    for (Id& ch : node.children) {
      ch = findMut(ch);
      markDirty(ch);  // its public parents entry for p changes
    }
    Id pc = findMut(nodeClass[p]);
    markDirty(pc);  // its public node list changes
    changes.push_back(pc);
    uint64_t h = hasher(node);
    NodeId q = lookupCanonical(node, h);
    if (q == detail::NodeIndex::kNone) {
      memo.insert(h, p);
    } else {
      dead[p] = 1;
      unite(nodeClass[q], pc);
    }
  }

  // A class gained data: parents with unknown data may now be computable.
  void propagate(const EGraph& g, Id c) {
    c = findMut(c);
    for (size_t i = 0; i < state[c].parentNodes.size(); ++i) {
      NodeId p = state[c].parentNodes[i];
      if (dead[p]) continue;
      Id pc = findMut(nodeClass[p]);
      if (!classes[pc].data.types.empty()) {
        // A known constant reaches typed parents too (a transpose of a class
        // merged with zeros later is zeros): only the constant is taken.
        if (!classes[c].data.constant || classes[pc].data.constant) continue;
        std::optional<ClassData> d = dataFn(g, nodes[p]);
        if (d && d->constant) {
          classes[pc].data.constant = d->constant;
          analysis.push_back(pc);
          changes.push_back(pc);
        }
        continue;
      }
      std::optional<ClassData> d = dataFn(g, nodes[p]);
      bool clash = false;  // cannot clash: the types were unknown
      if (d && !d->types.empty() && joinData(classes[pc].data, *d, clash)) {
        analysis.push_back(pc);
        changes.push_back(pc);
      }
    }
  }

  void refresh(Id c) {
    ClassState& st = state[c];
    st.dirty = false;
    if (uf[c] != c) return;  // merged away; its root is dirty too
    auto dropDead = [&](std::vector<NodeId>& v) {
      v.erase(std::remove_if(v.begin(), v.end(), [&](NodeId n) { return dead[n] != 0; }), v.end());
      std::sort(v.begin(), v.end());
      v.erase(std::unique(v.begin(), v.end()), v.end());
    };
    dropDead(st.members);
    dropDead(st.parentNodes);
    EClass& cls = classes[c];
    cls.nodes.resize(st.members.size());
    for (size_t i = 0; i < st.members.size(); ++i) cls.nodes[i] = nodes[st.members[i]];
    cls.parents.resize(st.parentNodes.size());
    for (size_t i = 0; i < st.parentNodes.size(); ++i) {
      NodeId p = st.parentNodes[i];
      cls.parents[i].first = nodes[p];
      cls.parents[i].second = findMut(nodeClass[p]);
    }
  }

  // Empties the e-graph for reuse, keeping the storage of its vectors (see the pool below). The
  // per-class state beyond uf.size() is stale and reassigned by addNew before use.
  void reset() {
    dataFn = nullptr;
    identityFn = nullptr;
    symbols = ownSymbols.get();
    nodes.clear();
    nodeClass.clear();
    dead.clear();
    memo.clear();
    uf.clear();
    classes.clear();
    liveClasses = 0;
    pending.clear();
    analysis.clear();
    for (Id c : dirty) state[c].dirty = false;
    dirty.clear();
    needsRebuild = false;
    for (auto& v : byOp) v.clear();
    for (Symbol op : dirtyOps) opDirty[op] = 0;
    dirtyOps.clear();
    conflicts.clear();
    mergedSizes.clear();
    changes.clear();
  }
  // Whether keeping this e-graph's storage for the next one is worth its memory.
  bool worthRecycling() const { return nodes.capacity() <= 8192; }

  void refreshOpIndex() {
    for (Symbol op : dirtyOps) {
      opDirty[op] = 0;
      std::vector<Id>& v = byOp[op];
      for (Id& c : v) c = findMut(c);
      std::sort(v.begin(), v.end());
      v.erase(std::unique(v.begin(), v.end()), v.end());
    }
    dirtyOps.clear();
  }
};

namespace {
// E-graphs given back, emptied, for the next one on this thread: a check builds hundreds of small
// e-graphs (one per operator search), and allocating and freeing each one's vectors, per class
// and per e-graph, was a large part of its malloc/free. `gone` marks the pool destroyed (thread
// exit), after which e-graphs are simply deleted.
struct ImplPool {
  std::vector<void*> free;            // EGraph::Impl, private to EGraph: typed by its members
  void (*destroy)(void*) = nullptr;   // deletes one (set by the first EGraph)
  ~ImplPool();
  static constexpr size_t kMax = 4;
};
thread_local bool poolGone = false;
ImplPool& implPool() {
  thread_local ImplPool pool;
  return pool;
}
}  // namespace

ImplPool::~ImplPool() {
  for (void* p : free) destroy(p);
  free.clear();
  poolGone = true;
}

EGraph::EGraph(DataFn dataFn, const sym::Context* symbols) {
  Impl* raw = nullptr;
  if (!poolGone && !implPool().free.empty()) {
    raw = static_cast<Impl*>(implPool().free.back());
    implPool().free.pop_back();
  } else {
    raw = new Impl();
    raw->nodes.reserve(1024);
    raw->memo.reserve(1024);
  }
  impl_ = std::shared_ptr<Impl>(raw, [](Impl* p) {
    if (poolGone || implPool().free.size() >= ImplPool::kMax || !p->worthRecycling()) {
      delete p;
      return;
    }
    p->reset();
    ImplPool& pool = implPool();
    pool.destroy = [](void* q) { delete static_cast<Impl*>(q); };
    pool.free.push_back(p);
  });
  impl_->dataFn = std::move(dataFn);
  if (!symbols) {
    if (!impl_->ownSymbols) impl_->ownSymbols = std::make_unique<sym::Context>();
    symbols = impl_->ownSymbols.get();
  }
  impl_->symbols = symbols;
}

void EGraph::setIdentityFn(IdentityFn fn) { impl_->identityFn = fn; }

Id EGraph::add(ENode node) {
  Impl& m = *impl_;
  m.checkIds(node);
  for (Id& c : node.children) c = m.findMut(c);
  uint64_t h = ENodeHash{}(node);
  if (auto n = m.lookupCanonical(node, h); n != detail::NodeIndex::kNone) return m.findMut(m.nodeClass[n]);
  if (m.identityFn)
    if (auto same = m.identityFn(*this, node)) return m.findMut(*same);
  std::optional<ClassData> d;
  if (m.dataFn) d = m.dataFn(*this, node);
  return m.addNew(std::move(node), h, d ? std::move(*d) : ClassData{});
}

std::optional<Id> EGraph::tryAdd(ENode node) {
  Impl& m = *impl_;
  m.checkIds(node);
  for (Id& c : node.children) c = m.findMut(c);
  uint64_t h = ENodeHash{}(node);
  if (auto n = m.lookupCanonical(node, h); n != detail::NodeIndex::kNone) return m.findMut(m.nodeClass[n]);
  if (m.identityFn)
    if (auto same = m.identityFn(*this, node)) return m.findMut(*same);
  std::optional<ClassData> d;
  if (m.dataFn) {
    d = m.dataFn(*this, node);
    if (!d) return std::nullopt;
  }
  return m.addNew(std::move(node), h, d ? std::move(*d) : ClassData{});
}

std::optional<Id> EGraph::lookup(ENode node) const {
  const Impl& m = *impl_;
  for (Id& c : node.children) {
    if (c >= m.uf.size()) return std::nullopt;
    c = m.findConst(c);
  }
  NodeId n = m.lookupCanonical(node, ENodeHash{}(node));
  if (n == detail::NodeIndex::kNone) return std::nullopt;
  return m.findConst(m.nodeClass[n]);
}

Id EGraph::leaf(std::string_view name, Owner owner, const ClassData& data) {
  return leaf(internAttrs({Attr::str(name), Attr::integer(owner.rank)}), data);
}

Id EGraph::leaf(AttrsId tensorAttrs, const ClassData& data) {
  Impl& m = *impl_;
  ENode node{m.tensorSym, tensorAttrs, {}};
  uint64_t h = ENodeHash{}(node);
  if (auto n = m.lookupCanonical(node, h); n != detail::NodeIndex::kNone) {
    Id c = m.findMut(m.nodeClass[n]);
    if (m.classes[c].data == data) return c;  // joins to itself: no gain, no clash (and no copy)
    ClassData before = m.classes[c].data;
    bool clash = false;
    if (m.joinData(m.classes[c].data, data, clash)) {
      m.analysis.push_back(c);
      m.changes.push_back(c);
    }
    if (clash) m.noteMergedSizes(before, data);
    if (clash) {
      const std::string& name = symbolName(static_cast<Symbol>(attrs(tensorAttrs).at(0).i));
      m.conflicts.push_back("leaf \"" + name + "\" given " + dataToString(data) + " but e" + std::to_string(c) +
                            " already has " + dataToString(before) + " (kept)");
    }
    return c;
  }
  return m.addNew(std::move(node), h, data);
}

Id EGraph::find(Id id) const { return impl_->findConst(id); }

bool EGraph::merge(Id a, Id b) {
  Impl& m = *impl_;
  if (a >= m.uf.size() || b >= m.uf.size()) throw std::out_of_range("merge: not an e-class id");
  return m.unite(a, b);
}

void EGraph::rebuild() {
  Impl& m = *impl_;
  while (!m.pending.empty() || !m.analysis.empty()) {
    while (!m.pending.empty()) {
      NodeId p = m.pending.back();
      m.pending.pop_back();
      m.repair(p);
    }
    // Propagating data never unites classes, so `pending` stays empty here.
    while (!m.analysis.empty()) {
      Id c = m.analysis.back();
      m.analysis.pop_back();
      if (m.dataFn) m.propagate(*this, c);
    }
  }
  for (size_t i = 0; i < m.dirty.size(); ++i) m.refresh(m.dirty[i]);
  m.dirty.clear();
  m.refreshOpIndex();
  m.needsRebuild = false;
}

bool EGraph::clean() const { return !impl_->needsRebuild; }

const sym::Context& EGraph::symbols() const { return *impl_->symbols; }

const EClass& EGraph::eclass(Id id) const {
  const Impl& m = *impl_;
  if (id >= m.uf.size()) throw std::out_of_range("not an e-class id: e" + std::to_string(id));
  return m.classes[m.findConst(id)];
}

std::vector<Id> EGraph::classIds() const {
  const Impl& m = *impl_;
  std::vector<Id> out;
  out.reserve(m.liveClasses);
  for (Id i = 0; i < m.uf.size(); ++i)
    if (m.uf[i] == i) out.push_back(i);
  return out;
}

const std::vector<Id>& EGraph::classesWithOp(Symbol op) const {
  static const std::vector<Id> kEmpty;
  const Impl& m = *impl_;
  return op < m.byOp.size() ? m.byOp[op] : kEmpty;
}

size_t EGraph::changeCount() const { return impl_->changes.size(); }
void EGraph::changedSince(size_t from, std::vector<Id>& out) const {
  const auto& log = impl_->changes;
  if (from < log.size()) out.insert(out.end(), log.begin() + static_cast<std::ptrdiff_t>(from), log.end());
}

size_t EGraph::numNodes() const { return impl_->memo.size(); }
size_t EGraph::numClasses() const { return impl_->liveClasses; }
size_t EGraph::numIds() const { return impl_->uf.size(); }

const std::vector<std::string>& EGraph::conflicts() const { return impl_->conflicts; }
const std::vector<std::pair<int64_t, int64_t>>& EGraph::mergedSizes() const { return impl_->mergedSizes; }

void EGraph::checkInvariants() const {
  const Impl& m = *impl_;
  auto fail = [](const std::string& what) { throw std::logic_error("e-graph invariant violated: " + what); };
  if (m.needsRebuild) fail("not rebuilt after merge");
  size_t live = 0, nodeCount = 0;
  for (Id c = 0; c < m.uf.size(); ++c) {
    if (m.uf[c] != c) continue;
    ++live;
    const EClass& cls = m.classes[c];
    const Impl::ClassState& st = m.state[c];
    const std::string cname = "e" + std::to_string(c);
    if (cls.id != c) fail("class " + cname + " has id e" + std::to_string(cls.id));
    if (cls.nodes.empty()) fail("class " + cname + " has no nodes");
    if (cls.nodes.size() != st.members.size()) fail("class " + cname + " node list out of date");
    for (size_t i = 0; i < cls.nodes.size(); ++i) {
      const ENode& n = cls.nodes[i];
      NodeId self = st.members[i];
      ++nodeCount;
      auto where = [&] { return toString(n) + " in " + cname; };
      if (m.dead[self] || !(m.nodes[self] == n)) fail(where() + " differs from the node store");
      for (Id ch : n.children) {
        if (ch >= m.uf.size() || m.uf[ch] != ch) fail("non-canonical child in " + where());
        const auto& ps = m.state[ch].parentNodes;
        if (!std::binary_search(ps.begin(), ps.end(), self))
          fail(where() + " missing from parents of e" + std::to_string(ch));
      }
      NodeId id = m.lookupCanonical(n, ENodeHash{}(n));
      if (id == detail::NodeIndex::kNone) fail(where() + " not in the hashcons");
      if (m.findConst(m.nodeClass[id]) != c) fail("hashcons maps " + where() + " to another class (congruence)");
      if (n.op >= m.byOp.size() || !std::binary_search(m.byOp[n.op].begin(), m.byOp[n.op].end(), c))
        fail(where() + " missing from the op index");
    }
    if (cls.parents.size() != st.parentNodes.size()) fail("parents of " + cname + " out of date");
    for (size_t i = 0; i < cls.parents.size(); ++i) {
      NodeId p = st.parentNodes[i];
      if ((i && st.parentNodes[i - 1] >= p) || m.dead[p]) fail("parents of " + cname + " not deduplicated");
      const auto& [pn, pc] = cls.parents[i];
      if (!(pn == m.nodes[p]) || pc != m.findConst(m.nodeClass[p]) || m.uf[pc] != pc)
        fail("stale parent " + toString(pn) + " of " + cname);
      if (std::find(pn.children.begin(), pn.children.end(), c) == pn.children.end())
        fail("parent " + toString(pn) + " of " + cname + " does not use it");
    }
  }
  if (live != m.liveClasses) fail("class count");
  if (nodeCount != m.memo.size()) fail("hashcons holds " + std::to_string(m.memo.size()) + " nodes, classes hold " +
                                       std::to_string(nodeCount));
  for (const auto& v : m.byOp)
    for (size_t i = 0; i < v.size(); ++i)
      if (m.uf[v[i]] != v[i] || (i && v[i - 1] >= v[i])) fail("op index not canonical/sorted");
}

}  // namespace tangle::eg
