"""torchtitan's Llama-3, captured with torchtitan's own parallelize under a fake process group, checked.

One tiny 1-layer model (4 heads, 2 kv heads, vocab 128), TP=2. The spec is captured once and shared
(it depends on neither the backend, nor sequence parallel, nor a planted bug); each configuration
captures its two ranks once per session (a spawned process per graph):

* partial_dtensor without and with sequence parallel: each refines;
* ``tangle verify torchtitan:llama3 --tp 2 --sp`` (spmd_types with sequence parallel, torchtitan's
  defaults; its own spec capture): refines;
* spmd_types outside its SPMD context shards the parameters but never communicates: refused;
* the ranks' embedding offset computed from a wrong vocabulary size: a violation at the embedding.
"""
import json
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))

from tangle.binary import find_binary, locate_binary  # noqa: E402
from tangle.capture import CaptureError  # noqa: E402

TANGLE = find_binary()
CONFIGS = {  # name: (backend, sequence parallel, planted bug)
    "partial_dtensor": ("partial_dtensor", False, None),
    "partial_dtensor_sp": ("partial_dtensor", True, None),
    "bug_embedding_offset": ("partial_dtensor", False, "embedding_offset"),
}


def _need_titan():
    for module in ("torch", "torchtitan", "spmd_types", "triton", "tyro"):
        pytest.importorskip(module, reason=f"{module} is not installed (scripts/install-deps.sh installs "
                                           f"torchtitan==0.3.0 and its imports)")


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    """{config name: (HFCapture, spec params, [rank params])}; the spec is captured once."""
    _need_titan()
    from tangle import titan
    out, spec_dir = {}, None
    for name, (backend, sp, bug) in CONFIGS.items():
        result = titan.capture_titan(2, str(tmp_path_factory.mktemp(name)), sp=sp, backend=backend, bug=bug,
                                     spec_from=spec_dir, log=lambda msg: None)
        spec_dir = spec_dir or result.out_dir
        with open(result.spec_params) as f:
            sp_map = json.load(f)
        rps = []
        for path in result.impl_params:
            with open(path) as f:
                rps.append(json.load(f))
        out[name] = (result, sp_map, rps)
    return out


@pytest.fixture(scope="module")
def cli_spmd_types(tmp_path_factory):
    """`tangle verify torchtitan:llama3 --tp 2 --sp` (backend spmd_types by default), files kept."""
    _need_titan()
    if TANGLE is None:
        pytest.skip(f"{locate_binary()[0]} is not built (or set TANGLE_BIN)")
    out = tmp_path_factory.mktemp("cli") / "spmd_types_sp"
    r = subprocess.run([str(TANGLE), "verify", "torchtitan:llama3", "--tp", "2", "--sp", "--out", str(out)],
                       capture_output=True, text=True, timeout=900)
    maps = [json.loads((out / f"impl.r{k}.params.json").read_text()) for k in range(2)] if out.exists() else []
    return r, out, maps


def _check(rel_path, timeout=120, *extra):
    if TANGLE is None:
        pytest.skip(f"{locate_binary()[0]} is not built (or set TANGLE_BIN)")
    return subprocess.run([str(TANGLE), "check", str(rel_path), *extra], capture_output=True, text=True,
                          timeout=timeout)


def _by_fqn(params):
    return {p["fqn"]: p for p in params["placeholders"] if p["kind"] in ("input", "parameter", "buffer")}


