#include "report/html.h"

#include <fmt/format.h>

#include "report/graphviz.h"
#include "report/neighbourhood.h"
#include "report/progress.h"

namespace tangle {

namespace {

std::string esc(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

const char* kStyle = R"(
body { font-family: sans-serif; margin: 2em; color: #222; max-width: 80em; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
.verdict { display: inline-block; padding: .2em .7em; border-radius: .3em; font-weight: bold; color: white; }
.refines { background: #2a7a2a; } .violation { background: #b00000; } .inconclusive { background: #a06a00; }
table { border-collapse: collapse; } td, th { border: 1px solid #ccc; padding: .25em .6em; text-align: left;
  vertical-align: top; } code, pre { font-family: monospace; } pre { background: #f6f6f6; padding: .8em; overflow-x: auto; }
.note { color: #666; } .drawing { overflow-x: auto; }
)";

void row(std::string& h, const std::string& k, const std::string& v) {
  h += "<tr><th>" + esc(k) + "</th><td>" + v + "</td></tr>\n";
}

void outputRelation(std::string& h, const InferResult& r) {
  h += "<h2>Output relation</h2>\n<p>The spec outputs, expressed over the implementation's tensors:</p>\n"
       "<table class=\"outputs\"><tr><th>spec output</th><th>=</th></tr>\n";
  for (auto& o : r.outputs)
    for (auto& e : o.exprs) h += "<tr><td><code>" + esc(o.tensor) + "</code></td><td><code>" + esc(formatTerm(e)) + "</code></td></tr>\n";
  h += "</table>\n";
}

void drawing(std::string& h, const Neighbourhood& nb) {
  std::string why;
  auto svg = renderSvg(nb.dot, why);
  if (!svg) {
    h += "<p class=\"note\">No drawing: " + esc(why) + ". The neighbourhood is listed below.</p>\n";
    return;
  }
  // Hovering a box shows its model source line: each node's SVG <title> (Graphviz writes the DOT id there).
  for (auto& d : nb.nodes) {
    std::string from = "<title>" + d.id + "</title>";
    std::string to = "<title>" + esc(d.name + " (" + d.op + ") at " + d.location + (d.source.empty() ? "" : "\n" + d.source)) + "</title>";
    if (size_t at = svg->find(from); at != std::string::npos) svg->replace(at, from.size(), to);
  }
  h += "<div class=\"drawing\">\n" + *svg + "</div>\n";
}

void failure(std::string& h, const Failure& f, const LGraph& spec, const LGraph& impl) {
  const Node& o = spec.origin(f.node);
  h += f.limitReached ? "<h2>Operator where the search stopped (a limit was reached)</h2>\n<table class=\"failure\">\n"
                      : "<h2>Failing operator</h2>\n<table class=\"failure\">\n";
  row(h, "operator", "<code class=\"failing-operator\">" + esc(spec.node(f.node).name) + "</code> (" + esc(o.op) + ")");
  row(h, "at", esc(o.loc.file + ":" + std::to_string(o.loc.line)));
  if (!o.source.empty()) row(h, "model source", "<code>" + esc(o.source) + "</code>");
  row(h, "output", "<code>" + esc(spec.node(f.tensor).name) + "</code>");
  row(h, "reason", esc(f.reason));
  if (f.gaveUpAt >= 0) row(h, "search stopped at", "<code>" + esc(spec.node(f.gaveUpAt).name) + "</code>");
  h += "</table>\n<h2>Known relations of its inputs</h2>\n<table class=\"input-relations\">\n";
  for (auto& in : f.inputRelations) {
    std::string exprs;
    for (auto& e : in.exprs) exprs += "<code>" + esc(formatTerm(e)) + "</code><br>";
    h += "<tr><td><code>" + esc(in.tensor) + "</code></td><td>" + (exprs.empty() ? "(none)" : exprs) + "</td></tr>\n";
  }
  h += "</table>\n<h2>Neighbourhood</h2>\n<p>Spec operators around it (blue, the failing one red), the implementation "
       "operators on each rank that inference compared it with (green), and the relations known for its inputs "
       "(notes, dashed, naming implementation tensors in yellow). Hover a box for its model source line.</p>\n";
  Neighbourhood nb = failureNeighbourhood(f, spec, impl);
  drawing(h, nb);
  h += "<table class=\"nodes\"><tr><th>tensor</th><th>where</th><th>operator</th><th>at</th><th>model source</th></tr>\n";
  for (auto& d : nb.nodes)
    h += "<tr><td><code>" + esc(d.name) + "</code></td><td>" + (d.spec ? "spec" : "rank " + std::to_string(d.rank)) +
         "</td><td>" + esc(d.op) + "</td><td>" + esc(d.location) + "</td><td><code>" + esc(shortSource(d.source)) +
         "</code></td></tr>\n";
  h += "</table>\n";
}

void stats(std::string& h, const InferResult& r, const RunInfo& info) {
  const InferStats& s = r.stats;
  size_t firings = 0;
  for (auto& [k, v] : s.firings) firings += v;
  h += "<h2>Stats</h2>\n<table class=\"stats\">\n";
  row(h, "time", fmt::format("{:.3f} s (import {:.3f} s)", s.seconds, info.importSeconds));
  row(h, "spec operators", std::to_string(s.specOps));
  row(h, "implementation operators", std::to_string(s.implOps));
  row(h, "operators checked", std::to_string(s.opsProcessed));
  row(h, "e-nodes", fmt::format("max {}, total {}", s.enodesMax, s.enodesTotal));
  row(h, "implementation nodes explored", std::to_string(s.exploredImplNodes));
  row(h, "lemma firings", std::to_string(firings));
  h += "</table>\n";
}

}  // namespace

std::string htmlReport(const InferResult& r, const LGraph& spec, const LGraph& impl, const RunInfo& info,
                       const std::string& textReport) {
  std::string verdict = toString(r.verdict);
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>tangle: " + esc(verdict) +
                  " (" + esc(info.relationPath) + ")</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n";
  h += "<h1>tangle check <code>" + esc(info.relationPath) + "</code></h1>\n";
  h += "<p>verdict: <span class=\"verdict " + esc(verdict) + "\" id=\"verdict\">" + esc(verdict) + "</span></p>\n";
  h += "<table class=\"inputs\">\n";
  row(h, "spec", "<code>" + esc(info.specPath) + "</code>");
  std::string impls;
  for (auto& p : info.implPaths) impls += "<code>" + esc(p) + "</code><br>";
  row(h, "implementation", impls);
  h += "</table>\n";
  if (!r.failure) outputRelation(h, r);  // also when an expectation is refused: the relation found
  if (r.failure) failure(h, *r.failure, spec, impl);
  if (!r.expectations.empty()) {
    h += "<h2>Expectations</h2>\n<table class=\"expectations\">\n";
    for (auto& e : r.expectations) {
      std::string known;
      for (auto& k : e.known) known += "<br>known: <code>" + esc(e.expectation->lhs.toString() + " = " + formatTerm(k)) + "</code>";
      h += "<tr><td>" + std::string(e.holds ? "holds" : "refused") + "</td><td><code>" +
           esc(e.expectation->lhs.toString() + " = " + e.expectation->rhs.toString()) + "</code>" +
           (e.holds ? "" : known) + "</td></tr>\n";
    }
    h += "</table>\n";
  }
  if (!info.symbolFacts.empty()) {
    h += "<h2>Symbolic sizes</h2>\n<p>The verdict holds assuming:</p>\n<ul>\n";
    for (auto& f : info.symbolFacts) h += "<li><code>" + esc(f) + "</code></li>\n";
    h += "</ul>\n";
  }
  stats(h, r, info);
  h += "<h2>Text report</h2>\n<pre>" + esc(textReport) + "</pre>\n</body>\n</html>\n";
  return h;
}

}  // namespace tangle
