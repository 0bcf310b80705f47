// `tangle synth REL --out FILE.lemmas`: lemma synthesis for the gaps of a check
// (src/synth/synth.h). Exit 0 when the check refines with the written lemmas,
// 1 when it still does not (rules refused or none found), 2 on bad input.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "synth/synth.h"

namespace tangle::cli {

struct SynthArgs {
  std::string relation;
  synth::SynthRequest req;
  bool quiet = false;
};

CLI::App* addSynthCommand(CLI::App& app, SynthArgs& a);
int runSynth(SynthArgs& a);

}  // namespace tangle::cli
