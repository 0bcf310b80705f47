#!/usr/bin/env bash
# `make sanitize`: the C++ core and its GoogleTest suites built with gcc's
# AddressSanitizer + UndefinedBehaviorSanitizer in build-sanitize/, then ctest
# there. Any report fails the run: UB aborts (-fno-sanitize-recover), ASan
# stops at the first error, leaks are reported at exit. The e2e tests run the
# sanitized `tangle` binary, so the CLI is covered too (the pytest suites are not).
#   SANITIZE_TESTS=REGEX  run only the ctest tests matching REGEX (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${SANITIZE_BUILD:-build-sanitize}
JOBS=${JOBS:-$(nproc)}
flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
start=$(date +%s)
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
cmake --build "$BUILD" -j "$JOBS"
built=$(date +%s)
# abort_on_error: a report kills the process with SIGABRT. The sanitizers' default exit code 1 is
# tangle's "violation", so a finding in a CLI run by an e2e test could otherwise pass for a verdict.
export ASAN_OPTIONS="detect_leaks=1:check_initialization_order=1:abort_on_error=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:abort_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
# The e2e tests' hang guard (60 s of CPU per CLI run) is for the normal build; sanitized runs are slower.
export TANGLE_TEST_TIMEOUT=${TANGLE_TEST_TIMEOUT:-600}
args=(--output-on-failure -j "$JOBS")
[ -n "${SANITIZE_TESTS:-}" ] && args+=(-R "$SANITIZE_TESTS")
(cd "$BUILD" && ctest "${args[@]}")
echo "sanitize: build $((built - start)) s, tests $(($(date +%s) - built)) s"
