# Entry points for a fresh machine: `make demo` and `make test`.
BUILD ?= build
JOBS ?= $(shell nproc)

.PHONY: deps build demo test clean

deps:
	@bash scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	@echo "== tangle check examples/paper/matmul_sub/check.rel"
	@$(BUILD)/bin/tangle check examples/paper/matmul_sub/check.rel; rc=$$?; \
	 echo "(exit code $$rc)"; test $$rc -eq 0

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	@if [ -d tests/python ]; then python3 -m pytest -q tests/python; fi

clean:
	rm -rf $(BUILD)
