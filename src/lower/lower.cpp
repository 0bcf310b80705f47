#include "lower/lower.h"

#include <algorithm>
#include <bit>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "lower/all_to_all.h"
#include "lower/fold_rearrange.h"
#include "lower/canon_grad.h"
#include "lower/canon_model.h"
#include "lower/p2p.h"
#include "ops/ops.h"
#include "ops/shape.h"
#include "support/intern_frozen.h"
#include "support/parallel.h"
#include "sym/context.h"

namespace tangle {

namespace {

std::string_view stripDefault(std::string_view op) {
  constexpr std::string_view kSuffix = ".default";
  if (op.size() > kSuffix.size() && op.substr(op.size() - kSuffix.size()) == kSuffix)
    op.remove_suffix(kSuffix.size());
  return op;
}

enum class Collective { None, AllReduce, AllGather, ReduceScatter, Broadcast, Wait, AllToAll };

Collective collectiveKind(const std::string& op) {
  std::string_view o = stripDefault(op);
  if (o == "_c10d_functional.all_reduce" || o == "vllm.all_reduce" || o == "hlo.all-reduce") return Collective::AllReduce;
  if (o == "_c10d_functional.all_gather_into_tensor") return Collective::AllGather;
  if (o == "_c10d_functional.reduce_scatter_tensor") return Collective::ReduceScatter;
  if (o == "_c10d_functional.broadcast") return Collective::Broadcast;
  if (o == "_c10d_functional.wait_tensor") return Collective::Wait;
  if (o == "_c10d_functional.all_to_all_single") return Collective::AllToAll;
  return Collective::None;
}

const char* collectiveName(Collective c) {
  switch (c) {
    case Collective::AllReduce: return "all_reduce";
    case Collective::AllGather: return "all_gather_into_tensor";
    case Collective::ReduceScatter: return "reduce_scatter_tensor";
    case Collective::Broadcast: return "broadcast";
    case Collective::AllToAll: return "all_to_all_single";
    default: return "collective";
  }
}

InputError nodeError(const Node& n, const std::string& what) {
  return InputError(n.loc, "node '" + n.name + "': " + what);
}

const std::string& stringArg(const Node& n, size_t i, const char* what) {
  if (i < n.args.size())
    if (auto* s = std::get_if<std::string>(&n.args[i].v)) return *s;
  throw nodeError(n, std::string("expected a string ") + what + " as argument " + std::to_string(i));
}

int64_t intArg(const Node& n, size_t i, const char* what) {
  if (i < n.args.size())
    if (auto* v = std::get_if<int64_t>(&n.args[i].v)) return *v;
  throw nodeError(n, std::string("expected an integer ") + what + " as argument " + std::to_string(i));
}

// The group a collective runs on is named by its last string argument.
const std::string& groupArg(const Node& n) {
  for (size_t i = n.args.size(); i-- > 0;)
    if (auto* s = std::get_if<std::string>(&n.args[i].v)) return *s;
  throw nodeError(n, "collective without a process group argument");
}

// HLO all-reduce: replica_groups={{0,1},{2,3}} (empty: all ranks). The
// group of `rank` is named by its members.
std::string replicaGroup(const Node& n, int rank) {
  const Value* v = n.kwarg("replica_groups");
  auto groups = v ? std::get_if<ValueList>(&v->v) : nullptr;
  if (!groups || groups->empty()) return "replica_groups:all";
  for (const Value& grp : *groups) {
    auto members = std::get_if<ValueList>(&grp.v);
    if (!members) break;
    std::string name = "replica_groups:{";
    bool mine = false;
    for (size_t i = 0; i < members->size(); ++i) {
      auto r = std::get_if<int64_t>(&(*members)[i].v);
      if (!r) throw nodeError(n, "replica_groups must list ranks");
      name += (i ? "," : "") + std::to_string(*r);
      mine = mine || *r == rank;
    }
    if (mine) return name + "}";
  }
  throw nodeError(n, "rank " + std::to_string(rank) + " is in none of its replica_groups");
}

// The reducer of an HLO all-reduce as a c10d reduce op name.
std::string hloReduceOp(const Node& n) {
  const Value* v = n.kwarg("to_apply");
  auto fn = v ? std::get_if<std::string>(&v->v) : nullptr;
  if (fn && *fn == "add") return "sum";
  if (fn && *fn == "maximum") return "max";
  if (fn && *fn == "minimum") return "min";
  throw nodeError(n, "all-reduce with reducer '" + (fn ? *fn : std::string("?")) + "' is not supported (add, maximum, minimum)");
}

CanonTerm::Ref operandRef(int lnode) {
  CanonTerm::Ref r;
  r.kind = CanonTerm::Ref::Kind::Operand;
  r.operand = lnode;
  return r;
}

CanonTerm::Ref localRef(int i) {
  CanonTerm::Ref r;
  r.kind = CanonTerm::Ref::Kind::Local;
  r.local = i;
  return r;
}

class Lowerer {
 public:
  Lowerer(std::vector<const Graph*> graphs, std::vector<Owner> owners, const LowerOptions& opts, sym::Context& symbols)
      : owners_(std::move(owners)), opts_(opts), symbols_(symbols) {
    lg_.graphs = std::move(graphs);
    for (Owner o : owners_) prefixes_.push_back(o.prefix());
  }

  LGraph run() {
    links_ = linkPointToPoint(lg_.graphs);
    createNodes();
    linkReceives();
    lowerCollectives();
    resolveAliases();
    registerTags();
    applyCuts();
    indexOperands();
    if (mergeDuplicates()) {
      resolveAliases();
      indexOperands();
    }
    markOutputs();
    return std::move(lg_);
  }

 private:
  LGraph lg_;
  std::vector<Owner> owners_;           // per graph
  std::vector<std::string> prefixes_;  // their names' prefixes
  const LowerOptions& opts_;
  sym::Context& symbols_;  // learns that collective inputs have equal sizes
  std::vector<std::vector<int>> index_;  // [graph][NodeId] -> LNode or -1
  P2PLinks links_;                       // send/recv_ pairs (p2p.h)
  bool namesUnique_ = true;              // no two nodes of the graphs share a qualified name
  struct PendingCollective {
    int lnode;
    Collective kind;
  };
  // group name -> rank -> collectives in program order
  std::map<std::string, std::map<int, std::vector<PendingCollective>>> pending_;
  // [graph] (group name, collective) in program order, as define finds them (graphs may be
  // defined in parallel); then moved into pending_ in graph order.
  std::vector<std::vector<std::pair<std::string, PendingCollective>>> pendingOf_;

  int lnodeOf(int graph, NodeId id) const { return index_[graph][static_cast<size_t>(id)]; }

