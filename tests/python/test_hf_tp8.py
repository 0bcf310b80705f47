"""HF transformers at TP=8: Llama and Qwen2 (q/k/v biases) forward, Llama's training step; one layer.

8 heads and 8 kv heads (one head a rank; `hf.capture_hf(heads=(8, 8))`): the tiny shape's 2 kv heads do
not divide by 8. One capture per (family, forward or training step), shared by the tests of that
configuration (a module-scoped parametrized fixture). A capture is nine processes (the spec and 8 ranks),
so these are traced with the eager frontend (tangle.eager_trace: about half of torch.compile's CPU time;
the same operators, the source lines of the reports are not asserted here): ~18 s of CPU forward, ~30 s
for the training step. The whole file: ~65 s of CPU, ~3 min of wall time at load ~15 on 2 cores.
"""
import contextlib
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))

from tangle import hf  # noqa: E402
from tangle.binary import find_binary, locate_binary  # noqa: E402

TANGLE = find_binary()
LAYER = "model.layers.0."
TP = 8
# Qwen2's training step at TP=8 refines too (same e-nodes max, 13 replayed outputs), but a fourth capture
# takes the file past ~3 min on a loaded machine: run it with `hf.capture_hf("qwen2", 8, 1, DIR,
# heads=(8, 8), backward=True)` when needed.
CONFIGS = [("llama", False), ("qwen2", False), ("llama", True)]


@contextlib.contextmanager
def _env(**values):
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@pytest.fixture(scope="module", params=CONFIGS, ids=[f"{f}-{'fwbw' if bw else 'fw'}" for f, bw in CONFIGS])
def checked(request, tmp_path_factory):
    """(family, backward, HFCapture, spec params, [rank params], check CompletedProcess, JSON report)."""
    pytest.importorskip("torch", reason="PyTorch is not installed (scripts/install-deps.sh installs torch==2.13.0)")
    pytest.importorskip("transformers",
                        reason="transformers is not installed (scripts/install-deps.sh installs transformers==5.23.0)")
    if TANGLE is None:
        pytest.skip(f"{locate_binary()[0]} is not built (or set TANGLE_BIN)")
    family, backward = request.param
    out = tmp_path_factory.mktemp(f"{family}_tp8")
    with _env(TANGLE_CAPTURE_FRONTEND="eager"):
        cap = hf.capture_hf(family, TP, 1, str(out), log=lambda msg: None, heads=(8, 8), backward=backward)
    run = subprocess.run([str(TANGLE), "check", cap.relation, "--json", str(out / "report.json")],
                         capture_output=True, text=True, timeout=900)
    sp = json.loads(open(cap.spec_params).read())
    rps = [json.loads(open(p).read()) for p in cap.impl_params]
    report = json.loads((out / "report.json").read_text()) if (out / "report.json").exists() else {}
    return family, backward, cap, sp, rps, run, report


def test_tp8_refines(checked):
    _, _, cap, _, _, run, report = checked
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines()[0] == "verdict: refines"
    text = open(cap.relation).read()
    expects = [x for x in text.splitlines() if x.startswith("expect ")]
    assert run.stdout.count("expectation holds: ") == sum(TP if " = D*." in x else 1 for x in expects)
    # The bound on the e-graph of one operator, at this degree, with default options.
    assert report["stats"]["enodes_max"] <= 5000, report["stats"]["enodes_max"]
    assert "option " not in text


def _params(rp):
    return {p["fqn"]: p for p in rp["placeholders"] if p["kind"] == "parameter"}


def test_tp8_layouts(checked):
    """Each rank holds an eighth of every sharded parameter: one head (8 dims) of q, k and v."""
    family, backward, _, sp, rps, _, _ = checked
    expect = {LAYER + "self_attn.q_proj.weight": ("Shard(0)", [64, 64], [8, 64]),
              LAYER + "self_attn.k_proj.weight": ("Shard(0)", [64, 64], [8, 64]),
              LAYER + "self_attn.v_proj.weight": ("Shard(0)", [64, 64], [8, 64]),
              LAYER + "self_attn.o_proj.weight": ("Shard(1)", [64, 64], [64, 8]),
              LAYER + "mlp.gate_proj.weight": ("Shard(0)", [128, 64], [16, 64]),
              LAYER + "mlp.down_proj.weight": ("Shard(1)", [64, 128], [64, 16]),
              "lm_head.weight": ("Shard(0)", [128, 64], [16, 64]),
              "model.norm.weight": ("Replicate", [64], [64])}
    if family == "qwen2":
        expect[LAYER + "self_attn.k_proj.bias"] = ("Shard(0)", [64], [8])
    assert sp["config"]["num_attention_heads"] == 8 and sp["config"]["num_key_value_heads"] == 8
    for r, rp in enumerate(rps):
        got = _params(rp)
        assert set(got) == set(_params(sp))
        for fqn, want in expect.items():
            assert (got[fqn]["placement"], got[fqn]["global_shape"], got[fqn]["local_shape"]) == want, (r, fqn)
        if backward:
            grads = {o["fqn"]: o["layout"] for o in rp["outputs"] if o.get("what") == "grad"}
            assert set(grads) == set(got)
            assert grads[LAYER + "self_attn.o_proj.weight"] == "Shard(1)" and grads["model.norm.weight"] == "Replicate"
            assert rp["outputs"][0]["what"] == "loss"
        else:
            assert [o["layout"] for o in rp["outputs"]] == ["Replicate"]


def test_tp8_replay_matches(checked):
    """The written relation holds for values: the spec's outputs equal what the 8 ranks give."""
    cap = checked[2]
    r = subprocess.run([str(TANGLE), "check", cap.relation, "--replay"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and r.stdout.startswith("verdict: refines"), r.stdout + r.stderr
    line = next(x for x in r.stdout.splitlines() if x.startswith("replay: "))
    outputs = sum(1 for x in open(cap.relation).read().splitlines() if x.startswith("output "))
    assert line.startswith(f"replay: {outputs} outputs match"), line


def test_heads_must_divide(tmp_path):
    with pytest.raises(ValueError, match="kv heads must divide by tp=8"):
        hf.capture_hf("llama", TP, 1, str(tmp_path / "out"), heads=(8, 4), log=lambda msg: None)
    assert not (tmp_path / "out").exists()
