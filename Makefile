# Entry points for a fresh machine: `make demo` and `make test`.
BUILD ?= build
JOBS ?= $(shell nproc)
# A warm compiler cache makes a fresh clone build in a minute instead of ~10: used when ccache is installed,
# with paths taken relative to the clone so that any clone of the repository hits the same entries.
CCACHE_LAUNCHER := $(if $(shell command -v ccache 2>/dev/null),-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1

.PHONY: deps build demo test clean sanitize fuzz

deps:
	@bash scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CCACHE_LAUNCHER) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	@echo "== tangle check examples/paper/matmul_sub_rs/check.rel --relations   (Entangle paper, Figures 1-2)"
	@$(BUILD)/bin/tangle check examples/paper/matmul_sub_rs/check.rel --relations; rc=$$?; \
	 echo "(exit code $$rc: 0 = refines)"; test $$rc -eq 0
	@echo
	@echo "== tangle check examples/paper/bug4_offdiag/check.rel   (its buggy twin: weights sharded on the wrong dim)"
	@$(BUILD)/bin/tangle check examples/paper/bug4_offdiag/check.rel; rc=$$?; \
	 echo "(exit code $$rc: 1 = violation, as expected)"; test $$rc -eq 1

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	@TANGLE_BIN=$(abspath $(BUILD))/bin/tangle python3 -m pytest -q --durations=15 tests/python $(wildcard tests/mutation)

# ASan + UBSan build of the core and its GoogleTest suites in build-sanitize/, then ctest there.
sanitize: deps
	@JOBS=$(JOBS) bash scripts/sanitize.sh

# libFuzzer on every input reader (fuzz/) for FUZZ_SECONDS each, in build-fuzz/ (clang; skipped without it).
FUZZ_SECONDS ?= 60
fuzz: deps
	@FUZZ_SECONDS=$(FUZZ_SECONDS) JOBS=$(JOBS) bash scripts/fuzz.sh

clean:
	rm -rf $(BUILD)
