"""Megatron-core's GPTModel (tiny, random weights, CPU) against its tensor-parallel ranks: `megatron:gpt`.

Each capture spawns a process per graph, so every model is captured once per module: 1 layer at TP=2
(through the Python API), the same with the planted bug of megatron_no_row_reduce.py (through the
CLI), TP=4 with gathered logits, the TP=2 model again without weights (FakeTensorMode) and GPT-3 6.7B's
dimensions without weights. The CPU patches Megatron needs are this folder's megatron_cpu.py (`--setup`).
"""
import json
import os
import re
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, HERE)  # megatron_cpu, megatron_no_row_reduce: imported by the capture processes

import tangle  # noqa: E402  (imports neither torch nor megatron)
from tangle import megatron  # noqa: E402
from tangle.binary import find_binary, locate_binary  # noqa: E402

TANGLE = find_binary()
LAYER = "decoder.layers.0."


def _need():
    pytest.importorskip("torch", reason="PyTorch is not installed (scripts/install-deps.sh installs torch==2.13.0)")
    pytest.importorskip("megatron.core", reason="megatron-core is not installed "
                                                "(scripts/install-deps.sh installs megatron-core==0.16.1)")
    if TANGLE is None:
        pytest.skip(f"{locate_binary()[0]} is not built (or set TANGLE_BIN)")


@pytest.fixture(scope="module")
def tp2(tmp_path_factory):
    _need()
    return tangle.verify("megatron:gpt", tp=2, layers=1, out=str(tmp_path_factory.mktemp("gpt_tp2")),
                         setup="megatron_cpu", log=lambda msg: None)


def _params(path):
    with open(path) as f:
        p = json.load(f)
    return p, {ph["fqn"]: ph for ph in p["placeholders"] if ph["kind"] in ("input", "parameter")}


def _run(*args, timeout=300):
    return subprocess.run([str(TANGLE), *args], capture_output=True, text=True, timeout=timeout)


def test_tp2_refines(tp2):
    assert tp2.verdict == "refines", tp2.report
    assert tp2.exit_code == 0
    assert "expectation holds" in tp2.checker_report


def test_tp2_placeholder_map(tp2):
    """Layouts come from tensor_model_parallel / partition_dim; the logits stay vocab-sharded."""
    spec, spec_by_fqn = _params(os.path.join(tp2.out_dir, "spec.params.json"))
    rank, by_fqn = _params(os.path.join(tp2.out_dir, "impl.r1.params.json"))
    assert set(spec_by_fqn) == set(by_fqn)
    assert all(p["placement"] == "Replicate" for p in spec_by_fqn.values())
    expect = {
        "input_ids": ("Replicate", [1, 8], [1, 8]),
        "attention_mask": ("Replicate", [1, 1, 8, 8], [1, 1, 8, 8]),
        "embedding.word_embeddings.weight": ("Shard(0)", [128, 64], [64, 64]),  # vocab-parallel
        "embedding.position_embeddings.weight": ("Replicate", [8, 64], [8, 64]),
        LAYER + "self_attention.linear_qkv.weight": ("Shard(0)", [128, 64], [64, 64]),  # one query group each
        LAYER + "self_attention.linear_qkv.bias": ("Shard(0)", [128], [64]),
        LAYER + "self_attention.linear_proj.weight": ("Shard(1)", [64, 64], [64, 32]),
        LAYER + "self_attention.linear_proj.bias": ("Replicate", [64], [64]),
        LAYER + "mlp.linear_fc1.weight": ("Shard(0)", [128, 64], [64, 64]),
        LAYER + "mlp.linear_fc2.weight": ("Shard(1)", [64, 128], [64, 64]),
        "decoder.final_layernorm.weight": ("Replicate", [64], [64]),
        "output_layer.weight": ("Shard(0)", [128, 64], [64, 64]),
    }
    for fqn, (placement, shape, local) in expect.items():
        p = by_fqn[fqn]
        assert (p["placement"], p["global_shape"], p["local_shape"]) == (placement, shape, local), fqn
        assert spec_by_fqn[fqn]["global_shape"] == shape, fqn
    assert [(o["what"], o["layout"], o["shape"]) for o in rank["outputs"]] == [("logits", "Shard(2)", [1, 8, 64])]
    assert [o["shape"] for o in spec["outputs"]] == [[1, 8, 128]]


