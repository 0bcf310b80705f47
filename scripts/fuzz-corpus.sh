#!/usr/bin/env bash
# Assembles the seed corpora of the fuzz targets (fuzz/) from the repository's
# own inputs: OUT/<reader>/ gets copies of examples/ and tests/data files of
# that format, plus the inputs that once crashed a reader (tests/data/fuzz/).
# Nothing generated is committed; rerunning refreshes the seeds and keeps
# what the fuzzer added to OUT.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/fuzz-corpus.sh OUT}
seed() {  # seed READER FIND-PATTERN
  mkdir -p "$out/$1"
  find examples tests/data docs -type f -name "$2" -not -path '*/fuzz/*' -print0 |
    while IFS= read -r -d '' f; do cp "$f" "$out/$1/seed-$(echo "$f" | tr '/' '_')"; done
}
seed fx '*.py'
seed hlo '*.hlo'
seed json '*.json'
seed relation '*.rel'
seed lemma '*.lemmas'
# Symbolic sizes: the type annotations of the FX dumps ("f32[s0, 8]", "Sym(s0)")
# and the two sides of `assume` statements, one per file.
mkdir -p "$out/sym"
{ grep -rhoE '"(Sym\([^"]*\)|[a-z0-9]+\[[^"]*\])"' examples tests/data --include='*.py' | tr -d '"'
  grep -rhE '^assume ' examples tests/data --include='*.rel' | sed -E 's/^assume //; s/ *(==|<=|>=|<|>) */\n/'
} | sort -u | head -n 400 | { i=0; while IFS= read -r line; do
    printf '%s' "$line" >"$out/sym/seed-$i"; i=$((i + 1)); done; }
for r in fx hlo json relation lemma sym; do
  [ -d "tests/data/fuzz/$r" ] && cp tests/data/fuzz/$r/* "$out/$r/" 2>/dev/null || true
  echo "$r: $(ls "$out/$r" | wc -l) inputs"
done
