#!/usr/bin/env bash
# `make fuzz FUZZ_SECONDS=N`: builds the libFuzzer targets of fuzz/ with clang
# (-fsanitize=fuzzer,address,undefined) in build-fuzz/ and runs each for N
# seconds on its corpus (build-fuzz/corpus/<reader>, seeded by
# scripts/fuzz-corpus.sh). A crash, a sanitizer report, a leak, an input
# slower than FUZZ_TIMEOUT s, more than FUZZ_RSS_MB of memory or one malloc
# over FUZZ_MALLOC_MB fails the run; the input is left in
# build-fuzz/artifacts/<reader>/ (add it to tests/data/fuzz/<reader>/ once fixed).
#   FUZZ_TARGETS="fx json"  only these readers (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${FUZZ_BUILD:-build-fuzz}
SECONDS_EACH=${FUZZ_SECONDS:-60}
TARGETS=${FUZZ_TARGETS:-fx hlo json relation lemma sym}
JOBS=${JOBS:-$(nproc)}
if ! bash scripts/install-fuzz-deps.sh; then
  echo "fuzz: SKIPPED (no clang with libFuzzer on this machine)"
  exit 0
fi
flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$BUILD" -DTANGLE_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "${launcher[@]}" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
cmake --build "$BUILD" -j "$JOBS" --target $(for t in $TARGETS; do printf 'fuzz_%s ' "$t"; done)
bash scripts/fuzz-corpus.sh "$BUILD/corpus" >/dev/null
export ASAN_OPTIONS="detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
failed=()
for t in $TARGETS; do
  mkdir -p "$BUILD/artifacts/$t" "$BUILD/logs"
  dict=(); [ -f "fuzz/$t.dict" ] && dict=(-dict="fuzz/$t.dict")
  log="$BUILD/logs/$t.log"
  echo "== fuzz_$t for ${SECONDS_EACH} s (log: $log)"
  if "$BUILD/bin/fuzz_$t" "$BUILD/corpus/$t" "${dict[@]}" -max_total_time="$SECONDS_EACH" \
      -timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb="${FUZZ_RSS_MB:-2048}" -malloc_limit_mb="${FUZZ_MALLOC_MB:-512}" \
      -detect_leaks=1 -print_final_stats=1 -artifact_prefix="$BUILD/artifacts/$t/" >"$log" 2>&1; then
    status=ok
  else
    status=FAILED; failed+=("$t")
  fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' "$log" | tail -1)
  echo "   $status: ${execs:-?} executions, ${cov:-no coverage line}, corpus $(ls "$BUILD/corpus/$t" | wc -l) files"
  [ "$status" = ok ] || grep -E 'ERROR|SUMMARY|Test unit written|fuzz: bad' "$log" | head -5 | sed 's/^/   /'
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: FAILED: ${failed[*]} (inputs in $BUILD/artifacts/)"
  exit 1
fi
echo "fuzz: no crash, hang, leak or bad error message in ${TARGETS// /, }"
