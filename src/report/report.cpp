#include "report/report.h"

#include "report/precision.h"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>

namespace tangle {

namespace {

std::string location(const LGraph& lg, int id) {
  const Node& n = lg.origin(id);
  return n.loc.file + ":" + std::to_string(n.loc.line);
}

std::string sourceComment(const LGraph& lg, int id) {
  std::string s = lg.origin(id).source;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string describe(const LGraph& lg, int id) {
  const LNode& n = lg.node(id);
  return fmt::format("{} ({}) at {}", n.name, lg.origin(id).op, location(lg, id));
}

std::string typeOf(const LGraph& lg, int id) {
  const auto* t = lg.node(id).data.tensor();
  return t ? toString(*t) : std::string("?");
}

// The top lemma firings, most first.
std::vector<std::pair<std::string, size_t>> topFirings(const InferStats& s, size_t n) {
  std::vector<std::pair<std::string, size_t>> v;
  for (auto& [k, c] : s.firings)
    if (c > 0) v.push_back({k, c});
  std::sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.second != b.second ? a.second > b.second : a.first < b.first; });
  if (v.size() > n) v.resize(n);
  return v;
}

size_t totalFirings(const InferStats& s) {
  size_t n = 0;
  for (auto& [k, v] : s.firings) n += v;
  return n;
}

// The graph inputs (placeholders, constants, cut points) an operator reads: its operands that are
// inputs, and inputs reached from an operand through a chain of single-operand operators (a linear
// layer's weight behind its permute/view), at most 8 deep. In operand order, without duplicates.
struct InputRead {
  std::string input;                // "S.arg7_1"
  std::vector<std::string> through; // the chain from the operator's operand back to it ("S.permute_3")
};

std::vector<InputRead> inputsRead(const LGraph& lg, int op) {
  std::vector<InputRead> out;
  for (int o : lg.node(op).operands) {
    int cur = lg.resolve(o);
    std::vector<std::string> chain;
    while (!lg.node(cur).isInput && lg.node(cur).operands.size() == 1 && chain.size() < 8) {
      chain.push_back(lg.node(cur).name);
      cur = lg.resolve(lg.node(cur).operands[0]);
    }
    if (!lg.node(cur).isInput) continue;
    const std::string& name = lg.node(cur).name;
    if (std::none_of(out.begin(), out.end(), [&](const InputRead& r) { return r.input == name; }))
      out.push_back({name, std::move(chain)});
  }
  return out;
}

// Where an operand of the failing operator comes from: the operator that computes it (past any chain
// of single-operand operators such as views), and the graph inputs that operator reads. Lets a report
// name the weight of the linear layer whose output is wrong. Empty producer for a graph input.
struct OperandSource {
  std::string tensor;    // the operand ("S._unsafe_view_5")
  int producer = -1;     // "S.mm_3"
  std::vector<InputRead> reads;
};

std::vector<OperandSource> operandSources(const LGraph& lg, int op) {
  std::vector<OperandSource> out;
  for (int o : lg.node(op).operands) {
    int cur = lg.resolve(o);
    for (size_t depth = 0; !lg.node(cur).isInput && lg.node(cur).operands.size() == 1 && depth < 8; ++depth)
      cur = lg.resolve(lg.node(cur).operands[0]);
    if (lg.node(cur).isInput) continue;
    out.push_back({lg.node(lg.resolve(o)).name, cur, inputsRead(lg, cur)});
  }
  return out;
}

std::string readsText(const std::vector<InputRead>& reads) {
  std::string s;
  for (size_t i = 0; i < reads.size(); ++i) {
    s += (i ? ", " : "") + reads[i].input;
    if (!reads[i].through.empty()) s += " (through " + reads[i].through.front() + ")";
  }
  return s;
}

std::string expectationText(const Expectation& e) { return e.lhs.toString() + " = " + e.rhs.toString(); }

void tensorsIn(const RelExpr& e, std::vector<std::string>& out) {
  if (e.kind == RelExpr::Kind::Tensor) {
    std::string n = e.tensor.toString();
    if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  }
  for (auto& a : e.args) tensorsIn(a, out);
}

// For a refused expectation: which operator computes each tensor it names, and its model source line,
// so that a wrong output layout points at the layer that produced it (the lm_head), not only at a name.
void producers(std::ostream& out, const Expectation& x, const LGraph& spec, const LGraph& impl) {
  std::vector<std::string> names;
  tensorsIn(x.lhs, names);
  tensorsIn(x.rhs, names);
  for (auto& n : names) {
    const LGraph& lg = n.rfind("S.", 0) == 0 ? spec : impl;
    auto id = lg.find(n);
    if (!id || lg.node(lg.resolve(*id)).isInput) continue;
    int cur = lg.resolve(*id);  // past views, to the operator that computes the values
    for (size_t depth = 0; !lg.node(cur).isInput && lg.node(cur).operands.size() == 1 && depth < 8; ++depth)
      cur = lg.resolve(lg.node(cur).operands[0]);
    if (lg.node(cur).isInput) cur = lg.resolve(*id);
    out << "  " << n << " is computed by " << describe(lg, cur);
    if (auto reads = inputsRead(lg, cur); !reads.empty()) out << ", which reads " << readsText(reads);
    out << "\n";
    if (auto src = sourceComment(lg, cur); !src.empty()) out << "    source: " << src << "\n";
  }
}


}  // namespace