def test_tp2_replay_matches_values(tp2):
    """The written layouts hold for the values: both programs run on random inputs related as check.rel says."""
    proc = _run("check", os.path.join(tp2.out_dir, "check.rel"), "--replay")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"replay: 1 outputs match", proc.stdout), proc.stdout


def _blocked(name, q, kv, ranks):
    """The layout Megatron does NOT use for linear_qkv: all q rows, then all k, then all v, each split by rank."""
    parts = []
    for start, end in [(0, q), (q, q + kv), (q + kv, q + 2 * kv)]:
        parts += [f"slice(D{r}.{name}, dim=0, start={start}, end={end})" for r in range(ranks)]
    return f"concat({', '.join(parts)}, dim=0)"


def _rewritten(tp2, rewrites, path):
    """check.rel of tp2, written to path, with the line relating each FQN of `rewrites` replaced by
    `S.x = rewrite(rank placeholder name)` (the graphs named by absolute path)."""
    lines = []
    for line in open(os.path.join(tp2.out_dir, "check.rel")).read().splitlines():
        m = re.match(r"S\.(\w+) = shard\(D\*\.(\w+), dim=0\)  # (\S+) ", line)
        if m and m.group(3) in rewrites:
            line = f"S.{m.group(1)} = {rewrites[m.group(3)](m.group(2))}  # {m.group(3)}, mislabelled"
        line = re.sub(r"^(spec|impl) ", lambda k: f"{k.group(1)} {tp2.out_dir}/", line)
        lines.append(line)
    assert sum("mislabelled" in line for line in lines) == len(rewrites), lines
    path.write_text("\n".join(lines) + "\n")
    return path


def test_mislabelled_qkv_layout_is_a_violation(tp2, tmp_path):
    """Same shapes, wrong layout of the fused QKV rows (blocked q|k|v instead of per query group)."""
    blocked = lambda d: _blocked(d, 32, 16, 2)  # noqa: E731 -- 2 heads of 16 per group, 1 group per rank
    rel = _rewritten(tp2, {LAYER + "self_attention.linear_qkv.weight": blocked,
                           LAYER + "self_attention.linear_qkv.bias": blocked}, tmp_path / "check.rel")
    proc = _run("check", str(rel))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "verdict: violation" in proc.stdout
    assert "refines" not in proc.stdout


def test_mislabelled_qkv_partition_dim_is_bad_input(tp2, tmp_path):
    rel = _rewritten(tp2, {LAYER + "self_attention.linear_qkv.weight": lambda d: f"shard(D*.{d}, dim=1)"},
                     tmp_path / "check.rel")
    proc = _run("check", str(rel))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and re.search(r"check\.rel:\d+: error: shape mismatch: S\.\w+ is f32\[128, 64\]",
                                          errors[0]), proc.stderr