  void createNodes() {
    index_.resize(lg_.graphs.size());
    size_t total = 0;
    for (const Graph* g : lg_.graphs) total += g->size();
    lg_.nodes.reserve(total);
    lg_.byName.reserve(total);
    eg::reserveSymbols(total);  // every node's name
    eg::reserveAttrs(total);    // and its leaf (markOutputs)
    std::string names;          // a graph's qualified node names, one after another
    std::vector<size_t> ends;
    std::vector<std::string_view> views;
    std::vector<eg::Symbol> symbols;
    for (size_t gi = 0; gi < lg_.graphs.size(); ++gi) {
      const Graph& g = *lg_.graphs[gi];
      index_[gi].assign(g.size(), -1);
      names.clear();
      ends.clear();
      for (const Node& n : g.nodes) {
        if (n.op == "output") continue;
        names += prefixes_[gi];
        names += n.name;
        ends.push_back(names.size());
      }
      views.resize(ends.size());
      for (size_t k = 0; k < ends.size(); ++k) {
        size_t begin = k ? ends[k - 1] : 0;
        views[k] = std::string_view(names).substr(begin, ends[k] - begin);
      }
      symbols.resize(views.size());
      eg::internAll(views, symbols.data());  // the graph's names at once
      size_t k = 0;
      for (NodeId id = 0; id < static_cast<NodeId>(g.size()); ++id) {
        const Node& n = g.node(id);
        if (n.op == "output") continue;
        LNode ln;
        ln.symbol = symbols[k];
        ln.name = views[k];
        ++k;
        ln.graph = static_cast<int>(gi);
        ln.owner = owners_[gi];
        ln.origin = id;
        if (n.type) ln.data.types = {*n.type};
        ln.data.tuple = n.isTuple;
        int lid = static_cast<int>(lg_.nodes.size());
        index_[gi][static_cast<size_t>(id)] = lid;
        if (!lg_.byName.emplace(ln.symbol, lid)) namesUnique_ = false;
        lg_.nodes.push_back(std::move(ln));
      }
    }
    defineAll();
  }

  // The definitions of graph gi's nodes (and its tuples' element types).
  void defineGraph(size_t gi) {
    const Graph& g = *lg_.graphs[gi];
    for (NodeId id = 0; id < static_cast<NodeId>(g.size()); ++id)
      if (int lid = lnodeOf(static_cast<int>(gi), id); lid >= 0) define(static_cast<int>(gi), g, id, lid);
    fillTupleTypes(static_cast<int>(gi), g);
  }

  // Every graph's definitions, as a serial run in graph order gives them.
  // With --jobs and concrete sizes, graphs are defined in parallel under
  // frozen interning (support/intern_frozen.h): a graph that needs a symbol,
  // attribute list or size expression not interned yet (or fails) is put
  // back. The first graph put back is then defined serially (it interns what
  // it needs, or throws its error), and the others are tried again: every
  // graph before it needed nothing new, so ids are handed out as in a serial
  // run. A round that puts back more than half its graphs ends the parallel
  // rounds (each graph then needing a value of its own).
  void defineAll() {
    const size_t n = lg_.graphs.size();
    pendingOf_.assign(n, {});
    std::vector<size_t> todo(n);
    for (size_t gi = 0; gi < n; ++gi) todo[gi] = gi;
    // Symbolic sizes: canonicalize builds size expressions in the shared context.
    const bool parallel = opts_.jobs > 1 && n > 1 &&
                          std::none_of(lg_.graphs.begin(), lg_.graphs.end(), [](const Graph* g) { return anySymbolicSize(*g); });
    for (int round = 0; parallel && !todo.empty(); ++round) {
      std::vector<char> ok(todo.size(), 0);
      parallelFor(todo.size(), opts_.jobs, [&](size_t k) {
        InternFrozen frozen;
        try {
          defineGraph(todo[k]);
          ok[k] = 1;
        } catch (...) {  // NotInterned, or an error the serial definition reports
        }
      });
      std::vector<size_t> back;
      for (size_t k = 0; k < todo.size(); ++k)
        if (!ok[k]) back.push_back(todo[k]);
      if (back.empty()) return mergePending();
      resetDefinitions(back.front());
      defineGraph(back.front());
      back.erase(back.begin());
      for (size_t gi : back) resetDefinitions(gi);
      const bool progress = round == 0 || 2 * back.size() <= todo.size();
      todo = std::move(back);
      if (!progress) break;
    }
    for (size_t gi : todo) defineGraph(gi);
    mergePending();
  }

  // Graph gi's nodes as createNodes left them (define and fillTupleTypes set the rest).
  void resetDefinitions(size_t gi) {
    for (int lid : index_[gi]) {
      if (lid < 0) continue;
      LNode& ln = lg_.nodes[static_cast<size_t>(lid)];
      ln.isInput = false;
      ln.aliasOf = -1;
      ln.def = CanonTerm{};
    }
    pendingOf_[gi].clear();
  }

  void mergePending() {
    for (size_t gi = 0; gi < pendingOf_.size(); ++gi)
      for (auto& [group, c] : pendingOf_[gi]) pending_[group][static_cast<int>(gi)].push_back(c);
    pendingOf_.clear();
  }

  void define(int gi, const Graph& g, NodeId id, int lid) {
    const Node& n = g.node(id);
    LNode& ln = lg_.nodes[lid];
    // An HLO array constant (`constant({...})`, its values not in the dump)
    // is an input like a get_attr: relation files relate it.
    bool arrayConstant = n.op == "hlo.constant" && n.args.empty();
    if (n.op == "placeholder" || n.op == "get_attr" || arrayConstant) {
      ln.isInput = true;
      return;
    }
    // send/recv_ (their values live in linkReceives) and profiler ranges: no tensor.
    if (links_.effects[static_cast<size_t>(gi)].count(id) || n.op.rfind("profiler.", 0) == 0) {
      ln.isInput = true;
      return;
    }
    if (n.op == "getitem") {
      if (n.args.size() != 2 || !n.args[0].isTensor())
        throw nodeError(n, "getitem expects (tuple, index)");
      int64_t k = intArg(n, 1, "index");
      NodeId tuple = std::get<TensorRef>(n.args[0].v).node;
      if (auto base = taggedBase(g, tuple, k)) {
        ln.aliasOf = lnodeOf(gi, *base);
        return;
      }
      auto term = canonicalizeFunctionalized(g, tuple, k);  // an out-variant kernel's result
      if (!term) term = canonicalizeGradTuple(g, tuple, k);    // nll_loss_forward's loss / total weight
      if (term) {
        for (auto& tn : term->nodes)
          for (auto& r : tn.children)
            if (r.kind == CanonTerm::Ref::Kind::Operand) r.operand = lnodeOf(gi, r.operand);
        ln.def = std::move(*term);
        return;
      }
      CanonTerm::Node t;
      t.op = ops::syms().getitem;
      t.attrs = {eg::Attr::integer(k)};
      t.children = {operandRef(lnodeOf(gi, std::get<TensorRef>(n.args[0].v).node))};
      ln.def.nodes.push_back(std::move(t));
      return;
    }
    if (isSymbolicScalar(n)) {  // no tensor: its value lives in the types that use it
      ln.isInput = true;
      return;
    }
    Collective c = collectiveKind(n.op);
    if (c == Collective::Wait) {
      if (n.args.empty() || !n.args[0].isTensor()) throw nodeError(n, "wait_tensor expects a tensor");
      ln.aliasOf = lnodeOf(gi, std::get<TensorRef>(n.args[0].v).node);
      return;
    }
    if (c != Collective::None) {
      if (n.args.empty() || !n.args[0].isTensor()) throw nodeError(n, "collective expects a tensor first");
      pendingOf_[static_cast<size_t>(gi)].push_back({n.op == "hlo.all-reduce" ? replicaGroup(n, gi) : groupArg(n), {lid, c}});
      return;
    }
    CanonTerm term = canonicalize(g, id);
    if (term.aliasOf) {
      ln.aliasOf = lnodeOf(gi, *term.aliasOf);
      return;
    }
    for (auto& tn : term.nodes)
      for (auto& r : tn.children)
        if (r.kind == CanonTerm::Ref::Kind::Operand) r.operand = lnodeOf(gi, r.operand);
    ln.def = std::move(term);
    typeScalarConstant(ln, n);
  }

