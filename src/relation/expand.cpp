// RelationFile::expand: replaces the rank wildcard D* by explicit ranks.
#include "relation/relation.h"
#include "relation/stars.h"

namespace tangle {

namespace rel {

namespace {
bool bindsStar(const RelExpr& e) {
  return e.kind == RelExpr::Kind::Call && (e.op == "shard" || e.op == "sum");
}
}  // namespace

bool hasFreeStar(const RelExpr& e) {
  if (e.kind == RelExpr::Kind::Tensor) return e.tensor.allRanks;
  if (e.kind != RelExpr::Kind::Call || bindsStar(e)) return false;
  for (const RelExpr& a : e.args)
    if (hasFreeStar(a)) return true;
  return false;
}

void checkStars(const RelExpr& e, bool perRank) {
  switch (e.kind) {
    case RelExpr::Kind::Tensor:
      if (e.tensor.allRanks && !perRank)
        throw InputError(e.loc, e.tensor.toString() +
                                    " is only allowed as a whole side of a statement or inside "
                                    "shard(...)/sum(...); name the ranks (D0." +
                                    e.tensor.name + ", D1." + e.tensor.name + ", ...) instead");
      return;
    case RelExpr::Kind::Call:
      if (e.op == "shard" && (e.args.size() != 1 || !hasFreeStar(e.args[0])))
        throw InputError(e.loc, "shard(...) must range over a D* tensor: shard(D*.x, dim=d)");
      for (const RelExpr& a : e.args) checkStars(a, perRank || bindsStar(e));
      for (const auto& kw : e.kwargs) checkStars(kw.second, perRank);
      return;
    default:
      return;
  }
}

}  // namespace rel

namespace {

[[noreturn]] void rankOutOfRange(const SourceLoc& loc, const TensorName& t, int nranks) {
  throw InputError(loc, "rank " + std::to_string(t.rank) + " named but the implementation has " +
                            std::to_string(nranks) + (nranks == 1 ? " rank" : " ranks") + " (" +
                            t.toString() + ")");
}

// Expands D* for one statement instance; `rank` is the statement's rank when
// it is repeated per rank, -1 otherwise.
class Expander {
 public:
  explicit Expander(int nranks) : n_(nranks) {}

  TensorName tensor(const TensorName& t, int rank, const SourceLoc& loc) const {
    TensorName out = t;
    if (t.side != TensorName::Side::Impl) return out;
    if (t.allRanks) {
      if (rank < 0)
        throw InputError(loc, t.toString() + " outside shard(...)/sum(...) and not a whole side");
      out.allRanks = false;
      out.rank = rank;
    } else if (t.rank < 0 || t.rank >= n_) {
      rankOutOfRange(loc, t, n_);
    }
    return out;
  }

  RelExpr expr(const RelExpr& e, int rank) const {
    switch (e.kind) {
      case RelExpr::Kind::Tensor: {
        RelExpr out = e;
        out.tensor = tensor(e.tensor, rank, e.loc);
        return out;
      }
      case RelExpr::Kind::Call:
        return call(e, rank);
      default:
        return e;
    }
  }

 private:
  RelExpr call(const RelExpr& e, int rank) const {
    RelExpr out;
    out.kind = RelExpr::Kind::Call;
    out.loc = e.loc;
    out.op = e.op;
    out.kwargs = e.kwargs;
    if (e.op == "shard") {  // shard(x, dim=d) = concat(x[D0], ..., x[Dn-1], dim=d)
      out.op = "concat";
      out.args.reserve(n_);
      for (int r = 0; r < n_; ++r) out.args.push_back(expr(e.args.at(0), r));
      return out;
    }
    for (const RelExpr& a : e.args) {
      if (e.op == "sum" && rel::hasFreeStar(a)) {  // sum(D*.x) = sum(D0.x, ..., Dn-1.x)
        for (int r = 0; r < n_; ++r) out.args.push_back(expr(a, r));
      } else {
        out.args.push_back(expr(a, rank));
      }
    }
    return out;
  }