std::string textReport(const InferResult& r, const LGraph& spec, const LGraph& impl, const RunInfo& info) {
  std::ostringstream out;
  out << "verdict: " << toString(r.verdict) << "\n";
  if (auto note = precisionNote(r, spec, impl); !note.empty()) out << "note: " << note << "\n";
  if (!r.failure) {
    out << "output relation:\n";
    for (auto& o : r.outputs)
      for (auto& e : o.exprs) out << "  " << o.tensor << " = " << formatTerm(e) << "\n";
  }
  if (!info.symbolFacts.empty()) {
    out << "symbolic sizes: assuming\n";
    for (auto& f : info.symbolFacts) out << "  " << f << "\n";
  }
  if (info.allRelations) {
    out << "relations found (R, in spec order):\n";
    for (auto& t : r.all)
      for (auto& e : t.exprs)
        out << "  " << t.tensor << (t.deferred ? " ~ " : " = ") << formatTerm(e) << (t.deferred ? "   (not clean)" : "")
            << "\n";
  }
  if (r.failure) {
    const Failure& f = *r.failure;
    out << "failing operator: " << describe(spec, f.node) << "\n";
    if (auto src = sourceComment(spec, f.node); !src.empty()) out << "  source: " << src << "\n";
    out << "  output " << spec.node(f.tensor).name << " " << typeOf(spec, f.tensor) << ": " << f.reason << "\n";
    if (f.gaveUpAt >= 0)
      out << "  (carried as a non-clean expression until " << describe(spec, f.gaveUpAt)
          << ", where the search stopped)\n";
    if (auto reads = inputsRead(spec, f.node); !reads.empty()) out << "  graph inputs it reads: " << readsText(reads) << "\n";
    if (auto sources = operandSources(spec, f.node); !sources.empty()) {
      out << "  where its inputs come from:\n";
      for (auto& src : sources)
        out << "    " << src.tensor << " <- " << spec.node(src.producer).name << " (" << spec.origin(src.producer).op
            << ")" << (src.reads.empty() ? "" : ", which reads " + readsText(src.reads)) << "\n";
    }
    out << "  known relations of its inputs:\n";
    for (auto& in : f.inputRelations) {
      if (in.exprs.empty()) out << "    " << in.tensor << " = (none)\n";
      for (auto& e : in.exprs) out << "    " << in.tensor << " = " << formatTerm(e) << "\n";
    }
    if (!f.nearbyImpl.empty()) {
      out << "  implementation operators related to it (explored):\n";
      size_t shown = 0;
      for (int d : f.nearbyImpl) {
        if (++shown > 12) {
          out << "    ... " << (f.nearbyImpl.size() - 12) << " more\n";
          break;
        }
        out << "    " << describe(impl, d) << "\n";
      }
    } else {
      out << "  no implementation operator reads only tensors related to its inputs\n";
    }
    for (auto& w : r.notEvaluated) out << "  not related by evaluation: " << w << "\n";
    if (!info.symbolFacts.empty())
      out << "  note: sizes are symbolic; if the implementation is right only for some sizes (e.g. even ones), "
             "say so with `assume` in the relation file\n";
  }
  if (r.failure)  // expectations are checked on the outputs' relations, which were not reached
    for (const Expectation* x : r.uncheckedExpectations)
      out << "expectation not established: " << expectationText(*x) << "  (" << x->loc.file << ":" << x->loc.line
          << "; inference stopped before it)\n";
  for (auto& e : r.expectations) {
    const Expectation& x = *e.expectation;
    out << (e.holds ? "expectation holds: " : e.limitReached ? "expectation not established: " : "expectation refused: ")
        << expectationText(x) << "  (" << x.loc.file << ":" << x.loc.line
        << (e.limitReached ? "; a search limit was reached)\n" : ")\n");
    if (!e.holds) {
      for (auto& k : e.known) out << "  known: " << x.lhs.toString() << " = " << formatTerm(k) << "\n";
      producers(out, x, spec, impl);
    }
  }
  // after the verdict's own lines, which readers find by position
  if (!r.evaluated.empty()) {
    out << "related by evaluation (closed constant tensors, equal values; not assumed):\n";
    for (auto& e : r.evaluated)
      out << "  " << e.spec << " = " << formatTerm(e.expr) << "   (" << e.type << ", " << e.elements << " values)\n";
  }
  const InferStats& s = r.stats;
  out << fmt::format(
      "stats: {:.3f} s (import {:.3f} s), spec ops {}, impl ops {}, operators checked {}, e-nodes max {} total {}, "
      "impl nodes explored {}, lemma firings {}\n",
      s.seconds, info.importSeconds, s.specOps, s.implOps, s.opsProcessed, s.enodesMax, s.enodesTotal,
      s.exploredImplNodes, totalFirings(s));
  if (s.operatorsReused > 0)
    out << fmt::format("reuse: {} of {} operators given an earlier operator's relations, renamed\n", s.operatorsReused,
                       s.opsProcessed);
  if (s.operatorsBlocked > 0)
    out << fmt::format("blocks: {} operators searched on one block and renamed onto the others\n", s.operatorsBlocked);
  if (s.reuseRerun) out << "reuse: the verdict was recomputed without reuse (a verdict other than a refinement is the search's own)\n";
  if (s.blocksRerun)
    out << "blocks: the verdict was recomputed without block search (a verdict other than a refinement is the search's own)\n";
  auto top = topFirings(s, 8);
  if (!top.empty()) {
    out << "lemmas fired:";
    for (auto& [k, v] : top) out << " " << k << "=" << v;
    out << "\n";
  }
  for (auto& c : s.conflicts) out << "warning: type conflict in e-graph: " << c << "\n";
  if (!s.conflicts.empty() && r.verdict == Verdict::Inconclusive && !r.failure)
    out << "inconclusive: values of different types were found equal (inconsistent dumps or a wrong lemma)\n";
  return out.str();
}