  // A 0-d tensor of a known dtype computed as a bare constant (zeros([]),
  // scalar_tensor) is cast[dtype](const): a bare const is a python number of
  // no dtype, shared with every literal of that value (HF's `arange + 0`), and
  // merging the typed tensor into it would make `arange + 0` a float sum.
  static void typeScalarConstant(LNode& ln, const Node& n) {
    if (ln.def.nodes.size() != 1 || ln.def.nodes[0].op != ops::syms().constant || !n.type ||
        !n.type->shape.empty() || n.type->dtype == DType::Unknown)
      return;
    CanonTerm::Node cast;
    cast.op = ops::syms().cast;
    cast.attrs = {eg::Attr::str(dtypeName(n.type->dtype))};
    CanonTerm::Ref r;
    r.kind = CanonTerm::Ref::Kind::Local;
    r.local = 0;
    cast.children = {r};
    ln.def.nodes.push_back(std::move(cast));
  }

  // Reads of received data are the sender's tensor; repeated reads of one
  // attribute are one input (p2p.h).
  void linkReceives() {
    for (size_t gi = 0; gi < links_.alias.size(); ++gi)
      for (auto& [id, to] : links_.alias[gi]) {
        LNode& ln = lg_.nodes[lnodeOf(static_cast<int>(gi), id)];
        ln.aliasOf = lnodeOf(to.first, to.second);
        ln.isInput = false;
        ln.def = CanonTerm{};
      }
  }

  // Arithmetic, sizes and runtime assertions on symbolic integers.
  static bool isSymbolicScalar(const Node& n) {
    if (n.type || n.isTuple) return false;
    if (n.symValue || n.op.rfind("sym.", 0) == 0) return true;
    std::string_view op = stripDefault(n.op);
    for (std::string_view s : {"aten.sym_size", "aten.sym_numel", "aten.sym_stride", "aten.sym_storage_offset",
                               "aten._assert_scalar", "aten.sym_constrain_range", "aten._assert_async"})
      if (op.rfind(s, 0) == 0) return true;
    return false;
  }

  // Debug name tags (tg.inplace_log_tensor under auto_functionalized_v2, and
  // tg.log_tensor) are identities on their tensor; the tag's name is a second
  // name of that tensor for relation files: "S.<tag>" / "D<r>.<tag>".
  static const std::string* tagName(const Node& n) {
    const Value* s = n.kwarg("s");
    if (auto str = s ? std::get_if<std::string>(&s->v) : nullptr) return str;
    if (n.args.size() >= 2)
      if (auto str = std::get_if<std::string>(&n.args[1].v)) return str;
    return nullptr;
  }
  static bool isInplaceTag(const Node& n) {
    if (stripDefault(n.op) != "higher_order.auto_functionalized_v2" || n.args.empty()) return false;
    auto sym = std::get_if<Symbol>(&n.args[0].v);
    return sym && sym->text.find("inplace_log_tensor") != std::string::npos;
  }
  // getitem[k] (k >= 1) of an in-place tag returns its k-1-th base tensor.
  static std::optional<NodeId> taggedBase(const Graph& g, NodeId tuple, int64_t k) {
    const Node& t = g.node(tuple);
    if (!isInplaceTag(t) || k < 1) return std::nullopt;
    const Value* bases = t.kwarg("_all_bases");
    auto list = bases ? std::get_if<ValueList>(&bases->v) : nullptr;
    if (!list || static_cast<size_t>(k - 1) >= list->size()) return std::nullopt;
    auto ref = std::get_if<TensorRef>(&(*list)[static_cast<size_t>(k - 1)].v);
    if (!ref) return std::nullopt;
    return ref->node;
  }
  void registerTags() {
    for (size_t gi = 0; gi < lg_.graphs.size(); ++gi) {
      const Graph& g = *lg_.graphs[gi];
      for (NodeId id = 0; id < static_cast<NodeId>(g.size()); ++id) {
        const Node& n = g.node(id);
        int target = -1;
        if (stripDefault(n.op) == "tg.log_tensor") target = lnodeOf(static_cast<int>(gi), id);
        if (n.op == "getitem" && n.args.size() == 2 && n.args[0].isTensor() &&
            isInplaceTag(g.node(std::get<TensorRef>(n.args[0].v).node)))
          target = lnodeOf(static_cast<int>(gi), id);
        const Node* tagNode = n.op == "getitem" && target >= 0 ? &g.node(std::get<TensorRef>(n.args[0].v).node) : &n;
        const std::string* name = target >= 0 ? tagName(*tagNode) : nullptr;
        if (name) lg_.byName.emplace(eg::intern(prefixes_[gi] + *name), target);  // first tag of a name wins
      }
    }
  }

  // A tuple-valued node has no annotation of its own: its element types are
  // those of the getitem nodes that read it.
  void fillTupleTypes(int gi, const Graph& g) {
    std::vector<char> inferable(g.size(), 0);  // known ops type their tuples completely themselves
    for (NodeId id = 0; id < static_cast<NodeId>(g.size()); ++id) {
      int l = lnodeOf(gi, id);
      if (l >= 0 && !lg_.nodes[l].def.nodes.empty() && ops::find(lg_.nodes[l].def.nodes.back().op))
        inferable[static_cast<size_t>(id)] = 1;
    }
    for (NodeId id = 0; id < static_cast<NodeId>(g.size()); ++id) {
      const Node& n = g.node(id);
      if (n.op != "getitem" || !n.type || n.args.size() != 2 || !n.args[0].isTensor()) continue;
      auto* k = std::get_if<int64_t>(&n.args[1].v);
      if (!k || *k < 0 || inferable[static_cast<size_t>(std::get<TensorRef>(n.args[0].v).node)]) continue;
      LNode& tup = lg_.nodes[lnodeOf(gi, std::get<TensorRef>(n.args[0].v).node)];
      tup.data.tuple = true;
      if (tup.data.types.size() <= static_cast<size_t>(*k)) tup.data.types.resize(static_cast<size_t>(*k) + 1);
      tup.data.types[static_cast<size_t>(*k)] = *n.type;
    }
  }

