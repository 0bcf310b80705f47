"""torchtitan's Llama-3, one training step (forward + backward), TP=2 with sequence parallel, checked.

Captured once per module (a spawned process per graph; the spmd_types backend, torchtitan's default):

* ``tangle verify torchtitan:llama3 --tp 2 --sp --backward``: refines; the gradient layouts follow
  spmd_types (a norm weight typed R has a Partial gradient, left for the gradient sync to reduce);
* partial_dtensor without sequence parallel, TP=2 and 4 (`tp_pd_no_sp`): refines, and the relation
  holds on values (`--replay` runs the joint graphs on random inputs: the loss and each gradient in
  its layout). Its rms_norm backward runs on the unreduced (Partial) gradient of the norm's output;
  `expand-sum` carries that sum through the broadcast of the per-row statistic;
* the planted bug norm_grad_unreduced (the norm weights typed I, i.e. complete gradients, while each
  rank holds its sequence shard's partial sum; the ranks' graphs are the same, the contract is wrong):
  a violation at the norm weight's gradient, naming the operator, the parameter and the source line.
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
NORMS = ("layers.0.attention_norm.weight", "layers.0.ffn_norm.weight", "norm.weight")


def _need_titan():
    for module in ("torch", "torchtitan", "spmd_types", "triton", "tyro"):
        pytest.importorskip(module, reason=f"{module} is not installed (scripts/install-deps.sh installs "
                                           f"torchtitan==0.3.0 and its imports)")
    if TANGLE is None:
        pytest.skip(f"{locate_binary()[0]} is not built (or set TANGLE_BIN)")


@pytest.fixture(scope="module")
def verified(tmp_path_factory):
    """(CompletedProcess, out dir, spec params, [rank params]) of the CLI run, files kept."""
    _need_titan()
    out = tmp_path_factory.mktemp("titan_bw") / "sp"
    env = dict(os.environ, TANGLE_BIN=str(TANGLE))
    r = subprocess.run([str(TANGLE), "verify", "torchtitan:llama3", "--tp", "2", "--sp", "--backward",
                        "--out", str(out)], capture_output=True, text=True, env=env, timeout=1200)
    if not (out / "check.rel").exists():
        pytest.fail(f"tangle verify left no capture:\n{r.stdout}{r.stderr}")
    spec = json.loads((out / "spec.params.json").read_text())
    ranks = [json.loads((out / f"impl.r{k}.params.json").read_text()) for k in range(2)]
    return r, out, spec, ranks


@pytest.fixture(scope="module")
def planted(verified, tmp_path_factory):
    """The norm_grad_unreduced ranks next to the spec of `verified`, checked through tangle.check."""
    import tangle
    from tangle import titan
    out = titan.capture_titan(2, str(tmp_path_factory.mktemp("titan_bw_bug")), sp=True, backend="spmd_types",
                              bug="norm_grad_unreduced", spec_from=str(verified[1]), backward=True,
                              log=lambda msg: None)
    return out, tangle.check(out.relation, tangle=str(TANGLE))


def _grads(params):
    return {o["fqn"]: o for o in params["outputs"] if o.get("what") == "grad"}


def test_training_step_refines(verified):
    r, out, _, _ = verified
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[0] == "verdict: refines"
    expects = [x for x in (out / "check.rel").read_text().splitlines() if x.startswith("expect ")]
    assert len(expects) == 11  # the loss and 10 gradients
    assert "refused" not in r.stdout
    assert json.loads((out / "report.json").read_text())["verify"]["backward"] is True


def test_training_step_replays(verified):
    """The loss and every gradient, in the layouts the relation expects, match on values."""
    _, out, _, _ = verified
    r = subprocess.run([str(TANGLE), "check", str(out / "check.rel"), "--replay"], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "replay: 11 outputs match" in r.stdout, r.stdout


def test_gradient_layouts(verified):
    _, out, spec, ranks = verified
    expect = {
        "tok_embeddings.weight": "Shard(0)", "layers.0.attention.qkv_linear.wqkv.weight": "Shard(0)",
        "layers.0.attention.wo.weight": "Shard(1)", "layers.0.feed_forward.w1.weight": "Shard(0)",
        "layers.0.feed_forward.w3.weight": "Shard(0)", "layers.0.feed_forward.w2.weight": "Shard(1)",
        "lm_head.weight": "Shard(0)", **{n: "Partial(sum)" for n in NORMS},
    }
    assert {f: o["layout"] for f, o in _grads(spec).items()} == {f: "Replicate" for f in expect}
    for rp in ranks:
        assert {f: o["layout"] for f, o in _grads(rp).items()} == expect
        assert rp["backward"] and rp["sequence_parallel"] and rp["backend"] == "spmd_types"
    graph = (out / "impl.r0.py").read_text()
    # the vocab-sharded logits' gradient is the rank's chunk (spmd_types' backward of its all-gather)
    assert "spmd_types.replicate_to_varying" in graph and "embedding_dense_backward" in graph
    rel = (out / "check.rel").read_text()
    g = _grads(spec)["norm.weight"]["name"]
    assert f"expect S.{g} = sum(D*.{_grads(ranks[0])['norm.weight']['name']})" in rel


def test_planted_unreduced_norm_gradient_is_a_violation(planted):
    out, r = planted
    assert r.verdict == "violation", r.report
    refused = [e for e in r.expectations if not e["holds"]]
    assert refused, r.report
    ranks = [json.loads(open(p).read()) for p in out.impl_params]
    assert {f: o["layout"] for f, o in _grads(ranks[0]).items() if f in NORMS} == {n: "Replicate" for n in NORMS}
    # the report: the operator computing the norm weight's gradient, its model source line, the parameter
    assert "is computed by S.mul_" in r.report and "(aten.mul.Tensor)" in r.report
    assert "in rms_norm, code: return torch.rms_norm(input, normalized_shape, weight, eps)" in r.report
    assert "= gradient of layers.0.attention_norm.weight" in r.report
    assert "known: S." in r.report and "= sum(D0." in r.report  # each rank holds a partial sum


def test_grad_positions_unit():
    """A DTensor input with no gradient (a buffer) comes back as one None, not one per placeholder."""
    from tangle.joint import StitchError, _grad_positions
    out = _grad_positions(["g0", None, "g2", "mesh"], [1, 2, 2], 5)
    assert out == [(0, "g0"), (1, None), (3, "g2"), (4, "mesh")]
    with pytest.raises(StitchError):
        _grad_positions(["g0"], [1, 2], 3)


@pytest.fixture(scope="module")
def tp4_no_sp(tmp_path_factory):
    """`tangle verify torchtitan:llama3 --tp 4 --backward` (spmd_types, no sequence parallel): the rank-0
    norm chain used to lose its relation (a false violation at the embedding's backward)."""
    _need_titan()
    out = tmp_path_factory.mktemp("titan_bw") / "tp4"
    env = dict(os.environ, TANGLE_BIN=str(TANGLE))
    return subprocess.run([str(TANGLE), "verify", "torchtitan:llama3", "--tp", "4", "--backward", "--out", str(out)],
                          capture_output=True, text=True, env=env, timeout=1800)


def test_training_step_tp4_without_sp_refines(tp4_no_sp):
    r = tp4_no_sp
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[0] == "verdict: refines"


@pytest.fixture(scope="module", params=[2, 4])
def tp_pd_no_sp(request, tmp_path_factory):
    """partial_dtensor, no sequence parallel, one training step at TP=request.param, checked with --replay."""
    _need_titan()
    from tangle import titan
    out = titan.capture_titan(request.param, str(tmp_path_factory.mktemp(f"titan_pd{request.param}")),
                              backend="partial_dtensor", backward=True, log=lambda msg: None)
    return request.param, out, subprocess.run([str(TANGLE), "check", out.relation, "--replay"],
                                              capture_output=True, text=True, timeout=900)


def test_partial_dtensor_without_sp_refines_and_replays(tp_pd_no_sp):
    tp, out, r = tp_pd_no_sp
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[0] == "verdict: refines"
    assert "replay: 11 outputs match" in r.stdout, r.stdout
    ranks = [json.loads(open(p).read()) for p in out.impl_params]
    # the row-parallel weights' and the norms' gradients are partial sums on every rank (DTensor's .grad)
    assert _grads(ranks[0])["layers.0.attention.wo.weight"]["layout"] == "Partial(sum)"
    assert all(_grads(ranks[0])[n]["layout"] == "Partial(sum)" for n in NORMS)