def test_row_parallel_without_all_reduce_is_a_violation(tmp_path):
    """The planted bug through the CLI: linear_proj/linear_fc2 keep their partial sums."""
    _need()
    env = dict(os.environ, PYTHONPATH=HERE + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([str(TANGLE), "verify", "megatron:gpt", "--tp", "2", "--setup", "megatron_no_row_reduce",
                           "--out", str(tmp_path / "out"), "--quiet"],
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "verdict: violation" in proc.stdout
    # The first operator that cannot be related adds linear_proj's bias to its unreduced product.
    assert re.search(r"S\.\w+ = decoder\.layers\.0\.self_attention\.linear_proj\.weight \(Shard\(1\)",
                     proc.stdout), proc.stdout
    assert "model source of S." in proc.stdout


def test_setup_module_must_exist():
    _need()
    with pytest.raises(tangle.VerifyError, match="--setup module 'no_such_setup_module'"):
        tangle.verify("megatron:gpt", tp=2, setup="no_such_setup_module", log=lambda msg: None)


def test_tp4_gathered_logits_refine(tmp_path):
    """TP=4 with the output layer gathering the logits (parallel_output=False): full logits on every rank."""
    _need()
    out = megatron.capture_megatron(4, 1, str(tmp_path / "gpt_tp4"), setup="megatron_cpu", parallel_output=False,
                                    log=lambda msg: None)
    rank, by_fqn = _params(out.impl_params[3])
    assert by_fqn[LAYER + "self_attention.linear_qkv.weight"]["local_shape"] == [32, 64]  # 1 of 4 groups
    assert [(o["layout"], o["shape"]) for o in rank["outputs"]] == [("Replicate", [1, 8, 128])]
    r = tangle.check(out.relation)
    assert r.verdict == "refines", r.report


def test_heads_for():
    assert megatron.heads_for(2) == {}
    assert megatron.heads_for(4) == dict(num_query_groups=4, num_attention_heads=8)


# ---------------------------------------------------------------- without weights (FakeTensorMode)

def test_fake_capture_equals_capture_with_weights(tp2, tmp_path):
    """--fake: Megatron's own initialization runs on fake tensors; the graphs and the relation are the
    ones captured with weights (tp2), byte for byte."""
    out = megatron.capture_megatron(2, 1, str(tmp_path / "fake"), setup="megatron_cpu", fake=True,
                                    log=lambda msg: None)
    for name in ("spec.py", "impl.r0.py", "impl.r1.py", "check.rel"):
        with open(os.path.join(tp2.out_dir, name)) as a, open(os.path.join(out.out_dir, name)) as b:
            assert a.read() == b.read(), name
    assert json.load(open(out.spec_params))["weights"] == "fake"


def test_full_size_without_weights_refines(tmp_path):
    """GPT-3 6.7B's dimensions (hidden 4096, ffn 16384, vocabulary 51200), 1 layer, TP=2: ~2.5 GB of fp32
    weights in the spec alone if they were real, so each capture process's peak RSS shows none was made
    (what remains is torch's and Megatron's imports, ~0.5 GB)."""
    _need()
    r = tangle.verify("megatron:gpt", tp=2, layers=1, out=str(tmp_path / "big"), setup="megatron_cpu",
                      shape="gpt3-6.7b", log=lambda msg: None)
    assert r.verdict == "refines", r.report
    spec, spec_by_fqn = _params(os.path.join(r.out_dir, "spec.params.json"))
    rank, by_fqn = _params(os.path.join(r.out_dir, "impl.r1.params.json"))
    fc1 = by_fqn[LAYER + "mlp.linear_fc1.weight"]
    assert (fc1["placement"], fc1["global_shape"], fc1["local_shape"]) == ("Shard(0)", [16384, 4096], [8192, 4096])
    assert by_fqn["output_layer.weight"]["local_shape"] == [25600, 4096]
    assert spec_by_fqn["embedding.word_embeddings.weight"]["global_shape"] == [51200, 4096]
    for p in (spec, rank):
        assert p["weights"] == "fake"
        assert p["peak_rss_mib"] < 1500, p["peak_rss_mib"]


# ---------------------------------------------------------------- training step (--backward)

@pytest.fixture(scope="module")
def tp2_step(tmp_path_factory):
    """`tangle verify megatron:gpt --tp 2 --backward` (Megatron's vocab-parallel cross entropy, then every
    gradient), through the CLI, captured once for the tests below."""
    _need()
    out = tmp_path_factory.mktemp("gpt_tp2_step") / "out"
    env = dict(os.environ, PYTHONPATH=HERE + os.pathsep + os.environ.get("PYTHONPATH", ""))
    run = subprocess.run([str(TANGLE), "verify", "megatron:gpt", "--tp", "2", "--backward", "--setup", "megatron_cpu",
                          "--out", str(out), "--quiet"], capture_output=True, text=True, timeout=900, env=env)
    if not (out / "check.rel").exists():
        pytest.fail(f"tangle verify left no capture:\n{run.stdout}{run.stderr}")
    return run, out


def _grads(params):
    return {o["fqn"]: o for o in params["outputs"] if o.get("what") == "grad"}


def test_training_step_refines(tp2_step):
    run, out = tp2_step
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines()[0] == "verdict: refines"
    assert "refused" not in run.stdout
    expects = [x for x in (out / "check.rel").read_text().splitlines() if x.startswith("expect ")]
    assert len(expects) == 18  # the loss and 17 gradients
    # the step is Megatron's own loss: the vocab-parallel cross entropy and its backward
    text = (out / "impl.r1.py").read_text()
    assert "cross_entropy.py" in text and "calculate_gradients" in text and "index_put" in text


def test_training_step_gradient_layouts(tp2_step):
    """Each gradient where Megatron leaves it: the TP weights' shards, the replicated parameters whole
    (no sequence parallelism: nothing is all-reduced after backward)."""
    _, out = tp2_step
    spec, rank = (json.loads((out / f).read_text()) for f in ("spec.params.json", "impl.r1.params.json"))
    grads = _grads(rank)
    assert set(grads) == set(_grads(spec)) and len(grads) == 17
    expect = {
        "embedding.word_embeddings.weight": "Shard(0)", "embedding.position_embeddings.weight": "Replicate",
        LAYER + "self_attention.linear_qkv.weight": "Shard(0)", LAYER + "self_attention.linear_qkv.bias": "Shard(0)",
        LAYER + "self_attention.linear_proj.weight": "Shard(1)", LAYER + "self_attention.linear_proj.bias": "Replicate",
        LAYER + "mlp.linear_fc1.weight": "Shard(0)", LAYER + "mlp.linear_fc2.weight": "Shard(1)",
        LAYER + "input_layernorm.weight": "Replicate", "decoder.final_layernorm.bias": "Replicate",
        "output_layer.weight": "Shard(0)",
    }
    for fqn, layout in expect.items():
        assert grads[fqn]["layout"] == layout, fqn
    assert rank["outputs"][0]["what"] == "loss" and rank["outputs"][0]["layout"] == "Replicate"
    assert [p["fqn"] for p in rank["placeholders"] if p["kind"] == "input"] == [
        "input_ids", "position_ids", "attention_mask", "labels"]


def test_training_step_replay_matches_values(tp2_step):
    _, out = tp2_step
    proc = _run("check", str(out / "check.rel"), "--replay")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"replay: 18 outputs match", proc.stdout), proc.stdout


def test_training_step_swapped_gradients_is_a_violation(tp2_step, tmp_path):
    """The relation expects linear_fc1's weight gradient from the ranks' linear_qkv gradient (same shapes)."""
    _, out = tp2_step
    spec, rank = (json.loads((out / f).read_text()) for f in ("spec.params.json", "impl.r0.params.json"))
    fc1 = _grads(spec)[LAYER + "mlp.linear_fc1.weight"]["name"]
    qkv = _grads(rank)[LAYER + "self_attention.linear_qkv.weight"]["name"]
    text = (out / "check.rel").read_text()
    line = next(x for x in text.splitlines() if x.startswith(f"expect S.{fc1} ="))
    text = text.replace(line, f"expect S.{fc1} = shard(D*.{qkv}, dim=0)")
    text = re.sub(r"^(spec|impl) ", lambda k: f"{k.group(1)} {out}/", text, flags=re.M)
    (tmp_path / "check.rel").write_text(text)
    proc = _run("check", str(tmp_path / "check.rel"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "verdict: violation" in proc.stdout and f"expectation refused: S.{fc1}" in proc.stdout


def test_training_step_tp4_refines(tmp_path):
    _need()
    out = megatron.capture_megatron(4, 1, str(tmp_path / "gpt_tp4_step"), setup="megatron_cpu", backward=True,
                                    log=lambda msg: None)
    proc = _run("check", out.relation, "--replay")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[0] == "verdict: refines"
    assert re.search(r"replay: 18 outputs match", proc.stdout), proc.stdout


class _P:
    def __init__(self, **kw):
        self.__dict__.update(kw)


def test_grad_layout_rule():
    """Where Megatron reduces a gradient after backward (finalize_model_grads), the rank's own is a partial sum."""
    off = _P(sequence_parallel=False, qk_layernorm=False)
    on = _P(sequence_parallel=True, qk_layernorm=True)
    assert megatron.grad_layout("a.weight", _P(tensor_model_parallel=True, partition_dim=1), on) == "Shard(1)"
    assert megatron.grad_layout("norm.weight", _P(sequence_parallel=True), off) == "Replicate"
    assert megatron.grad_layout("norm.weight", _P(sequence_parallel=True), on) == "Partial(sum)"
    assert megatron.grad_layout("self_attention.q_layernorm.weight", _P(), on) == "Partial(sum)"
    assert megatron.grad_layout("bias", _P(), on) == "Replicate"
    with pytest.raises(ValueError, match="averaged"):
        megatron.grad_layout("x", _P(average_gradients_across_tp_domain=True), off)