  std::vector<int> groupRanks(const std::string& group, const Node& at) const {
    auto it = opts_.groups.find(group);
    if (it != opts_.groups.end()) return it->second;
    // Unstated: the ranks that issue collectives on it (a rank can only use
    // a group it belongs to). With one group name for all ranks this is all
    // ranks; per-rank groups such as data-parallel groups of one stay apart.
    std::vector<int> users;
    for (auto& [rank, list] : pending_.at(group)) users.push_back(rank);
    return users;
  }

  void lowerCollectives() {
    for (auto& [group, byRank] : pending_) {
      const Node& first = lg_.origin(byRank.begin()->second.front().lnode);
      std::vector<int> members = groupRanks(group, first);
      for (auto& [rank, list] : byRank)
        if (std::find(members.begin(), members.end(), rank) == members.end())
          throw nodeError(lg_.origin(list.front().lnode),
                          "rank " + std::to_string(rank) + " is not a member of process group '" + group + "'");
      size_t count = byRank.count(members.front()) ? byRank.at(members.front()).size() : 0;
      for (int r : members) {
        size_t c = byRank.count(r) ? byRank.at(r).size() : 0;
        if (c != count) {
          const Node& where = c ? lg_.origin(byRank.at(r).front().lnode) : first;
          throw nodeError(where, "process group '" + group + "': rank " + std::to_string(r) + " issues " +
                                     std::to_string(c) + " collectives but rank " + std::to_string(members.front()) +
                                     " issues " + std::to_string(count));
        }
      }
      for (size_t k = 0; k < count; ++k) {
        std::vector<int> inputs;  // the k-th collective's input on each member rank
        std::vector<int> calls;   // and the k-th collective itself
        Collective kind = byRank.at(members.front())[k].kind;
        for (int r : members) {
          const PendingCollective& pc = byRank.at(r)[k];
          const Node& n = lg_.origin(pc.lnode);
          if (pc.kind != kind)
            throw nodeError(n, std::string("collective #") + std::to_string(k) + " on group '" + group + "' is " +
                                   collectiveName(pc.kind) + " here but " + collectiveName(kind) + " on rank " +
                                   std::to_string(members.front()));
          inputs.push_back(lnodeOf(r, std::get<TensorRef>(n.args[0].v).node));
          calls.push_back(pc.lnode);
        }
        // all_to_all_single's inputs may differ in dim 0 (uneven splits)
        if (kind != Collective::AllToAll) assumeEqualShapes(inputs, lg_.origin(byRank.at(members.front())[k].lnode));
        for (size_t pos = 0; pos < members.size(); ++pos) {
          if (kind == Collective::AllToAll) {
            lowerAllToAll(calls, inputs, static_cast<int>(pos));
            continue;
          }
          lowerOne(byRank.at(members[pos])[k], inputs, members, static_cast<int>(pos));
        }
      }
    }
  }

  // A collective needs the same input shape on every member rank (NCCL
  // fails otherwise), so symbolic sizes of those inputs are equal.
  void assumeEqualShapes(const std::vector<int>& inputs, const Node& where) {
    const TensorType* first = lg_.nodes[inputs.front()].data.tensor();
    if (!first) return;
    for (int in : inputs) {
      const TensorType* t = lg_.nodes[in].data.tensor();
      if (!t || t->rank() != first->rank()) continue;
      for (size_t d = 0; d < t->shape.size(); ++d) {
        if (!isSymbolic(t->shape[d]) && !isSymbolic(first->shape[d])) continue;
        std::string why;
        std::string origin = "every rank's input of " + where.name + " at " + where.loc.file + ":" +
                             std::to_string(where.loc.line) + " has one size";
        if (!symbols_.assumeEqual(sym::fromDim(first->shape[d]), sym::fromDim(t->shape[d]), &why, origin))
          throw nodeError(where, "the ranks' inputs of this collective differ in size: " + why);
      }
    }
  }

  void lowerOne(const PendingCollective& pc, const std::vector<int>& inputs, const std::vector<int>& members,
                int pos) {
    LNode& ln = lg_.nodes[pc.lnode];
    const Node& n = lg_.origin(pc.lnode);
    const ops::Syms& s = ops::syms();
    CanonTerm::Node root;
    if (members.size() == 1 && pc.kind != Collective::Broadcast) {  // a group of one: the identity
      ln.aliasOf = inputs[0];
      return;
    }
    switch (pc.kind) {
      case Collective::AllReduce: {
        // vllm.all_reduce(x, group) always sums; c10d names its reduce op; HLO its reducer.
        const std::string red = stripDefault(n.op) == "vllm.all_reduce" ? "sum"
                                : n.op == "hlo.all-reduce"              ? hloReduceOp(n)
                                                                        : stringArg(n, 1, "reduce op");
        if (red == "sum" || red == "avg") {
          root.op = s.sum;
        } else if (red == "max" || red == "min") {
          root.op = eg::intern(red == "max" ? "rmax" : "rmin");  // elementwise max/min across ranks
        } else {
          throw nodeError(n, "all_reduce with reduce op '" + red + "' is not supported (sum, avg, max, min)");
        }
        for (int in : inputs) root.children.push_back(operandRef(in));
        ln.def.nodes = {root};
        if (red == "avg") {  // avg = sum / group size
          CanonTerm::Node div;
          div.op = ops::syms().div;
          CanonTerm::Ref scale;
          scale.kind = CanonTerm::Ref::Kind::Scalar;
          scale.scalar = static_cast<double>(members.size());
          div.children = {localRef(0), scale};
          ln.def.nodes.push_back(div);
        }
        return;
      }
      case Collective::AllGather: {
        root.op = s.concat;
        root.attrs = {eg::Attr::integer(0)};
        for (int in : inputs) root.children.push_back(operandRef(in));
        ln.def.nodes = {root};
        return;
      }
      case Collective::ReduceScatter: {
        const std::string& red = stringArg(n, 1, "reduce op");
        if (red != "sum" && red != "avg")
          throw nodeError(n, "reduce_scatter_tensor with reduce op '" + red + "' is not supported (sum, avg)");
        const eg::ClassData& in = lg_.nodes[inputs[static_cast<size_t>(pos)]].data;
        if (!in.tensor() || in.tensor()->shape.empty() || isSymbolic(in.tensor()->shape[0]))
          throw nodeError(n, "reduce_scatter_tensor needs an input with a known dim 0");
        int64_t size = in.tensor()->shape[0];
        int64_t parts = static_cast<int64_t>(members.size());
        if (size % parts != 0)
          throw nodeError(n, "reduce_scatter_tensor: dim 0 (" + std::to_string(size) + ") is not divisible by " +
                                 std::to_string(parts) + " ranks");
        int64_t chunk = size / parts;
        CanonTerm::Node sum;
        sum.op = s.sum;
        for (int in2 : inputs) sum.children.push_back(operandRef(in2));
        root.op = s.slice;
        root.attrs = {eg::Attr::integer(0), eg::Attr::integer(pos * chunk), eg::Attr::integer((pos + 1) * chunk),
                      eg::Attr::integer(1)};
        root.children = {localRef(0)};
        ln.def.nodes = {sum, root};
        if (red == "avg") {  // avg = sum / group size (FSDP2's gradient reduce-scatter)
          CanonTerm::Node div;
          div.op = ops::syms().div;
          CanonTerm::Ref scale;
          scale.kind = CanonTerm::Ref::Kind::Scalar;
          scale.scalar = static_cast<double>(members.size());
          div.children = {localRef(1), scale};
          ln.def.nodes.push_back(div);
        }
        return;
      }
      case Collective::Broadcast: {
        int64_t src = intArg(n, 1, "source rank");
        auto it = std::find(members.begin(), members.end(), static_cast<int>(src));
        if (it == members.end()) throw nodeError(n, "broadcast source rank " + std::to_string(src) + " not in group");
        ln.aliasOf = inputs[static_cast<size_t>(it - members.begin())];
        return;
      }
      default:
        throw nodeError(n, "unsupported collective");
    }
  }