  int n_;
};

}  // namespace

RelationFile RelationFile::expand(int nranks) const {
  if (nranks < 1)
    throw InputError({path, 0}, "cannot expand relations for " + std::to_string(nranks) + " ranks");
  const Expander ex(nranks);
  RelationFile out;
  out.path = path;
  out.specPath = specPath;
  out.implPattern = implPattern;
  out.implRanks = implRanks;
  out.lemmaPaths = lemmaPaths;
  out.lemmaLocs = lemmaLocs;
  out.groups = groups;
  out.groupLocs = groupLocs;
  out.options = options;
  out.optionLocs = optionLocs;
  out.outputs = outputs;
  out.outputLocs = outputLocs;
  // An assumption naming D* holds on every rank.
  for (const Assumption& a : assumptions) {
    bool perRank = (a.lhs + a.rhs).find("D*.") != std::string::npos;
    auto rankOf = [](std::string s, int r) {
      for (size_t p = s.find("D*."); p != std::string::npos; p = s.find("D*.", p))
        s.replace(p, 3, "D" + std::to_string(r) + ".");
      return s;
    };
    if (!perRank) out.assumptions.push_back(a);
    else
      for (int r = 0; r < nranks; ++r) out.assumptions.push_back({rankOf(a.lhs, r), a.op, rankOf(a.rhs, r), a.loc});
  }

  // A statement is repeated for r = 0..n-1 when `perRank`, else emitted once with r = -1.
  auto forRanks = [&](bool perRank, auto&& emit) {
    if (!perRank) return emit(-1);
    for (int r = 0; r < nranks; ++r) emit(r);
  };

  out.relations.reserve(relations.size());
  for (const RelationEntry& rel : relations) {
    rel::checkStars(rel.rhs, rel::isStarTensor(rel.rhs));
    forRanks(rel::isStarTensor(rel.rhs), [&](int r) {
      out.relations.push_back({rel.lhs, ex.expr(rel.rhs, r), rel.loc});
    });
  }
  for (const Expectation& x : expectations) {
    const bool perRank = rel::isStarTensor(x.lhs) || rel::isStarTensor(x.rhs);
    rel::checkStars(x.lhs, perRank);
    rel::checkStars(x.rhs, perRank);
    forRanks(perRank, [&](int r) {
      out.expectations.push_back({ex.expr(x.lhs, r), ex.expr(x.rhs, r), x.loc});
    });
  }
  for (const ZeroRegion& z : zeros)
    forRanks(rel::isStarTensor(z.region), [&](int r) { out.zeros.push_back({ex.expr(z.region, r), z.loc}); });
  for (const ConstantDecl& c : constants) {
    forRanks(c.tensor.allRanks, [&](int r) {
      out.constants.push_back({ex.tensor(c.tensor, r, c.loc), c.value, c.loc});
    });
  }
  const SourceLoc fileLoc{path, 0};
  for (size_t k = 0; k < cutInputs.size(); ++k) {
    const TensorName& t = cutInputs[k];
    const SourceLoc& loc = k < cutInputLocs.size() ? cutInputLocs[k] : fileLoc;
    forRanks(t.allRanks, [&](int r) {
      out.cutInputs.push_back(ex.tensor(t, r, loc));
      out.cutInputLocs.push_back(loc);
    });
  }
  for (const auto& [name, ranks] : groups) {
    auto it = groupLocs.find(name);
    const SourceLoc& loc = it != groupLocs.end() ? it->second : fileLoc;
    for (int r : ranks)
      if (r < 0 || r >= nranks)
        throw InputError(loc, "rank " + std::to_string(r) + " named but the implementation has " +
                                  std::to_string(nranks) + (nranks == 1 ? " rank" : " ranks") +
                                  " (group " + name + ")");
  }
  return out;
}

}  // namespace tangle
