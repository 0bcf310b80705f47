#include "synth.h"

#include <iostream>

namespace tangle::cli {

CLI::App* addSynthCommand(CLI::App& app, SynthArgs& a) {
  auto* cmd = app.add_subcommand(
      "synth", "synthesize lemmas for the relations a check cannot prove (values agree, no rule connects them): "
               "validate each (Z3 or random tests), write the accepted ones to a lemma file, re-check with it");
  cmd->add_option("relation", a.relation, "relation file of the check")->required();
  cmd->add_option("--out,-o", a.req.outPath, "lemma file to write (accepted rules; refused ones as comments)")
      ->required();
  cmd->add_option("--candidate", a.req.candidates,
                  "'S.x = EXPR': a relation to prove (e.g. from tangle propose); repeatable. Without one, "
                  "candidates for the first unproved spec tensor come from values on random inputs, and every "
                  "failing `expect` is one");
  cmd->add_option("--lemmas", a.req.check.lemmaPaths, "lemma files used by the check (validated)");
  cmd->add_option("--without-lemma", a.req.check.withoutLemmas,
                  "leave this lemma out of the check (reproduce a gap); repeatable");
  cmd->add_option("--option", a.req.check.options, "KEY=VALUE: set an option over the relation file's");
  cmd->add_option("--rounds", a.req.rounds, "re-checks with the new rules, at most")->capture_default_str();
  a.req.validation.cases = 20;
  cmd->add_option("--cases", a.req.validation.cases, "validation instances per rule")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--seed", a.req.seed, "random seed (value candidates and validation)")->capture_default_str();
  return cmd;
}

int runSynth(SynthArgs& a) {
  a.req.check.relationPath = a.relation;
  a.req.validation.seed = a.req.seed;
  auto rep = synth::synthesize(a.req);
  std::cout << synth::reportText(rep, a.req.outPath);
  return rep.refines() ? 0 : 1;
}

}  // namespace tangle::cli