  // Member pos's output: the concat of the blocks it receives (all_to_all.h).
  void lowerAllToAll(const std::vector<int>& calls, const std::vector<int>& inputs, int pos) {
    std::vector<const Node*> nodes;
    std::vector<int64_t> dim0;
    for (size_t i = 0; i < calls.size(); ++i) {
      nodes.push_back(&lg_.origin(calls[i]));
      const TensorType* t = lg_.nodes[inputs[i]].data.tensor();
      dim0.push_back(t && !t->shape.empty() && !isSymbolic(t->shape[0]) ? t->shape[0] : -1);
    }
    LNode& ln = lg_.nodes[calls[static_cast<size_t>(pos)]];
    const TensorType* out = ln.data.tensor();
    int64_t outDim0 = out && !out->shape.empty() && !isSymbolic(out->shape[0]) ? out->shape[0] : -1;
    std::vector<AllToAllBlock> blocks = allToAllBlocks(nodes, dim0, pos, outDim0);
    const ops::Syms& s = ops::syms();
    if (blocks.empty()) blocks.push_back({pos, 0, 0});  // receives nothing: an empty slice of its own input
    CanonTerm::Node cat;
    cat.op = s.concat;
    cat.attrs = {eg::Attr::integer(0)};
    ln.def.nodes.clear();
    for (const AllToAllBlock& b : blocks) {
      CanonTerm::Node sl;
      sl.op = s.slice;
      sl.attrs = {eg::Attr::integer(0), eg::Attr::integer(b.start), eg::Attr::integer(b.end), eg::Attr::integer(1)};
      sl.children = {operandRef(inputs[static_cast<size_t>(b.source)])};
      cat.children.push_back(localRef(static_cast<int>(ln.def.nodes.size())));
      ln.def.nodes.push_back(std::move(sl));
    }
    if (blocks.size() > 1) ln.def.nodes.push_back(std::move(cat));
  }

  void resolveAliases() {
    for (size_t i = 0; i < lg_.nodes.size(); ++i) {
      int a = lg_.nodes[i].aliasOf;
      size_t guard = 0;
      while (a >= 0 && lg_.nodes[a].aliasOf >= 0) {
        a = lg_.nodes[a].aliasOf;
        if (++guard > lg_.nodes.size()) throw nodeError(lg_.origin(static_cast<int>(i)), "alias cycle");
      }
      lg_.nodes[i].aliasOf = a;
      // An untyped value (get_attr) takes the type its typed aliases annotate.
      if (a >= 0 && lg_.nodes[a].data.types.empty() && !lg_.nodes[i].data.types.empty())
        lg_.nodes[a].data = lg_.nodes[i].data;
    }
  }

  void applyCuts() {
    auto cut = [&](const std::string& name) {
      auto id = lg_.find(name);
      if (!id) return false;
      LNode& ln = lg_.nodes[lg_.resolve(*id)];
      ln.isInput = true;
      ln.aliasOf = -1;
      ln.def = CanonTerm{};
      return true;
    };
    if (owners_.size() == 1 && owners_[0].isSpec()) {
      for (auto& t : opts_.cutSpec) {
        std::string name = Owner::spec().prefix() + t;
        if (!cut(name)) throw InputError({}, "cut point '" + name + "' names no tensor of the spec");
      }
    } else {
      for (auto& [r, t] : opts_.cutImpl) {
        std::string name = Owner::impl(r).prefix() + t;
        if (!cut(name)) throw InputError({}, "cut point '" + name + "' names no tensor of the implementation");
      }
    }
    // A cut point stops aliases that pointed past it too.
    resolveAliases();
  }

  void markOutputs() {
    // leafOf[i]: the node whose name is i's leaf name (i itself, or the
    // returned alias a root takes its leaf name from).
    std::vector<int> leafOf(lg_.nodes.size());
    for (size_t i = 0; i < leafOf.size(); ++i) leafOf[i] = static_cast<int>(i);
    for (size_t gi = 0; gi < lg_.graphs.size(); ++gi)
      for (NodeId id : lg_.graphs[gi]->outputNodes()) {
        int l = lnodeOf(static_cast<int>(gi), id);
        if (l < 0) continue;
        int r = lg_.resolve(l);
        LNode& root = lg_.nodes[r];
        if (!root.isOutput && l != r) leafOf[static_cast<size_t>(r)] = l;
        root.isOutput = true;
      }
    std::vector<eg::Symbol> leafNames(lg_.nodes.size());
    std::vector<Owner> owners(lg_.nodes.size());
    for (size_t i = 0; i < lg_.nodes.size(); ++i) {
      leafNames[i] = lg_.nodes[static_cast<size_t>(leafOf[i])].symbol;
      owners[i] = lg_.nodes[i].owner;
    }
    std::vector<eg::AttrsId> leafAttrs(lg_.nodes.size());
    ops::tensorAttrsAll(leafNames, owners, leafAttrs.data());
    for (size_t i = 0; i < lg_.nodes.size(); ++i) {
      LNode& ln = lg_.nodes[i];
      const LNode& from = lg_.nodes[static_cast<size_t>(leafOf[i])];
      ln.leafName = eg::symbolName(from.symbol);
      ln.leafAttrs = leafAttrs[i];
      // find(leafName) is `from` itself when node names are unique (a tag's
      // name never displaces a node's: byName keeps the first).
      int named = namesUnique_ ? leafOf[i] : *lg_.find(from.symbol);
      lg_.byLeafAttrs.emplace(ln.leafAttrs, lg_.resolve(named));
    }
  }

