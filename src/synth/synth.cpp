#include "synth/synth.h"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <fstream>
#include <set>

#include "lemmas/lemma_file.h"
#include "replay/term_eval.h"
#include "synth/frontier.h"
#include "synth/values.h"
#include "validate/lemma_file_check.h"

namespace tangle::synth {

namespace {

struct Candidate {
  std::string expr;    // relation language, over D<r> tensors
  std::string origin;  // "values", "--candidate", "expect at FILE:LINE"
};

struct Target {
  int specNode = -1;
  std::vector<Candidate> candidates;
};

// "S.x = EXPR" (an `expect` statement's syntax) -> spec node and rhs term.
struct ParsedCandidate {
  int specNode = -1;
  eg::Term rhs;
};
ParsedCandidate parseCandidate(const std::string& text, const std::string& where, const PreparedCheck& pc) {
  RelationFile rf = parseRelationText("expect " + text + "\n", where);
  if (rf.expectations.size() != 1) throw InputError({where, 0}, "a candidate is one `S.x = EXPR`, got '" + text + "'");
  rf = rf.expand(static_cast<int>(pc.impl.size()));
  const Expectation& e = rf.expectations.front();
  if (e.lhs.kind != RelExpr::Kind::Tensor || e.lhs.tensor.side != TensorName::Side::Spec)
    throw InputError({where, 0}, "a candidate's left side must be a spec tensor S.name, got '" + e.lhs.toString() + "'");
  auto id = pc.specL->find(e.lhs.tensor.toString());
  if (!id) throw InputError({where, 0}, "unknown spec tensor " + e.lhs.tensor.toString() + " in '" + text + "'");
  return {pc.specL->resolve(*id), replay::termOf(e.rhs, *pc.specL, *pc.implL)};
}

std::string where(const LGraph& lg, int node) {
  const Node& o = lg.origin(node);
  return o.loc.file.empty() ? o.name : fmt::format("{}:{}", o.loc.file, o.loc.line);
}

// Every known relation (input relations, inferred ones, the failed operator's inputs), by spec node.
std::map<int, std::vector<eg::Term>> knownRelations(const PreparedCheck& pc, const InferResult& res) {
  std::map<int, std::vector<eg::Term>> out;
  for (const RelationEntry& r : pc.relation.relations) {
    auto id = pc.specL->find(r.lhs.toString());
    if (!id) continue;
    try {
      out[pc.specL->resolve(*id)].push_back(replay::termOf(r.rhs, *pc.specL, *pc.implL));
    } catch (const InputError&) {
    }
  }
  auto add = [&](const TensorRelations& tr) {
    if (tr.deferred || tr.node < 0) return;
    auto& v = out[pc.specL->resolve(tr.node)];
    for (const eg::Term& t : tr.exprs)
      if (std::find(v.begin(), v.end(), t) == v.end()) v.push_back(t);
  };
  for (const TensorRelations& tr : res.all) add(tr);
  if (res.failure)
    for (const TensorRelations& tr : res.failure->inputRelations) add(tr);
  return out;
}

// Impl tensors that are relations of one spec tensor are one frontier class (replicas).
Classes classesOf(const PreparedCheck& pc, const std::map<int, std::vector<eg::Term>>& rels) {
  std::map<int, int> parent;
  std::function<int(int)> find = [&](int x) {
    auto it = parent.find(x);
    if (it == parent.end() || it->second == x) return x;
    return it->second = find(it->second);
  };
  for (auto& [s, terms] : rels) {
    int first = -1;
    for (const eg::Term& t : terms) {
      auto e = fromTerm(t, *pc.implL);
      if (!e || !e->isLeaf()) continue;
      if (first < 0) first = find(e->leaf);
      else parent[find(e->leaf)] = first;
    }
  }
  Classes out;
  for (auto& [x, p] : parent) out[x] = find(x);
  for (auto& [x, p] : out) out[p] = find(p);
  return out;
}

// Left sides for spec node s: its operator over its operands' relations (a few
// combinations), then its own known relations.
std::vector<Expr> leftSides(const PreparedCheck& pc, int s, const std::map<int, std::vector<eg::Term>>& rels) {
  std::vector<Expr> out;
  for (size_t pick = 0; pick < 2; ++pick) {
    std::function<std::optional<Expr>(int, int)> operand = [&](int o, int depth) -> std::optional<Expr> {
      auto it = rels.find(o);
      if (it != rels.end() && !it->second.empty()) {
        const auto& ts = it->second;
        for (size_t k = 0; k < ts.size(); ++k)  // the pick-th convertible relation, else the first
          if (auto e = fromTerm(ts[(k + pick) % ts.size()], *pc.implL)) return e;
      }
      if (depth > 3) return std::nullopt;  // a spec intermediate without relation: inline its definition
      return specDefinition(*pc.specL, o, [&](int oo) { return operand(oo, depth + 1); });
    };
    auto e = specDefinition(*pc.specL, s, [&](int o) { return operand(o, 0); });
    if (e && std::find(out.begin(), out.end(), *e) == out.end()) out.push_back(*e);
  }
  if (auto it = rels.find(s); it != rels.end())
    for (const eg::Term& t : it->second)
      if (auto e = fromTerm(t, *pc.implL); e && !e->isLeaf()) out.push_back(*e);
  return out;
}

std::vector<Target> targetsOf(const SynthRequest& req, const PreparedCheck& pc, const InferResult& res,
                              std::vector<std::string>& notes) {
  std::vector<Target> out;
  auto targetFor = [&](int s) -> Target& {
    for (Target& t : out)
      if (t.specNode == s) return t;
    out.push_back({s, {}});
    return out.back();
  };
  for (const std::string& c : req.candidates) {
    ParsedCandidate pcand = parseCandidate(c, "--candidate", pc);
    bool proved = false;
    for (const TensorRelations& tr : res.all)
      if (pc.specL->resolve(tr.node) == pcand.specNode)
        for (const eg::Term& t : tr.exprs) proved = proved || t == pcand.rhs;
    bool reached = proved || (res.failure && pc.specL->resolve(res.failure->tensor) == pcand.specNode);
    for (const TensorRelations& tr : res.all) reached = reached || pc.specL->resolve(tr.node) == pcand.specNode;
    std::string rhs = c.substr(c.find('=') + 1);
    rhs.erase(0, rhs.find_first_not_of(" \t"));
    if (!proved && reached) targetFor(pcand.specNode).candidates.push_back({rhs, "--candidate"});
  }
  for (const ExpectationResult& er : res.expectations) {
    if (er.holds || !er.expectation) continue;
    const Expectation& e = *er.expectation;
    if (e.lhs.kind != RelExpr::Kind::Tensor || e.lhs.tensor.side != TensorName::Side::Spec) {
      notes.push_back(fmt::format("{}:{}: expectation {} = {}: its left side is not a spec tensor; not synthesized",
                                  e.loc.file, e.loc.line, e.lhs.toString(), e.rhs.toString()));
      continue;
    }
    auto id = pc.specL->find(e.lhs.tensor.toString());
    if (!id) continue;
    targetFor(pc.specL->resolve(*id)).candidates.push_back(
        {e.rhs.toString(), fmt::format("expect at {}:{}", e.loc.file, e.loc.line)});
  }
  if (res.failure && res.failure->tensor >= 0) {
    int s = pc.specL->resolve(res.failure->tensor);
    Target& t = targetFor(s);
    if (t.candidates.empty()) {
      auto vc = valueCandidates(*pc.specL, *pc.implL, pc.relation, s, req.seed);
      for (const std::string& e : vc.exprs) t.candidates.push_back({e, "values on random inputs"});
      if (vc.exprs.empty())
        notes.push_back(fmt::format("{} ({}): no candidate relation: {}", pc.specL->node(s).name,
                                    where(*pc.specL, s), vc.note));
    }
  }
  return out;
}

std::string sanitize(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ? c : '_';
  return out;
}

// Validates one rule text as a one-lemma file; fills r.result. An accepted
// rule must also pass the quick validation `tangle check --lemmas` runs (its
// cases, attempts and seed), or the file would be refused when loaded.
void validateRule(SynthRule& r, const validate::Options& opts, const CheckRequest& check);
void validateOnce(SynthRule& r, const validate::Options& opts) {
  std::string text = "lemma " + r.name + ": " + r.lhs + "\n    => " + r.rhs + "\n";
  if (!r.conditions.empty()) text += "    if " + r.conditions + "\n";
  try {
    lemmas::LemmaFile f = lemmas::parseLemmaText(text, "<synthesized>");
    auto results = validate::validateFileLemmas(f, opts);
    r.result = results.at(0);
  } catch (const InputError& e) {
    r.result.name = r.name;
    r.result.status = validate::Status::Failed;
    r.result.detail = std::string("not a valid lemma: ") + e.what();
  }
}
void validateRule(SynthRule& r, const validate::Options& opts, const CheckRequest& check) {
  validateOnce(r, opts);
  if (!r.accepted()) return;
  SynthRule quick = r;
  validate::Options qo;
  qo.cases = check.lemmaCases;
  qo.attemptsPerCase = 100;
  validateOnce(quick, qo);
  if (quick.accepted()) return;
  r.result.status = quick.result.status;
  r.result.detail = "validated (" + r.result.method() + ") but not by the quick validation of `tangle check --lemmas` (" +
                    quick.result.detail + ")";
}

// Tries every (left side, candidate) pair of a target; returns true when a rule was accepted.
bool synthesizeTarget(const SynthRequest& req, const PreparedCheck& pc, const Target& t,
                      const std::map<int, std::vector<eg::Term>>& rels, const Classes& classes, SynthReport& rep,
                      std::set<std::string>& tried) {
  const std::string specName = pc.specL->node(t.specNode).name;
  std::vector<Expr> lefts = leftSides(pc, t.specNode, rels);
  if (lefts.empty()) {
    rep.notes.push_back(fmt::format("{} ({}): its operator cannot be written over its inputs' relations", specName,
                                    where(*pc.specL, t.specNode)));
    return false;
  }
  bool anyFrontier = false;
  for (const Candidate& c : t.candidates) {
    ParsedCandidate pcand = parseCandidate(specName + " = " + c.expr, c.origin, pc);
    auto rhs = fromTerm(pcand.rhs, *pc.implL);
    if (!rhs) continue;
    for (const Expr& lhs : lefts) {
      auto f = coarsestFrontier(*pc.implL, lhs, *rhs, classes);
      if (!f) continue;
      anyFrontier = true;
      for (bool general : {true, false}) {
        std::string why;
        auto rt = ruleText(*f, classes, general, &why);
        if (!rt) {
          if (!general) rep.notes.push_back(fmt::format("{} = {}: {}", specName, c.expr, why));
          continue;
        }
        if (!tried.insert(rt->lhs + " => " + rt->rhs).second) continue;
        SynthRule r;
        r.name = fmt::format("synth-{}-{}", sanitize(specName.substr(specName.find('.') + 1)), rep.rules.size() + 1);
        r.lhs = rt->lhs;
        r.rhs = rt->rhs;
        r.target = specName + " = " + c.expr;
        r.origin = fmt::format("candidate from {}; spec {}", c.origin, where(*pc.specL, t.specNode));
        r.generalized = general;
        validateRule(r, req.validation, req.check);
        rep.rules.push_back(r);
        if (r.accepted()) return true;
        if (r.result.status != validate::Status::Failed) continue;
        // Wrong as stated: maybe it holds under the shapes of this model's tensors (their ranks
        // and which sizes are equal). All of them are kept: dropping one because random
        // instances did not refute it would trade a proof obligation for luck.
        auto conds = shapeConditions(*pc.implL, *rt);
        if (conds.empty()) continue;
        SynthRule c = r;
        c.name = fmt::format("synth-{}-{}", sanitize(specName.substr(specName.find('.') + 1)), rep.rules.size() + 1);
        auto joined = [](const std::vector<std::string>& v) {
          std::string out;
          for (const std::string& x : v) out += (out.empty() ? "" : ", ") + x;
          return out;
        };
        c.conditions = joined(conds);
        validateRule(c, req.validation, req.check);
        rep.rules.push_back(c);
        if (c.accepted()) return true;
      }
    }
  }
  if (!anyFrontier && !t.candidates.empty())
    rep.notes.push_back(fmt::format("{} ({}): no shared frontier between its operator and {} candidate(s)", specName,
                                    where(*pc.specL, t.specNode), t.candidates.size()));
  return false;
}

size_t failingExpectations(const InferResult& res) {
  size_t n = res.uncheckedExpectations.size();
  for (const ExpectationResult& e : res.expectations) n += e.holds ? 0 : 1;
  return n;
}

void writeFile(const SynthReport& rep, const SynthRequest& req) {
  std::ofstream f(req.outPath);
  if (!f || !(f << lemmaFileText(rep, req.check.relationPath)))
    throw InputError({req.outPath, 0}, "cannot write the lemma file");
}

}  // namespace

std::string SynthRule::evidence() const {
  if (result.status == validate::Status::Proved) return result.method();
  if (result.status == validate::Status::Tested) return result.method() + " (random instances, reference kernels)";
  return "none";
}

size_t SynthReport::accepted() const {
  size_t n = 0;
  for (const SynthRule& r : rules) n += r.accepted() ? 1 : 0;
  return n;
}

SynthReport synthesize(const SynthRequest& req) {
  {  // an unwritable output fails before any work
    std::ofstream probe(req.outPath, std::ios::app);
    if (!probe) throw InputError({req.outPath, 0}, "cannot write the lemma file");
  }
  SynthReport rep;
  std::set<std::string> tried;
  for (size_t round = 0;; ++round) {
    CheckRequest check = req.check;
    if (rep.accepted()) check.lemmaPaths.push_back(req.outPath);
    auto run = runCheck(check);
    const PreparedCheck& pc = *run->prepared;
    if (round == 0) rep.before = run->result.verdict;
    rep.after = run->result.verdict;
    rep.failingExpectationsAfter = failingExpectations(run->result);
    if (round >= req.rounds) break;
    std::vector<std::string> notes;
    auto targets = targetsOf(req, pc, run->result, notes);
    rep.notes.insert(rep.notes.end(), notes.begin(), notes.end());
    if (targets.empty()) break;
    auto rels = knownRelations(pc, run->result);
    Classes classes = classesOf(pc, rels);
    bool progress = false;
    for (const Target& t : targets)
      if (synthesizeTarget(req, pc, t, rels, classes, rep, tried)) {
        progress = true;
        break;  // re-run the check with it before looking further
      }
    writeFile(rep, req);
    if (!progress) break;
  }
  writeFile(rep, req);
  return rep;
}

std::string lemmaFileText(const SynthReport& r, const std::string& relationPath) {
  std::string out = fmt::format(
      "# Lemmas synthesized by `tangle synth` for {} (docs/lemma-files.md).\n"
      "# Each was validated before it was written: \"proved\" = Z3 proof, \"tested\" = random instances\n"
      "# against the reference kernels (evidence, not a proof). Review them before reuse; `tangle check\n"
      "# --lemmas THIS_FILE` validates them again. Rejected candidates are listed as comments: never used.\n",
      relationPath);
  for (const SynthRule& s : r.rules) {
    if (!s.accepted()) continue;
    out += fmt::format("\n# relation: {}\n# origin: {}\n# evidence: {}{}\nlemma {}: {}\n    => {}\n{}", s.target,
                       s.origin, s.evidence(), s.generalized ? " (attributes generalized)" : "", s.name, s.lhs, s.rhs,
                       s.conditions.empty() ? std::string() : "    if " + s.conditions + "\n");
  }
  for (const SynthRule& s : r.rules) {
    if (s.accepted()) continue;
    out += fmt::format("\n# REJECTED (never used) {}: {} => {}{}\n#   relation: {}\n#   origin: {}\n#   {}: ", s.name,
                       s.lhs, s.rhs, s.conditions.empty() ? std::string() : " if " + s.conditions, s.target, s.origin,
                       s.result.status == validate::Status::Failed ? "counterexample" : "unvalidated");
    for (char c : s.result.detail) out += c == '\n' ? std::string("\n#   ") : std::string(1, c);
    out += "\n";
  }
  return out;
}

std::string reportText(const SynthReport& r, const std::string& outPath) {
  std::string out;
  for (const SynthRule& s : r.rules) {
    if (s.accepted())
      out += fmt::format("accepted {} ({}{}): {} => {}{}\n  for {} ({})\n", s.name, s.evidence(),
                         s.generalized ? ", attributes generalized" : "", s.lhs, s.rhs,
                         s.conditions.empty() ? std::string() : " if " + s.conditions, s.target, s.origin);
    else
      out += fmt::format("REFUSED {} ({}): {} => {}{}\n  for {} ({})\n  {}\n", s.name,
                         s.result.status == validate::Status::Failed ? "wrong" : "unvalidated", s.lhs, s.rhs,
                         s.conditions.empty() ? std::string() : " if " + s.conditions, s.target,
                         s.origin, [&] {
                           std::string d;
                           for (char c : s.result.detail) d += c == '\n' ? std::string("\n  ") : std::string(1, c);
                           return d;
                         }());
  }
  for (const std::string& n : r.notes) out += "note: " + n + "\n";
  out += fmt::format("{} rule(s) accepted, {} refused; written to {}\n", r.accepted(), r.rules.size() - r.accepted(),
                     outPath);
  out += fmt::format("check before: {}; with the synthesized lemmas: {}{}\n", toString(r.before), toString(r.after),
                     r.failingExpectationsAfter ? fmt::format(" ({} expectation(s) not shown)", r.failingExpectationsAfter)
                                                : std::string());
  return out;
}

}  // namespace tangle::synth
