"""HF transformers at TP=4: Llama (GQA), Qwen2 (q/k/v biases) and Phi-3 (fused qkv / gate_up), one
layer, forward and one training step (`--backward`), each through `tangle verify` as a user runs it.

One capture per (family, forward or training step), shared by the tests of that configuration (a
module-scoped parametrized fixture: five spawned processes each, ~40-60 s under load). At TP=4 the
tiny shape's 2 kv heads do not divide, so tangle.hf uses 8 heads / 4 kv heads (one kv head a rank).
"""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))

from tangle.binary import find_binary, locate_binary  # noqa: E402

TANGLE = find_binary()
LAYER = "model.layers.0."
TP = 4
CONFIGS = [(f, bw) for bw in (False, True) for f in ("llama", "qwen2", "phi3")]


@pytest.fixture(scope="module", params=CONFIGS, ids=[f"{f}-{'fwbw' if bw else 'fw'}" for f, bw in CONFIGS])
def verified(request, tmp_path_factory):
    """(family, backward, CompletedProcess, out dir, spec params, [rank params], report)."""
    pytest.importorskip("torch", reason="PyTorch is not installed (scripts/install-deps.sh installs torch==2.13.0)")
    pytest.importorskip("transformers",
                        reason="transformers is not installed (scripts/install-deps.sh installs transformers==5.23.0)")
    if TANGLE is None:
        pytest.skip(f"{locate_binary()[0]} is not built (or set TANGLE_BIN)")
    family, backward = request.param
    out = tmp_path_factory.mktemp(f"{family}_tp4") / "out"
    cmd = [str(TANGLE), "verify", f"hf:{family}", "--tp", str(TP), "--layers", "1", "--out", str(out)]
    run = subprocess.run(cmd + (["--backward"] if backward else []), capture_output=True, text=True,
                         env=dict(os.environ, TANGLE_BIN=str(TANGLE)), timeout=900)
    if not (out / "check.rel").exists():
        pytest.fail(f"tangle verify left no capture:\n{run.stdout}{run.stderr}")
    sp = json.loads((out / "spec.params.json").read_text())
    rps = [json.loads((out / f"impl.r{r}.params.json").read_text()) for r in range(TP)]
    report = json.loads((out / "report.json").read_text())
    return family, backward, run, out, sp, rps, report


def test_tp4_refines(verified):
    family, backward, run, out, _, _, report = verified
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines()[0] == "verdict: refines"
    assert "8 heads / 4 kv heads" in run.stderr + run.stdout
    expects = [x for x in (out / "check.rel").read_text().splitlines() if x.startswith("expect ")]
    # a `D*` side is one expectation per rank; a shard/concat one spans the ranks
    assert run.stdout.count("expectation holds: ") == sum(TP if " = D*." in x else 1 for x in expects)
    assert report["verify"]["backward"] is backward
    # The bound on the e-graph of one operator holds at this degree with default options.
    assert report["stats"]["enodes_max"] <= 5000, report["stats"]["enodes_max"]
    assert "option " not in (out / "check.rel").read_text()


def _params(rp):
    return {p["fqn"]: p for p in rp["placeholders"] if p["kind"] == "parameter"}


def test_tp4_layouts(verified):
    """Each rank holds a quarter of every sharded parameter (one kv head of 8 dims each)."""
    family, backward, _, _, sp, rps, _ = verified
    if family == "phi3":
        expect = {LAYER + "self_attn.qkv_proj.weight": ("Shard(0)", [128, 64], [32, 64]),  # q 64 + k 32 + v 32
                  LAYER + "mlp.gate_up_proj.weight": ("Shard(0)", [256, 64], [64, 64])}
    else:
        expect = {LAYER + "self_attn.q_proj.weight": ("Shard(0)", [64, 64], [16, 64]),
                  LAYER + "self_attn.k_proj.weight": ("Shard(0)", [32, 64], [8, 64]),
                  LAYER + "mlp.gate_proj.weight": ("Shard(0)", [128, 64], [32, 64])}
        if family == "qwen2":
            expect[LAYER + "self_attn.k_proj.bias"] = ("Shard(0)", [32], [8])
    expect.update({LAYER + "self_attn.o_proj.weight": ("Shard(1)", [64, 64], [64, 16]),
                   LAYER + "mlp.down_proj.weight": ("Shard(1)", [64, 128], [64, 32]),
                   "lm_head.weight": ("Shard(0)", [128, 64], [32, 64]),
                   "model.norm.weight": ("Replicate", [64], [64])})
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


def test_tp4_replay_matches(verified):
    """The relation is replay-checked on values (the mask construction, RoPE tables and every layer
    evaluated by the reference kernels): the spec's outputs equal what the ranks give."""
    out = verified[3]
    r = subprocess.run([str(TANGLE), "check", str(out / "check.rel"), "--replay"], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0 and r.stdout.startswith("verdict: refines"), r.stdout + r.stderr
    assert "replay not possible" not in r.stdout, r.stdout
    line = next(x for x in r.stdout.splitlines() if x.startswith("replay: "))
    outputs = sum(1 for x in (out / "check.rel").read_text().splitlines() if x.startswith("output "))
    assert line.startswith(f"replay: {outputs} outputs match"), line