nlohmann::json jsonReport(const InferResult& r, const LGraph& spec, const LGraph& impl, const RunInfo& info) {
  using nlohmann::json;
  json j;
  j["schema_version"] = kReportSchemaVersion;
  j["verdict"] = toString(r.verdict);
  if (auto note = precisionNote(r, spec, impl); !note.empty()) j["precision_note"] = note;
  j["relation_file"] = info.relationPath;
  j["spec"] = info.specPath;
  j["impl"] = info.implPaths;
  j["symbol_facts"] = info.symbolFacts;
  json outs = json::array();
  if (!r.failure)
    for (auto& o : r.outputs)
      for (auto& e : o.exprs) outs.push_back({{"tensor", o.tensor}, {"expression", formatTerm(e)}});
  j["output_relation"] = outs;
  json evaluated = json::array();
  for (auto& e : r.evaluated)
    evaluated.push_back({{"tensor", e.spec}, {"expression", formatTerm(e.expr)}, {"type", e.type},
                         {"elements", e.elements}, {"proof", "evaluation"}});
  j["by_evaluation"] = evaluated;
  j["not_evaluated"] = r.notEvaluated;
  if (r.failure) {
    const Failure& f = *r.failure;
    json inputs = json::array();
    for (auto& in : f.inputRelations) {
      json exprs = json::array();
      for (auto& e : in.exprs) exprs.push_back(formatTerm(e));
      inputs.push_back({{"tensor", in.tensor}, {"expressions", exprs}});
    }
    json nearby = json::array();
    for (int d : f.nearbyImpl) nearby.push_back({{"tensor", impl.node(d).name}, {"op", impl.origin(d).op}, {"location", location(impl, d)}});
    json reads = json::array();
    for (auto& r : inputsRead(spec, f.node)) reads.push_back({{"tensor", r.input}, {"through", r.through}});
    json sources = json::array();
    for (auto& src : operandSources(spec, f.node)) {
      json srcReads = json::array();
      for (auto& r : src.reads) srcReads.push_back({{"tensor", r.input}, {"through", r.through}});
      sources.push_back({{"tensor", src.tensor}, {"producer", spec.node(src.producer).name},
                         {"op", spec.origin(src.producer).op}, {"location", location(spec, src.producer)},
                         {"inputs_read", srcReads}});
    }
    j["failure"] = {{"operator", spec.node(f.node).name},
                    {"tensor", spec.node(f.tensor).name},
                    {"op", spec.origin(f.node).op},
                    {"location", location(spec, f.node)},
                    {"source", sourceComment(spec, f.node)},
                    {"reason", f.reason},
                    {"gave_up_at", f.gaveUpAt >= 0 ? json(spec.node(f.gaveUpAt).name) : json(nullptr)},
                    {"limit_reached", f.limitReached},
                    {"input_relations", inputs},
                    {"inputs_read", reads},
                    {"input_sources", sources},
                    {"nearby_impl", nearby}};
  } else {
    j["failure"] = nullptr;
  }
  json exps = json::array();
  for (auto& e : r.expectations) {
    json known = json::array();
    for (auto& k : e.known) known.push_back(formatTerm(k));
    exps.push_back({{"expectation", expectationText(*e.expectation)},
                    {"location", e.expectation->loc.file + ":" + std::to_string(e.expectation->loc.line)},
                    {"holds", e.holds},
                    {"limit_reached", e.limitReached},
                    {"known", known}});
  }
  j["expectations"] = exps;
  json unchecked = json::array();
  for (const Expectation* x : r.uncheckedExpectations) unchecked.push_back(expectationText(*x));
  j["expectations_not_established"] = unchecked;
  const InferStats& s = r.stats;
  j["stats"] = {{"seconds", s.seconds},         {"import_seconds", info.importSeconds},
                {"spec_ops", s.specOps},        {"impl_ops", s.implOps},
                {"operators_checked", s.opsProcessed}, {"enodes_max", s.enodesMax},
                {"enodes", s.enodesTotal},      {"impl_nodes_explored", s.exploredImplNodes},
                {"lemma_firings", totalFirings(s)}, {"firings", s.firings},
                {"conflicts", s.conflicts},
                {"operators_reused", s.operatorsReused}, {"reuse_rerun", s.reuseRerun},
                {"operators_blocked", s.operatorsBlocked}, {"blocks_rerun", s.blocksRerun}};
  return j;
}

}  // namespace tangle