@pytest.mark.parametrize("name", ["partial_dtensor", "spmd_types_sp"])
def test_layouts_from_dtensors_and_sharding_configs(captured, cli_spmd_types, name):
    """DTensor placements (partial_dtensor) and _sharding_config.state_shardings (spmd_types) agree."""
    if name == "spmd_types_sp":
        _, out, rps = cli_spmd_types
        sp_map = json.loads((out / "spec.params.json").read_text())
        assert all(p["backend"] == "spmd_types" and p["sequence_parallel"] for p in rps)
    else:
        _, sp_map, rps = captured[name]
    expect = {
        "tok_embeddings.weight": ("Shard(0)", [128, 64], [64, 64]),   # vocab-parallel
        "layers.0.attention.qkv_linear.wqkv.weight": ("Shard(0)", [128, 64], [64, 64]),  # fused, per kv group
        "layers.0.attention.wo.weight": ("Shard(1)", [64, 64], [64, 32]),
        "layers.0.feed_forward.w1.weight": ("Shard(0)", [128, 64], [64, 64]),
        "layers.0.feed_forward.w2.weight": ("Shard(1)", [64, 128], [64, 64]),
        "layers.0.attention_norm.weight": ("Replicate", [64], [64]),
        "layers.0.attention.rope.cache": ("Replicate", [64, 8], [64, 8]),  # complex64
        "lm_head.weight": ("Shard(0)", [128, 64], [64, 64]),
        "input_ids": ("Replicate", [1, 8], [1, 8]),
    }
    for r, rp in enumerate(rps):
        mine = _by_fqn(rp)
        for fqn, want in expect.items():
            assert (mine[fqn]["placement"], mine[fqn]["global_shape"], mine[fqn]["local_shape"]) == want, (r, fqn)
        assert rp["outputs"] == [dict(name=rp["outputs"][0]["name"], shape=[1, 8, 64], what="logits",
                                      layout="Shard(2)")]
    assert set(_by_fqn(sp_map)) == set(_by_fqn(rps[0]))
    assert _by_fqn(sp_map)["layers.0.attention.rope.cache"]["dtype"] == "complex64"


def test_embedding_bounds_are_per_rank_constants(captured):
    """Each rank's vocab range [64 r, 64 r + 64) is in its graph as literal bounds."""
    result, _, _ = captured["partial_dtensor"]
    for r, path in enumerate(result.impls):
        with open(path) as f:
            text = f.read()
        assert re.search(rf"aten\.ge\.Scalar\(\w+, {64 * r}\)", text), path
        assert re.search(rf"aten\.lt\.Scalar\(\w+, {64 * r + 64}\)", text), path


def test_tangle_verify_spmd_types_sp_refines(cli_spmd_types):
    r, out, _ = cli_spmd_types
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[0] == "verdict: refines"
    assert "expectation holds" in r.stdout
    graph = (out / "impl.r0.py").read_text()
    assert "reduce_scatter_tensor" in graph and "all_gather_into_tensor" in graph
    if "# File:" in graph:  # source lines are printed for the torch.compile frontend only (tangle.eager_trace)
        assert "spmd_types/_collectives.py" in graph  # the collectives are spmd_types' own


@pytest.mark.parametrize("name", ["partial_dtensor", "partial_dtensor_sp"])
def test_refines(captured, name):
    result, _, _ = captured[name]
    with open(result.impls[0]) as f:
        graph = f.read()
    if name.endswith("_sp"):  # sequence parallel: the norms run on sequence shards
        assert "reduce_scatter_tensor" in graph and "all_gather_into_tensor" in graph
    else:
        assert "all_reduce" in graph and "reduce_scatter_tensor" not in graph
    r = _check(result.relation, 120, "--replay")  # the relation also holds on values (causal mask, complex RoPE)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[0] == "verdict: refines"
    assert "expectation holds" in r.stdout
    assert "replay: 1 outputs match" in r.stdout, r.stdout


def test_spmd_types_outside_its_context_is_refused(captured, tmp_path):
    """spmd_types only communicates inside get_spmd_context: outside it the capture has no collective
    at all (it would compute something else silently); the capture refuses it."""
    from tangle import titan
    spec_dir = captured["partial_dtensor"][0].out_dir
    with pytest.raises(CaptureError, match="shards parameters .* but contains no collective"):
        titan.capture_titan(2, str(tmp_path / "no_context"), sp=True, backend="spmd_types", spmd_context=False,
                            spec_from=spec_dir, log=lambda msg: None)


def test_check_collectives_unit():
    from tangle import titan
    params = dict(placeholders=[dict(kind="parameter", fqn="w", placement="Shard(0)")])
    with pytest.raises(CaptureError, match="no collective"):
        titan.check_collectives(params, "mm = torch.ops.aten.mm.default(x, w)", "rank 0")
    titan.check_collectives(params, "a = torch.ops._c10d_functional.all_reduce.default(x, 'sum', '0')", "rank 0")
    titan.check_collectives(dict(placeholders=[dict(kind="parameter", fqn="w", placement="Replicate")]),
                            "mm = torch.ops.aten.mm.default(x, w)", "rank 0")


def test_planted_embedding_offset_is_a_violation(captured):
    """Rank 1 looks up rows [65, 129) instead of [64, 128): tangle stops at the embedding."""
    result, _, _ = captured["bug_embedding_offset"]
    r = _check(result.relation)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "verdict: violation" in r.stdout
    assert re.search(r"failing operator: S\.embedding\b", r.stdout), r.stdout