  // Common subexpressions: within one graph, a node whose definition and type
  // equal an earlier node's (operands compared after merging) becomes its
  // alias. Models recompute the same values (HF unsqueezes the rotary cos/sin
  // and rebuilds position ids in every layer); as separate tensors each copy
  // entered every relation and was explored in every layer's e-graphs. The
  // e-graph's congruence already equates such nodes, so no value changes
  // (random draws and uninitialized memory carry a unique attribute).
  bool mergeDuplicates() {
    bool any = false;
    // A node's key: its graph, types and definition (operands resolved). An
    // open-addressing table of (hash of the key, node) maps keys to their first
    // node; a probe compares hashes, then the two nodes.
    auto mergeable = [&](const LNode& ln) { return ln.aliasOf < 0 && !ln.isInput && !ln.def.nodes.empty(); };
    size_t candidates = 0;
    for (const LNode& ln : lg_.nodes) candidates += mergeable(ln);
    struct Slot {
      uint64_t hash = 0;
      int node = -1;
    };
    size_t cap = 16;
    while (cap < 2 * candidates) cap *= 2;
    std::vector<Slot> table;
    // The table is far larger than the caches: keys are hashed a window
    // ahead and their slots prefetched. A merge changes the keys of the
    // nodes that read the merged one, so it drops the window's hashes.
    constexpr size_t kAhead = 16;
    std::vector<uint64_t> ahead(lg_.nodes.size());
    size_t hashedTo = 0;  // ahead[i] is the key hash of node i for i < hashedTo (mergeable ones)
    for (bool changed = true; changed;) {
      changed = false;
      table.assign(cap, Slot{});
      hashedTo = 0;
      for (size_t i = 0; i < lg_.nodes.size(); ++i) {
        const LNode& ln = lg_.nodes[i];
        if (!mergeable(ln)) continue;
        for (size_t end = std::min(i + kAhead, lg_.nodes.size()); hashedTo < end; ++hashedTo) {
          if (hashedTo < i || !mergeable(lg_.nodes[hashedTo])) continue;
          ahead[hashedTo] = keyHash(lg_.nodes[hashedTo]);
          __builtin_prefetch(&table[ahead[hashedTo] & (cap - 1)]);
        }
        const uint64_t h = ahead[i];
        size_t at = h & (cap - 1);
        while (table[at].node >= 0 && !(table[at].hash == h && sameKey(lg_.nodes[table[at].node], ln)))
          at = (at + 1) & (cap - 1);
        if (table[at].node < 0) {
          table[at] = Slot{h, static_cast<int>(i)};
          continue;
        }
        lg_.nodes[i].aliasOf = table[at].node;
        any = true;
        hashedTo = i + 1;  // the nodes after i may read it: hashed again
        // Only a reader keyed before this merge (an earlier node: a pipeline's
        // recv reads a later rank) can have a new key in another round; without
        // one, that round would find nothing.
        for (int u : lg_.users[i]) changed = changed || u < static_cast<int>(i);
      }
    }
    return any;
  }

  static uint64_t mixKey(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h;
  }
  uint64_t keyHash(const LNode& ln) const {
    uint64_t h = mixKey(static_cast<uint64_t>(ln.graph), ln.data.tuple);
    h = mixKey(h, ln.data.types.size());
    for (const TensorType& t : ln.data.types) {
      h = mixKey(h, static_cast<uint64_t>(t.dtype));
      h = mixKey(h, t.shape.size());
      for (Dim d : t.shape) h = mixKey(h, static_cast<uint64_t>(d));
    }
    h = mixKey(h, ln.def.nodes.size());
    for (const auto& tn : ln.def.nodes) {
      h = mixKey(h, tn.op);
      h = mixKey(h, tn.attrs.size());
      for (const eg::Attr& a : tn.attrs) {
        h = mixKey(h, static_cast<uint64_t>(a.kind));
        h = mixKey(h, static_cast<uint64_t>(a.i));
        h = mixKey(h, std::bit_cast<uint64_t>(a.f));
        h = mixKey(h, a.list.size());
        for (int64_t v : a.list) h = mixKey(h, static_cast<uint64_t>(v));
      }
      h = mixKey(h, tn.children.size());
      for (const auto& r : tn.children) {
        h = mixKey(h, static_cast<uint64_t>(r.kind));
        if (r.kind == CanonTerm::Ref::Kind::Operand) h = mixKey(h, static_cast<uint64_t>(lg_.resolve(r.operand)));
        else if (r.kind == CanonTerm::Ref::Kind::Local) h = mixKey(h, static_cast<uint64_t>(r.local));
        else h = mixKey(h, std::bit_cast<uint64_t>(r.scalar));
      }
    }
    h ^= h >> 33;  // the table probes from the low bits
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
  }
  // Attributes compare as interning does (floats by bit pattern: one NaN).
  static bool sameAttrs(const eg::AttrList& a, const eg::AttrList& b) {
    if (a.size() != b.size()) return false;
    for (size_t k = 0; k < a.size(); ++k)
      if (a[k].kind != b[k].kind || a[k].i != b[k].i ||
          std::bit_cast<uint64_t>(a[k].f) != std::bit_cast<uint64_t>(b[k].f) || a[k].list != b[k].list)
        return false;
    return true;
  }
  bool sameKey(const LNode& a, const LNode& b) const {
    if (a.graph != b.graph || a.data.tuple != b.data.tuple || a.data.types != b.data.types ||
        a.def.nodes.size() != b.def.nodes.size())
      return false;
    for (size_t k = 0; k < a.def.nodes.size(); ++k) {
      const auto &x = a.def.nodes[k], &y = b.def.nodes[k];
      if (x.op != y.op || !sameAttrs(x.attrs, y.attrs) || x.children.size() != y.children.size()) return false;
      for (size_t c = 0; c < x.children.size(); ++c) {
        const auto &p = x.children[c], &q = y.children[c];
        if (p.kind != q.kind) return false;
        if (p.kind == CanonTerm::Ref::Kind::Operand ? lg_.resolve(p.operand) != lg_.resolve(q.operand)
            : p.kind == CanonTerm::Ref::Kind::Local ? p.local != q.local
                                                     : std::bit_cast<uint64_t>(p.scalar) != std::bit_cast<uint64_t>(q.scalar))
          return false;
      }
    }
    return true;
  }

