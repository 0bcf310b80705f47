#!/usr/bin/env bash
# clang and its libFuzzer runtime (Debian 12: clang 14, libclang-rt-14-dev) for
# `make fuzz`. Idempotent and not fatal: exits 1 with a message when they
# cannot be installed, and `make fuzz` then skips.
set -uo pipefail
have() { command -v clang++ >/dev/null 2>&1 &&
  echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' |
  clang++ -x c++ -fsanitize=fuzzer - -o /dev/null >/dev/null 2>&1; }
have && exit 0
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "installing: clang libclang-rt-14-dev (libFuzzer)"
{ $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq clang libclang-rt-14-dev >/dev/null; } ||
  echo "warning: clang / libclang-rt-14-dev could not be installed"
have || { echo "warning: clang++ -fsanitize=fuzzer does not work here; fuzzing is skipped"; exit 1; }
