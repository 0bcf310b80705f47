// The tangle command line: flags -> a CheckRequest -> library calls -> report.
// Exit codes: 0 refines, 1 violation, 2 bad input or usage, 3 inconclusive,
// 4 internal error or a --replay mismatch (a reported relation that does not hold).
// `tangle verify` hands its arguments to python3 -m tangle.verify, whose exit code is the check's.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>

#include <CLI/CLI.hpp>

#include "driver/check.h"
#include "report/html.h"
#include "report/progress.h"
#include "lemmas/lemmas.h"
#include "lemmas/lemma_file.h"
#include "validate/lemma_file_check.h"
#include "validate/validate.h"
#include "propose.h"
#include "synth.h"
#include "verify.h"

namespace {

// The finished check, never freed (see check()). volatile: a store never read back must stay, or a
// leak checker would find the check unreachable.
tangle::CheckRun* volatile finishedCheck = nullptr;

int check(const std::vector<std::string>& positional, const std::vector<std::string>& impl,
          const std::string& relation, const std::string& jsonOut, bool allRelations,
          const std::optional<tangle::replay::ReplayOptions>& replay, const std::vector<std::string>& lemmaFiles,
          bool trustUnvalidated, const std::string& htmlOut, bool quiet, bool forceProgress,
          const std::vector<std::string>& options, const std::vector<std::string>& withoutLemmas, size_t jobs) {
  tangle::CheckRequest req;
  req.options = options;
  req.withoutLemmas = withoutLemmas;
  req.jobs = jobs;
  req.lemmaPaths = lemmaFiles;
  req.trustUnvalidated = trustUnvalidated;
  req.implPaths = impl;
  req.replay = replay;
  if (!relation.empty()) {
    req.relationPath = relation;
    if (positional.size() > 1) throw tangle::InputError({}, "usage: tangle check SPEC --impl R0 R1 ... --relation REL");
    if (positional.size() == 1) req.specPath = positional[0];
  } else {
    if (positional.size() != 1)
      throw tangle::InputError({}, "usage: tangle check REL  |  tangle check SPEC --impl R0 R1 ... --relation REL");
    req.relationPath = positional[0];
  }
  std::ofstream html;  // opened first: an unwritable path fails before the check runs
  if (!htmlOut.empty()) {
    html.open(htmlOut);
    if (!html) throw tangle::InputError({htmlOut, 0}, "cannot write the HTML report");
  }
  struct RemoveUnfinished {  // a check that throws leaves no empty page behind
    std::ofstream& f;
    const std::string& path;
    ~RemoveUnfinished() {
      if (f.is_open()) std::remove(path.c_str());
    }
  } removeUnfinished{html, htmlOut};
  tangle::ProgressLine progress(stderr, !quiet && (forceProgress || tangle::ProgressLine::stderrIsTerminal()));
  req.onOperator = [&](size_t done, size_t total, const tangle::LGraph& spec, int node) {
    progress.update(done, total, spec, node);
  };
  auto run = tangle::runCheck(req);
  progress.clear();
  tangle::PreparedCheck& pc = *run->prepared;
  std::cerr << pc.lemmaWarnings;
  pc.info.allRelations = allRelations;
  std::string text = tangle::textReport(run->result, *pc.specL, *pc.implL, pc.info);
  std::cout << text;
  if (run->replay) std::cout << run->replay->text();
  if (html.is_open()) {
    html << tangle::htmlReport(run->result, *pc.specL, *pc.implL, pc.info,
                               text + (run->replay ? run->replay->text() : std::string()));
    html.close();
    if (!html) throw tangle::InputError({htmlOut, 0}, "cannot write the HTML report");
  }
  if (!jsonOut.empty()) {
    std::ofstream f(jsonOut);
    if (!f) throw tangle::InputError({jsonOut, 0}, "cannot write the JSON report");
    auto j = tangle::jsonReport(run->result, *pc.specL, *pc.implL, pc.info);
    if (run->replay) j["replay"] = run->replay->json();
    f << j.dump(2) << "\n";
  }
  int code = run->replay && run->replay->exitCode() ? *run->replay->exitCode() : tangle::exitCodeOf(run->result.verdict);
  // The process ends here: freeing the graphs and e-graphs one node at a time would take ~4%
  // of a 256-rank check. Kept reachable from a global, so leak checkers stay quiet.
  finishedCheck = run.release();
  return code;
}

// The lemma files named by --lemmas, merged and installed (custom op types and semantics).
tangle::lemmas::LemmaFile loadLemmaFiles(const std::vector<std::string>& paths) {
  std::vector<tangle::lemmas::LemmaFile> files;
  for (const std::string& p : paths) files.push_back(tangle::lemmas::parseLemmaFile(p));
  if (files.empty()) return {};
  auto file = tangle::lemmas::mergeLemmaFiles(std::move(files));
  tangle::validate::installCustomOps(file);
  return file;
}

int listLemmas(const std::vector<std::string>& lemmaFiles) {
  auto file = loadLemmaFiles(lemmaFiles);  // bad files fail before anything is printed
  for (const auto& l : tangle::lemmas::lemmaTable()) std::cout << l.rule.name << "\t" << l.doc << "\n";
  for (const auto& l : file.lemmas)
    std::cout << l.lemma.rule.name << "\t" << l.lemma.doc << "\t(" << l.loc.file << ":" << l.loc.line << ")\n";
  return 0;
}

// Exit 0 when every lemma is proved or tested, 1 when one failed or stayed unvalidated.
int validateLemmas(const tangle::validate::Options& opts, const std::vector<std::string>& lemmaFiles) {
  auto file = loadLemmaFiles(lemmaFiles);
  auto start = std::chrono::steady_clock::now();
  auto results = tangle::validate::validateLemmas(tangle::lemmas::lemmaTable(), opts);
  auto fileResults = tangle::validate::validateFileLemmas(file, opts);
  results.insert(results.end(), fileResults.begin(), fileResults.end());
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << tangle::validate::formatReport(results, secs);
  return tangle::validate::allValidated(results) ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tangle: proves a distributed model implementation refines its sequential spec"};
  app.require_subcommand(1);
  std::vector<std::string> positional, impl;
  std::string relation, jsonOut;
  bool allRelations = false;
  auto* checkCmd = app.add_subcommand("check", "check that the implementation refines the spec");
  checkCmd->add_option("files", positional, "REL, or SPEC with --relation");
  checkCmd->add_option("--impl", impl, "implementation graphs, one per rank, in rank order");
  checkCmd->add_option("--relation,-r", relation, "relation file (input relation, expectations, options)");
  checkCmd->add_option("--json", jsonOut, "also write the report as JSON to this file");
  checkCmd->add_flag("--relations", allRelations, "also print the relation found for every spec tensor");
  std::string htmlOut;
  checkCmd->add_option("--html", htmlOut, "also write the report as one self-contained HTML page (drawing by Graphviz's dot)");
  bool quiet = false;
  checkCmd->add_flag("--quiet,-q", quiet, "no progress line on stderr (it is drawn only on a terminal, after ~2 s)");
  bool forceProgress = false;
  checkCmd->add_flag("--progress", forceProgress,
                     "draw the progress line even when stderr is not a terminal (for front ends that relay it)");
  bool replay = false;
  tangle::replay::ReplayOptions replayOpts;
  auto* replayFlag = checkCmd->add_flag("--replay", replay,
                     "run both graphs on random inputs: check the output relations (exit 4 if one fails) or "
                     "print a counterexample for a violation");
  checkCmd->add_option("--seed", replayOpts.seed, "first random seed of --replay")
      ->capture_default_str()
      ->needs(replayFlag);
  std::vector<std::string> lemmaFiles;
  bool trustUnvalidated = false;
  checkCmd->add_option("--lemmas", lemmaFiles, "lemma files (docs/lemma-files.md): validated, then used with the built-ins");
  checkCmd->add_flag("--trust-unvalidated", trustUnvalidated,
                     "use file lemmas that cannot be validated (about opaque ops); prints a warning");
  std::vector<std::string> options;
  checkCmd->add_option("--option", options, "KEY=VALUE: set an option over the relation file's (e.g. reuse=0)");
  std::vector<std::string> withoutLemmas;
  checkCmd->add_option("--without-lemma", withoutLemmas, "leave this lemma out (reproduce a gap); repeatable");
  size_t jobs = 1;
  checkCmd->add_option("--jobs,-j", jobs, "threads (the same verdict, relations and report for any N)")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  auto* lemmasCmd = app.add_subcommand("lemmas", "list the lemma library");
  lemmasCmd->add_option("--lemmas", lemmaFiles, "also list / validate the lemmas of these lemma files");
  bool validate = false;
  tangle::validate::Options validateOpts;
  lemmasCmd->add_flag("--validate", validate,
                      "check every lemma on random instances (Z3 proofs for rearrangements); exit 1 on a failure");
  lemmasCmd->add_option("--seed", validateOpts.seed, "random seed of --validate")->capture_default_str();
  lemmasCmd->add_option("--cases", validateOpts.cases, "instances per lemma for --validate")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  std::vector<std::string> verifyArgs;
  auto* verifyCmd = app.add_subcommand(
      "verify",
      "capture a model (hf:llama, hf:qwen2, torchtitan:llama3, or MODULE:build) and its ranks, write the relation and check it "
      "(runs python3 -m tangle.verify; see tangle verify --help)");
  verifyCmd->prefix_command();  // everything after `verify` goes to the Python front end, --help included
  verifyCmd->set_help_flag();
  auto* sweepCmd = app.add_subcommand(
      "sweep", "verify a grid of plans (targets x ranks x layers x options) with a process pool or on a Ray cluster "
               "(runs python3 -m tangle.sweep; see tangle sweep --help)");
  sweepCmd->prefix_command();
  sweepCmd->set_help_flag();
  auto* equivCmd = app.add_subcommand(
      "equiv", "HF transformers vs vLLM (qwen2, llama): capture both, propose the relation from values, check it "
               "(runs python3 -m tangle.equiv; see tangle equiv --help)");
  equivCmd->prefix_command();
  equivCmd->set_help_flag();
  std::vector<std::string> proposeFiles;
  std::string proposeOut;
  auto* proposeCmd = app.add_subcommand(
      "propose", "propose relations between two frameworks' tensors from values recorded on one input "
                 "(SPEC.values.json IMPL.values.json); prints or writes a relation file to review");
  proposeCmd->add_option("values", proposeFiles, "SPEC.values.json IMPL.values.json")->required()->expected(2);
  proposeCmd->add_option("--out,-o", proposeOut, "write the relation file here (default: print it)");
  bool proposeLocalize = false;
  proposeCmd->add_flag("--localize", proposeLocalize,
                       "instead: report the first spec tensor whose values no implementation tensor holds");
  std::vector<std::string> proposeExtra;
  proposeCmd->add_option("--tensor", proposeExtra, "also relate this spec intermediate (a cut point; repeatable)");
  tangle::cli::SynthArgs synthArgs;
  auto* synthCmd = tangle::cli::addSynthCommand(app, synthArgs);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "tangle: error: " << e.what() << " (see tangle --help)\n";
    return 2;
  }
  try {
    if (*verifyCmd) {
      verifyArgs = verifyCmd->remaining();
      return tangle::cli::forwardToPython(argv[0], "verify", verifyArgs);
    }
    if (*sweepCmd) return tangle::cli::forwardToPython(argv[0], "sweep", sweepCmd->remaining());
    if (*checkCmd) return check(positional, impl, relation, jsonOut, allRelations,
                                    replay ? std::optional(replayOpts) : std::nullopt, lemmaFiles, trustUnvalidated,
                                    htmlOut, quiet, forceProgress, options, withoutLemmas, jobs);
    if (*equivCmd) return tangle::cli::forwardToPython(argv[0], "equiv", equivCmd->remaining());
    if (*proposeCmd && proposeLocalize) return tangle::cli::localize(proposeFiles[0], proposeFiles[1]);
    if (*proposeCmd) return tangle::cli::propose(proposeFiles[0], proposeFiles[1], proposeOut, proposeExtra);
    if (*synthCmd) return tangle::cli::runSynth(synthArgs);
    if (*lemmasCmd) return validate ? validateLemmas(validateOpts, lemmaFiles) : listLemmas(lemmaFiles);
  } catch (const tangle::InputError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "tangle: internal error: " << e.what() << "\n";
    return 4;
  }
  return 2;
}