  void indexOperands() { reindexOperands(lg_); }
};

}  // namespace

void reindexOperands(LGraph& lg) {
  // Every list is sized before it is filled: one allocation each, none when
  // it kept its capacity from an earlier call.
  std::vector<int> userCount(lg.nodes.size(), 0);
  for (size_t i = 0; i < lg.nodes.size(); ++i) {
    LNode& ln = lg.nodes[i];
    ln.operands.clear();
    size_t refs = 0;
    for (auto& tn : ln.def.nodes)
      for (auto& r : tn.children) refs += r.kind == CanonTerm::Ref::Kind::Operand;
    ln.operands.reserve(refs);
    for (auto& tn : ln.def.nodes)
      for (auto& r : tn.children)
        if (r.kind == CanonTerm::Ref::Kind::Operand) {
          r.operand = lg.resolve(r.operand);
          if (std::find(ln.operands.begin(), ln.operands.end(), r.operand) == ln.operands.end())
            ln.operands.push_back(r.operand);
        }
    for (int op : ln.operands) ++userCount[static_cast<size_t>(op)];
  }
  lg.users.resize(lg.nodes.size());
  for (size_t i = 0; i < lg.nodes.size(); ++i) {
    lg.users[i].clear();
    lg.users[i].reserve(static_cast<size_t>(userCount[i]));
  }
  for (size_t i = 0; i < lg.nodes.size(); ++i)
    for (int op : lg.nodes[i].operands) lg.users[static_cast<size_t>(op)].push_back(static_cast<int>(i));
}

std::optional<int> LGraph::find(const std::string& name) const {
  std::optional<eg::Symbol> sym = eg::findSymbol(name);  // a name never interned names no tensor
  if (!sym) return std::nullopt;
  return byName.find(*sym);
}

bool IdIndex::emplace(uint32_t id, int node) {
  if (find(id)) return false;
  ++size_;
  if (dense_.empty() && far_.empty()) base_ = id;
  if (inRange(id)) {
    dense_[id - base_] = node;
    return true;
  }
  // Grow the range up to id when it stays dense: at most a few slots per entry.
  const size_t want = id >= base_ ? size_t{id} - base_ + 1 : 0;
  if (want > 0 && want <= 4 * std::max(size_, reserved_) + 4096) {
    dense_.resize(std::max(want, std::min(2 * dense_.size(), 4 * std::max(size_, reserved_) + 4096)), -1);
    dense_[id - base_] = node;
    return true;
  }
  far_.emplace(id, node);
  return true;
}

std::optional<int> IdIndex::find(uint32_t id) const {
  if (const int* at = inRange(id)) {
    if (*at >= 0) return *at;
  }
  if (far_.empty()) return std::nullopt;
  auto it = far_.find(id);
  if (it == far_.end()) return std::nullopt;
  return it->second;
}

LGraph lowerSpec(const Graph& spec, const LowerOptions& opts, sym::Context& symbols) {
  return Lowerer({&spec}, {Owner::spec()}, opts, symbols).run();
}

LGraph lowerImpl(const std::vector<Graph>& ranks, const LowerOptions& opts, sym::Context& symbols) {
  std::vector<const Graph*> graphs;
  std::vector<Owner> owners;
  for (size_t r = 0; r < ranks.size(); ++r) {
    graphs.push_back(&ranks[r]);
    owners.push_back(Owner::impl(static_cast<int32_t>(r)));
  }
  LGraph lg = Lowerer(std::move(graphs), std::move(owners), opts, symbols).run();
  if (opts.fold) foldRearrangements(lg);
  return lg;
}

// A slice of a graph operand with symbolic bounds is only modelled when
// 0 <= start <= end <= size is provable (see Canon::symbolicSlice).
void checkSymbolicSlice(const LGraph& lg, const LNode& n, const sym::Context& ctx) {
  static const eg::Symbol slice = ops::syms().slice;
  for (const CanonTerm::Node& tn : n.def.nodes) {
    if (tn.op != slice || tn.attrs.size() != 4 || tn.children.size() != 1) continue;
    if (tn.attrs[1].kind != eg::Attr::Kind::SymDim && tn.attrs[2].kind != eg::Attr::Kind::SymDim) continue;
    if (tn.children[0].kind != CanonTerm::Ref::Kind::Operand) continue;
    const TensorType* x = lg.nodes[tn.children[0].operand].data.tensor();
    if (!x || tn.attrs[0].i >= x->rank()) continue;
    Dim s = tn.attrs[1].i, e = tn.attrs[2].i, size = x->shape[tn.attrs[0].i];
    if (ctx.proveLE(sym::constant(0), sym::fromDim(s)) && sym::dimLE(ctx, s, e) && sym::dimLE(ctx, e, size)) continue;
    const Node& o = lg.graphs[n.graph]->node(n.origin);
    throw InputError(o.loc, "node '" + o.name + "': cannot prove the slice bounds 0 <= " + sym::dimToString(s) +
                                " <= " + sym::dimToString(e) + " <= " + sym::dimToString(size) +
                                "; state what holds with `assume` in the relation file");
  }
}

// One e-graph serves many nodes, and its leaves stand for data, not tensors:
// type inference reads only the operands' data (ops::inferData), so every
// tensor of one data shares the leaf of the first tensor seen with it, and
// the e-graph's hash-consing infers each distinct definition over distinct
// data once (ranks and layers repeat each other). Adding only adds (no
// merges), so a node's root data is inferred from its operands' annotations
// alone, as a fresh e-graph per node would.
void checkAnnotatedShapes(const LGraph& lg, const sym::Context& symbols) {
  constexpr size_t kMaxENodes = size_t{1} << 16;  // bounds the shared e-graph's size
  std::optional<eg::EGraph> shared;
  std::unordered_map<std::string, int> firstOfData;  // data (as bytes) -> the first tensor with it
  std::vector<int> standIn(lg.nodes.size(), -1);
  std::string key;
  auto put = [&key](auto v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); };
  auto standInOf = [&](int o) {
    o = lg.resolve(o);
    int& s = standIn[static_cast<size_t>(o)];
    if (s < 0) {
      const eg::ClassData& d = lg.nodes[static_cast<size_t>(o)].data;
      key.clear();
      put(d.tuple);
      put(d.types.size());
      for (const TensorType& t : d.types) {
        put(t.dtype);
        put(t.shape.size());
        for (Dim x : t.shape) put(x);
      }
      put(d.constant.has_value());
      put(std::bit_cast<uint64_t>(d.constant.value_or(0.0)));
      auto it = firstOfData.find(key);  // most data was seen before: no key copy then
      s = it != firstOfData.end() ? it->second : firstOfData.emplace(key, o).first->second;
    }
    return s;
  };
  // A node's signature: its annotated types and its definition over its
  // operands' stand-ins. Two nodes of one signature infer one result and
  // compare it with one annotation: the second is already checked (and the
  // first interned every attribute and constant the second would).
  std::unordered_set<std::string> checked;
  std::string sig;
  auto sput = [&sig](auto v) { sig.append(reinterpret_cast<const char*>(&v), sizeof v); };
  auto signature = [&](const LNode& n) {
    sig.clear();
    sput(n.data.types.size());
    for (const TensorType& t : n.data.types) {
      sput(t.dtype);
      sput(t.shape.size());
      for (Dim x : t.shape) sput(x);
    }
    for (const auto& tn : n.def.nodes) {
      sput(tn.op);
      sput(tn.attrs.size());
      for (const eg::Attr& a : tn.attrs) {
        sput(a.kind);
        sput(a.i);
        sput(std::bit_cast<uint64_t>(a.f));
        sput(a.list.size());
        for (int64_t v : a.list) sput(v);
      }
      sput(tn.children.size());
      for (const auto& r : tn.children) {
        sput(r.kind);
        if (r.kind == CanonTerm::Ref::Kind::Operand) sput(standInOf(r.operand));
        else if (r.kind == CanonTerm::Ref::Kind::Local) sput(r.local);
        else sput(std::bit_cast<uint64_t>(r.scalar));
      }
    }
  };
  auto leafFor = [&](eg::EGraph& g, int o) { return addLeaf(g, lg, standInOf(o)); };
  const eg::Symbol constant = ops::syms().constant;
  std::vector<eg::Id> local;
  for (size_t i = 0; i < lg.nodes.size(); ++i) {
    const LNode& n = lg.nodes[i];
    if (n.aliasOf >= 0 || n.isInput || n.def.nodes.empty() || n.data.types.empty()) continue;
    checkSymbolicSlice(lg, n, symbols);
    signature(n);
    if (checked.count(sig)) continue;
    if (!shared || shared->numNodes() > kMaxENodes) shared.emplace(ops::inferData, &symbols);
    eg::EGraph& g = *shared;
    local.clear();
    bool inferable = true;
    for (const auto& tn : n.def.nodes) {
      eg::ENode en;
      en.op = tn.op;
      en.attrs = eg::internAttrs(tn.attrs);
      for (const auto& r : tn.children) {
        switch (r.kind) {
          case CanonTerm::Ref::Kind::Operand: en.children.push_back(leafFor(g, r.operand)); break;
          case CanonTerm::Ref::Kind::Local: en.children.push_back(local[static_cast<size_t>(r.local)]); break;
          case CanonTerm::Ref::Kind::Scalar: {
            eg::ENode c;
            c.op = constant;
            c.attrs = eg::internAttrs({eg::Attr::real(r.scalar)});
            en.children.push_back(g.add(c));
            break;
          }
        }
      }
      auto added = g.tryAdd(std::move(en));
      if (!added) {
        inferable = false;
        break;
      }
      local.push_back(*added);
    }
    checked.insert(sig);
    if (!inferable || local.empty()) continue;  // not inferable here (opaque parts, untyped operands): nothing to compare
    const eg::ClassData& got = g.data(local.back());
    if (got.types.size() != n.data.types.size()) continue;
    for (size_t k = 0; k < got.types.size(); ++k) {
      const TensorType& want = n.data.types[k];
      if (want.dtype == DType::Unknown && want.shape.empty()) continue;  // unannotated tuple element
      if (!ops::sameShape(symbols, got.types[k].shape, want.shape)) {
        const Node& o = lg.origin(static_cast<int>(i));
        throw InputError(o.loc, "node '" + o.name + "' is annotated " + toString(want) + " but " + o.op +
                                    " of its operands gives " + toString(got.types[k]));
      }
    }
  }
}

