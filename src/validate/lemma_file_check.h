// Lemma files in the validator: the interpreter semantics of their defined
// operators, and the validation of their lemmas (a lemma that mentions an
// opaque operator is never exercised: it stays unvalidated).
#pragma once

#include <string>
#include <vector>

#include "lemmas/lemma_file.h"
#include "validate/validate.h"

namespace tangle::validate {

// Registers type inference (ops) and interpreter semantics (interp) for the
// file's defined operators: both expand the definition.
void installCustomOps(const lemmas::LemmaFile& file);

// One result per lemma of the file, in file order. Call installCustomOps first.
std::vector<LemmaResult> validateFileLemmas(const lemmas::LemmaFile& file, const Options& opts);

// Throws InputError "FILE:LINE: error: lemma NAME is wrong: ..." for the first
// failed lemma, and for the first unvalidated one unless `trustUnvalidated`
// (then the returned text holds one loud warning line per trusted lemma).
std::string requireValidated(const lemmas::LemmaFile& file, const std::vector<LemmaResult>& results,
                             bool trustUnvalidated);

}  // namespace tangle::validate