eg::Id addLeaf(eg::EGraph& g, const LGraph& lg, int id) {
  const LNode& ln = lg.node(lg.resolve(id));
  if (ln.leafAttrs == eg::kNoAttrs) return g.leaf(ln.leafName, ln.owner, ln.data);
  return g.leaf(ln.leafAttrs, ln.data);
}

std::optional<eg::Id> addDefinition(eg::EGraph& g, const LGraph& lg, int id) {
  return addDefinitionOver(g, lg, id, [&](int operand) { return addLeaf(g, lg, operand); });
}

std::optional<eg::Id> addDefinitionOver(eg::EGraph& g, const LGraph& lg, int id,
                                        const std::function<eg::Id(int operand)>& operandClass) {
  const LNode& ln = lg.node(lg.resolve(id));
  const ops::Syms& s = ops::syms();
  std::vector<eg::Id> local;
  local.reserve(ln.def.nodes.size());
  for (const auto& tn : ln.def.nodes) {
    eg::ENode en;
    en.op = tn.op;
    en.attrs = eg::internAttrs(tn.attrs);
    for (const auto& r : tn.children) {
      switch (r.kind) {
        case CanonTerm::Ref::Kind::Operand: en.children.push_back(operandClass(r.operand)); break;
        case CanonTerm::Ref::Kind::Local: en.children.push_back(local[static_cast<size_t>(r.local)]); break;
        case CanonTerm::Ref::Kind::Scalar: {
          eg::ENode c;
          c.op = s.constant;
          c.attrs = eg::internAttrs({eg::Attr::real(r.scalar)});
          en.children.push_back(g.add(c));
          break;
        }
      }
    }
    auto added = g.tryAdd(std::move(en));
    if (!added) return std::nullopt;
    local.push_back(*added);
  }
  if (local.empty()) return std::nullopt;
  return local.back();
}

}  // namespace tangle

namespace tangle {

void canonicalizeSymbols(LGraph& lg, const sym::Context& ctx) {
  if (ctx.empty()) return;
  const ops::Syms& s = ops::syms();
  static const eg::Symbol expand = ops::syms().expand;
  auto canonShape = [&](std::vector<Dim>& shape) {
    for (Dim& d : shape) d = ctx.canonDim(d);
  };
  for (LNode& ln : lg.nodes) {
    for (TensorType& t : ln.data.types) canonShape(t.shape);
    for (CanonTerm::Node& tn : ln.def.nodes) {
      // The attributes that may hold symbolic sizes (see canon.cpp).
      if (tn.op == s.slice && tn.attrs.size() == 4) {
        for (size_t i : {1, 2})
          if (tn.attrs[i].kind == eg::Attr::Kind::SymDim) tn.attrs[i] = eg::Attr::dim(ctx.canonDim(tn.attrs[i].i));
      } else if ((tn.op == s.reshape || tn.op == expand) && tn.attrs.size() == 1) {
        canonShape(tn.attrs[0].list);
      }
    }
  }
}

}  // namespace tangle
