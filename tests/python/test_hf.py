"""HF transformers causal LMs, captured with transformers' own TP plan, verify with the tangle CLI.

A tiny Llama (GQA: 4 heads, 2 kv heads) and a tiny Qwen2 (q/k/v biases), one layer, TP=2, eager
attention, are each captured once per module (a spawned process per graph), and the Llama once more
with sdpa attention (transformers' default: the CPU flash-attention op). The tests read the
placeholder maps and the relation that tangle.hf wrote, and run `tangle check` on them.
"""
import json
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))

from tangle import hf  # noqa: E402  (imports neither torch nor transformers)
from tangle.binary import find_binary, locate_binary  # noqa: E402

TANGLE = find_binary()
LAYER = "model.layers.0."


# ---------------------------------------------------------------- no torch needed

def _ph(name, fqn, placement, shape, local=None, kind="parameter"):
    return dict(name=name, kind=kind, fqn=fqn, placement=placement, global_shape=shape,
                local_shape=local or shape, dtype="float32")


def test_write_relation_from_placeholder_maps():
    spec = dict(family="toy", layers=1, attn="eager",
                placeholders=[_ph("arg0_1", "input_ids", "Replicate", [1, 8], kind="input"),
                              _ph("arg1_1", "w", "Replicate", [8, 4]),
                              _ph("arg2_1", "v", "Replicate", [4, 8]),
                              _ph("arg3_1", "p", "Replicate", [8]),
                              _ph("arg4_1", "b", "Replicate", [8], kind="buffer")],
                constants=[dict(name="_tensor_constant0", shape=[], dtype="int64", value=0)],
                outputs=[dict(name="mm_1", shape=[1, 8], what="logits")])

    def rank(r):
        return dict(placeholders=[_ph("arg0_1", "input_ids", "Replicate", [1, 8], kind="input"),
                                  dict(name="arg1_1", kind="opaque", fqn=None, what="DeviceMesh"),
                                  _ph("arg2_1", "w", "Shard(0)", [8, 4], [4, 4]),
                                  dict(name="arg3_1", kind="opaque", fqn="w", what="DeviceMesh of the DTensor"),
                                  _ph("arg4_1", "v", "Shard(1)", [4, 8], [4, 4]),
                                  _ph("arg5_1", "p", "Partial(sum)", [8]),
                                  _ph(f"arg{6 + r}_1", "b", "Replicate", [8], kind="buffer")],
                    constants=[dict(name="_tensor_constant0", shape=[], dtype="int64", value=r),
                               dict(name="_tensor_constant1", shape=[], dtype="float32", value=0.0)],
                    outputs=[dict(name="cat", shape=[1, 8], layout="Replicate")])

    text = hf.write_relation(spec, [rank(0), rank(1)], options={"max_relations": 16})
    lines = [line.split("#")[0].strip() for line in text.splitlines()]
    for expected in ["spec spec.py", "impl impl.r{rank}.py ranks 2", "option max_relations = 16",
                     "S.arg0_1 = D*.arg0_1", "S.arg1_1 = shard(D*.arg2_1, dim=0)",
                     "S.arg2_1 = shard(D*.arg4_1, dim=1)", "S.arg3_1 = sum(D*.arg5_1)",
                     "S.arg4_1 = D0.arg6_1", "S.arg4_1 = D1.arg7_1",  # numbered differently per rank
                     "const S._tensor_constant0 = 0",
                     "const D0._tensor_constant0 = 0", "const D1._tensor_constant0 = 1",  # values differ
                     "const D*._tensor_constant1 = 0.0",
                     "output S.mm_1", "expect S.mm_1 = D*.cat"]:
        assert expected in lines, text
    assert "S.arg1_1 = shard(D*.arg2_1, dim=0)  # w Shard(0) [8, 4]" in text
    # Opaque (device-mesh) placeholders get no relation.
    assert not any("D*.arg1_1" in line or "D*.arg3_1" in line for line in lines), text


def test_write_relation_refuses_disagreeing_ranks():
    spec = dict(placeholders=[_ph("arg0_1", "w", "Replicate", [8])], outputs=[])
    ranks = [dict(placeholders=[_ph("arg0_1", "w", "Shard(0)", [8], [4])], outputs=[]),
             dict(placeholders=[_ph("arg0_1", "w", "Replicate", [8])], outputs=[])]
    with pytest.raises(ValueError, match="placement differs"):
        hf.write_relation(spec, ranks)


@pytest.mark.parametrize("ranks, split, length", [(2, 2, 8), (4, 2, 16), (2, 3, 12)])
def test_strided_shard_relation_matches_dtensor(ranks, split, length):
    """StridedShard(0, k) (a fused gate/up weight sharded per half) is written as slices of the ranks'
    tensors; concatenated as written they give back the tensor DTensor split (its own split function)."""
    torch = pytest.importorskip("torch")
    from torch.distributed.tensor.placement_types import _StridedShard
    full = torch.arange(length * 3).reshape(length, 3)
    local, _ = _StridedShard(dim=0, split_factor=split)._split_tensor(full, ranks, with_padding=False)
    ph = [dict(name="w", kind="parameter", fqn="w", placement=f"StridedShard(0, {split})",
               global_shape=[length, 3], local_shape=list(local[0].shape))]
    text = hf.write_relation(dict(placeholders=[dict(ph[0], placement="Replicate")], outputs=[]),
                             [dict(placeholders=ph, outputs=[]) for _ in range(ranks)])
    line = next(x for x in text.splitlines() if x.startswith("S.w = "))
    pieces = re.findall(r"slice\(D(\d+)\.w, dim=0, start=(\d+), end=(\d+)\)", line)
    assert len(pieces) == ranks * split, line
    rebuilt = torch.cat([local[int(r)][int(a):int(b)] for r, a, b in pieces], dim=0)
    assert torch.equal(rebuilt, full), line
    odd = [dict(placeholders=[dict(ph[0], local_shape=[split * 2 + 1, 3])], outputs=[]) for _ in range(ranks)]
    with pytest.raises(ValueError, match="does not split"):
        hf.write_relation(dict(placeholders=[dict(ph[0], placement="Replicate")], outputs=[]), odd)


# ---------------------------------------------------------------- captured models

def _need_hf():
    pytest.importorskip("torch", reason="PyTorch is not installed (scripts/install-deps.sh installs torch==2.13.0)")
    pytest.importorskip("transformers",
                        reason="transformers is not installed (scripts/install-deps.sh installs transformers==5.23.0)")


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    """{family: (HFCapture, spec params, [rank params])} for llama and qwen2, 1 layer, TP=2, eager."""
    _need_hf()
    out = {}
    for family in ("llama", "qwen2"):
        result = hf.capture_hf(family, tp=2, layers=1, out_dir=str(tmp_path_factory.mktemp(family)), attn="eager",
                               log=lambda msg: None)
        with open(result.spec_params) as f:
            sp = json.load(f)
        rps = []
        for path in result.impl_params:
            with open(path) as f:
                rps.append(json.load(f))
        out[family] = (result, sp, rps)
    return out


def _by_fqn(params):
    return {p["fqn"]: p for p in params["placeholders"] if p["kind"] in ("input", "parameter", "buffer")}


def _check(rel_path, timeout=120):
    if TANGLE is None:
        pytest.skip(f"{locate_binary()[0]} is not built (or set TANGLE_BIN)")
    return subprocess.run([str(TANGLE), "check", str(rel_path)], capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("family", ["llama", "qwen2"])
def test_placeholder_map(captured, family):
    result, sp, rps = captured[family]
    assert os.path.exists(result.spec) and all(os.path.exists(p) for p in result.impls)
    spec, rank0 = _by_fqn(sp), _by_fqn(rps[0])
    assert set(spec) == set(rank0)
    assert all(p["placement"] == "Replicate" for p in spec.values())
    expect = {
        "input_ids": ("Replicate", [1, 8], [1, 8]),
        "model.embed_tokens.weight": ("Shard(0)", [128, 64], [64, 64]),   # vocab-parallel
        LAYER + "self_attn.q_proj.weight": ("Shard(0)", [64, 64], [32, 64]),
        LAYER + "self_attn.k_proj.weight": ("Shard(0)", [32, 64], [16, 64]),  # 2 kv heads of 16
        LAYER + "self_attn.v_proj.weight": ("Shard(0)", [32, 64], [16, 64]),
        LAYER + "self_attn.o_proj.weight": ("Shard(1)", [64, 64], [64, 32]),
        LAYER + "mlp.gate_proj.weight": ("Shard(0)", [128, 64], [64, 64]),
        LAYER + "mlp.up_proj.weight": ("Shard(0)", [128, 64], [64, 64]),
        LAYER + "mlp.down_proj.weight": ("Shard(1)", [64, 128], [64, 64]),
        LAYER + "input_layernorm.weight": ("Replicate", [64], [64]),
        LAYER + "post_attention_layernorm.weight": ("Replicate", [64], [64]),
        "model.norm.weight": ("Replicate", [64], [64]),
        "lm_head.weight": ("Shard(0)", [128, 64], [64, 64]),
        "model.rotary_emb.inv_freq": ("Replicate", [8], [8]),
    }
    if family == "qwen2":
        expect[LAYER + "self_attn.q_proj.bias"] = ("Shard(0)", [64], [32])
        expect[LAYER + "self_attn.k_proj.bias"] = ("Shard(0)", [32], [16])
        expect[LAYER + "self_attn.v_proj.bias"] = ("Shard(0)", [32], [16])
    for fqn, (placement, global_shape, local_shape) in expect.items():
        for r, rp in enumerate(rps):
            p = _by_fqn(rp)[fqn]
            assert (p["placement"], p["global_shape"], p["local_shape"]) == (placement, global_shape, local_shape), \
                (r, fqn, p)
        assert spec[fqn]["global_shape"] == global_shape
    # Placeholder names are the graph's: each named one appears in the forward signature.
    for params, graph in [(sp, result.spec)] + list(zip(rps, result.impls)):
        with open(graph) as f:
            signature = f.read().split("\n", 2)[1]
        names = re.findall(r"(arg\d+_\d+)", signature)
        assert names == [p["name"] for p in params["placeholders"]]
    # Each DTensor parameter brings an opaque device-mesh placeholder right after its local tensor.
    kinds = [p["kind"] for p in rps[0]["placeholders"]]
    assert kinds.count("opaque") >= sum(1 for p in rank0.values() if p["placement"] != "Replicate")
    # Scalar constants of the embedding mask have values.
    assert rps[0]["constants"] and all("value" in c for c in rps[0]["constants"])
    assert [o["layout"] for o in rps[0]["outputs"]] == ["Replicate"]
    assert sp["outputs"][0]["shape"] == rps[0]["outputs"][0]["shape"] == [1, 8, 128]


@pytest.mark.parametrize("family", ["llama", "qwen2"])
def test_relation_lines(captured, family):
    result, sp, rps = captured[family]
    with open(result.relation) as f:
        text = f.read()
    spec, rank0 = _by_fqn(sp), _by_fqn(rps[0])
    assert "spec spec.py\nimpl impl.r{rank}.py ranks 2\n" in text

    def line(fqn):
        return next(x for x in text.splitlines() if x.startswith(f"S.{spec[fqn]['name']} ="))

    assert line(LAYER + "self_attn.q_proj.weight").startswith(
        f"S.{spec[LAYER + 'self_attn.q_proj.weight']['name']} = shard(D*.{rank0[LAYER + 'self_attn.q_proj.weight']['name']}, dim=0)")
    assert f"= shard(D*.{rank0[LAYER + 'self_attn.o_proj.weight']['name']}, dim=1)" in line(LAYER + "self_attn.o_proj.weight")
    assert line(LAYER + "self_attn.o_proj.weight").endswith(f"# {LAYER}self_attn.o_proj.weight Shard(1) [64, 64]")
    assert f"= D*.{rank0['model.norm.weight']['name']}  #" in line("model.norm.weight")
    assert f"= D*.{rank0['input_ids']['name']}  # input_ids Replicate" in line("input_ids")
    for c in rps[0]["constants"]:
        assert f"const D*.{c['name']} = {c['value']!r}" in text
    assert f"output S.{sp['outputs'][0]['name']}" in text
    assert f"expect S.{sp['outputs'][0]['name']} = D*.{rps[0]['outputs'][0]['name']}" in text


@pytest.mark.parametrize("family", ["llama", "qwen2"])
def test_tangle_check_refines(captured, family):
    result, _, _ = captured[family]
    r = _check(result.relation)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[0] == "verdict: refines"
    assert "expectation holds" in r.stdout


def _planted(result, tmp_path, edit, changes=1):
    """check.rel with absolute graph paths and `changes` lines changed by edit(line) (returns the new line or None)."""
    with open(result.relation) as f:
        lines = f.read().splitlines()
    out, changed = [], 0
    for x in lines:
        if x.startswith("spec "):
            x = f"spec {result.spec}"
        elif x.startswith("impl "):
            x = f"impl {os.path.join(result.out_dir, 'impl.r{rank}.py')} ranks 2"
        else:
            new = edit(x)
            if new is not None:
                x, changed = new, changed + 1
        out.append(x)
    assert changed == changes
    path = tmp_path / "planted.rel"
    path.write_text("\n".join(out) + "\n")
    return path


def test_planted_wrong_placement_is_refused(captured, tmp_path):
    """o_proj written as Shard(0) (it is row-parallel, Shard(1)): the relation's shapes disagree."""
    result, _, _ = captured["llama"]
    r = _check(_planted(result, tmp_path, lambda x: x.replace(", dim=1)", ", dim=0)")
                        if "self_attn.o_proj.weight" in x else None))
    assert r.returncode != 0 and "verdict: refines" not in r.stdout
    assert "shape mismatch" in r.stderr, r.stdout + r.stderr


def test_planted_swapped_weights_is_a_violation(captured, tmp_path):
    """gate_proj related to the ranks' up_proj shards: same shapes, wrong values; tangle finds the silu."""
    result, sp, rps = captured["llama"]
    up = _by_fqn(rps[0])[LAYER + "mlp.up_proj.weight"]["name"]
    r = _check(_planted(result, tmp_path, lambda x: re.sub(r"shard\(D\*\.\w+,", f"shard(D*.{up},", x)
                        if "mlp.gate_proj.weight" in x else None))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "verdict: violation" in r.stdout
    assert "failing operator: S.silu" in r.stdout, r.stdout


def test_placements_and_logits_hold_on_values(captured, tmp_path):
    """The placeholder map describes the real data: run the llama TP=2 model with gloo (CPU, two
    processes); each rank's parameters are the spec's blocks its placements name, and its logits
    are the spec's."""
    result, _, _ = captured["llama"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(ROOT, "python"), os.path.dirname(__file__)]))
    procs = [subprocess.Popen([sys.executable, os.path.join(os.path.dirname(__file__), "hf_values.py"), "llama", "1",
                               "2", str(r), str(tmp_path / "store"), result.out_dir, str(tmp_path / f"r{r}.json")],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for r in range(2)]
    for r, p in enumerate(procs):
        out, _ = p.communicate(timeout=300)
        assert p.returncode == 0, f"rank {r}:\n{out[-3000:]}"
    for r in range(2):
        got = json.loads((tmp_path / f"r{r}.json").read_text())
        assert got["mismatches"] == [], (r, got)
        assert got["max_logit_error"] < 1e-4, (r, got)


# ---------------------------------------------------------------- sdpa attention (the default)

@pytest.fixture(scope="module")
def captured_sdpa(tmp_path_factory):
    """llama, 1 layer, TP=2, attn_implementation="sdpa" (tangle.hf's default)."""
    _need_hf()
    return hf.capture_hf("llama", tp=2, layers=1, out_dir=str(tmp_path_factory.mktemp("llama_sdpa")),
                         log=lambda msg: None)


def test_sdpa_graphs_call_cpu_flash_attention(captured_sdpa):
    for path in [captured_sdpa.spec] + list(captured_sdpa.impls):
        with open(path) as f:
            text = f.read()
        assert "aten._scaled_dot_product_flash_attention_for_cpu.default" in text, path
        assert "aten._softmax" not in text and "aten.bmm" not in text, path


def test_sdpa_check_refines(captured_sdpa):
    r = _check(captured_sdpa.relation)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[0] == "verdict: refines"
    assert "expectation holds" in r.stdout


def test_sdpa_replay_matches(captured_sdpa):
    """--replay evaluates both sides with the reference kernels (HF's mask construction included:
    arange, cumsum, index with broadcast indices; RoPE's cos/sin) and the outputs match."""
    if TANGLE is None:
        pytest.skip(f"{locate_binary()[0]} is not built (or set TANGLE_BIN)")
    r = subprocess.run([str(TANGLE), "check", captured_sdpa.relation, "--replay"], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and r.stdout.startswith("verdict: refines"), r.stdout + r.stderr
    assert "replay not possible" not in r.stdout, r.stdout
    assert "replay: 1 outputs match" in r.stdout, r.stdout


@pytest.mark.parametrize("family", ["llama", "qwen2"])
def test_eager_replay_matches(captured, family):
    result, _, _ = captured[family]
    if TANGLE is None:
        pytest.skip(f"{locate_binary()[0]} is not built (or set TANGLE_BIN)")
    r = subprocess.run([str(TANGLE), "check", result.relation, "--replay"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "replay: 1 outputs match" in r.stdout, r.stdout + r.stderr


def test_sdpa_planted_wrong_kv_head_group_is_a_violation(captured_sdpa, tmp_path):
    """Each rank holds the other rank's k/v projection rows: its query heads attend over the wrong kv
    head group. Shapes all agree; only the pairing of query and kv heads is wrong."""
    def swap(x):
        if "self_attn.k_proj.weight" not in x and "self_attn.v_proj.weight" not in x:
            return None
        return re.sub(r"shard\(D\*\.(\w+), dim=0\)", r"concat(D1.\1, D0.\1, dim=0)", x)

    r = _check(_planted(captured_sdpa, tmp_path, swap, changes=2))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "verdict: violation" in r.stdout
    assert "failing operator: S._scaled_dot_product_flash_attention_for_cpu " in r.stdout, r.stdout


# ---------------------------------------------------------------- a third family: fused q/k/v and gate/up

@pytest.fixture(scope="module")
def phi3(tmp_path_factory):
    """Phi-3, 1 layer, TP=2: fused qkv_proj and gate_up_proj, each `colwise_gather_output` (the fused
    output is all-gathered before it is split), o_proj/down_proj `rowwise_split_input`."""
    _need_hf()
    result = hf.capture_hf("phi3", tp=2, layers=1, out_dir=str(tmp_path_factory.mktemp("phi3")), log=lambda m: None)
    with open(result.impl_params[0]) as f:
        return result, json.load(f)


def test_phi3_fused_layers_refine(phi3):
    result, rank0 = phi3
    placements = {fqn: (p["placement"], p["global_shape"], p["local_shape"]) for fqn, p in _by_fqn(rank0).items()}
    assert placements[LAYER + "self_attn.qkv_proj.weight"] == ("Shard(0)", [128, 64], [64, 64])  # q 64 + k 32 + v 32
    assert placements[LAYER + "mlp.gate_up_proj.weight"] == ("Shard(0)", [256, 64], [128, 64])
    assert placements[LAYER + "self_attn.o_proj.weight"] == ("Shard(1)", [64, 64], [64, 32])
    r = _check(result.relation)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "expectation holds" in r.stdout


# ---------------------------------------------------------------- planted plan bugs (transformers styles)

def _plan_bug(captured_sdpa, tmp_path, plan):
    """The llama TP=2 ranks (sdpa) captured again with `plan` overriding rules of the shipped TP plan (the
    spec is the one already captured), checked with the Python API (which names parameters)."""
    import tangle
    spec_dir = captured_sdpa.out_dir
    sys.path.insert(0, os.path.dirname(__file__))  # plan_bugs.py, for styles written MODULE:NAME
    try:
        out = hf.capture_hf("llama", tp=2, layers=1, out_dir=str(tmp_path), log=lambda m: None, plan=plan,
                            spec_from=spec_dir)
    finally:
        sys.path.remove(os.path.dirname(__file__))
    if TANGLE is None:
        pytest.skip(f"{locate_binary()[0]} is not built (or set TANGLE_BIN)")
    return tangle.check(out.relation, tangle=str(TANGLE))


def test_planted_row_parallel_output_never_reduced(captured_sdpa, tmp_path):
    """o_proj with a style that declares its output partial: the partial sums reach the residual add."""
    r = _plan_bug(captured_sdpa, tmp_path, {"model.layers.*.self_attn.o_proj": "plan_bugs:rowwise_unreduced"})
    assert r.verdict == "violation", r.report
    assert r.failure.op == "aten.add.Tensor" and r.failure.code == "hidden_states = residual + hidden_states", r.report
    assert r.failure.source_file.endswith("modeling_llama.py")
    assert LAYER + "self_attn.o_proj.weight" in [p.fqn for p in r.failure.parameters], r.report
    assert any(e.startswith("sum(") for exprs in r.failure.input_relations.values() for e in exprs), r.report


def test_planted_lm_head_output_layout(captured_sdpa, tmp_path):
    """lm_head `colwise` (no gather): each rank holds a vocab slice of the logits, not the full logits
    that the model's shipped plan promises; the expectation is refused and the report names lm_head."""
    r = _plan_bug(captured_sdpa, tmp_path, {"lm_head": "colwise"})
    assert r.verdict == "violation" and r.failure is None, r.report
    assert r.expectations and not any(e["holds"] for e in r.expectations)
    assert "concat(D0." in " ".join(k for e in r.expectations for k in e["known"])  # known: the vocab shards
    assert "code: logits = self.lm_head(hidden_states)" in r.report
    assert "lm_head.weight" in [p.fqn for p in r.parameters], r.report


def test_planted_colwise_instead_of_rowwise_is_refused_in_one_line(captured_sdpa, tmp_path):
    """o_proj `colwise` where `rowwise` is needed: the ranks' program cannot run (shapes); one line
    naming the error and the model line, no graphs."""
    from tangle.capture import CaptureError
    with pytest.raises(CaptureError) as e:
        _plan_bug(captured_sdpa, tmp_path, {"model.layers.*.self_attn.o_proj": "colwise"})
    message = str(e.value)
    assert "\n" not in message and "same reduction dim" in message, message
    assert "modeling_llama.py:" in message and " in forward" in message, message


def test_plan_override_refusals():
    with pytest.raises(ValueError, match="--plan needs MODULE_PATTERN=STYLE"):
        hf.parse_plan(["lm_head"])
    _need_hf()
    with pytest.raises(ValueError, match="unknown parallel style 'rowise'"):
        hf._check_plan("llama", {"lm_head": "rowise"})
    with pytest.raises(ValueError, match="cannot import it"):
        hf._check_plan("llama", {"lm_head": "no_such_module_here:style"})


def test_full_size_shape_without_weights(tmp_path):
    """Llama-3-8B's dimensions (4096 hidden, 32 heads / 8 kv heads, 128256 vocab), one layer, TP=2,
    captured under FakeTensorMode (no weights, no memory): the placeholder map has the full shapes and
    the check refines."""
    _need_hf()
    out = hf.capture_hf("llama", tp=2, layers=1, out_dir=str(tmp_path), log=lambda m: None, shape="llama3-8b")
    with open(out.impl_params[1]) as f:
        rank1 = _by_fqn(json.load(f))
    assert rank1["model.embed_tokens.weight"]["global_shape"] == [128256, 4096]
    assert rank1["model.embed_tokens.weight"]["local_shape"] == [64128, 4096]
    assert rank1[LAYER + "mlp.down_proj.weight"]["local_shape"] == [4096, 7168]
    assert rank1[LAYER + "self_attn.k_proj.weight"]["local_shape"] == [512, 4096]  # 4 of 8 kv heads of 128
    r = _check(out.relation)
    assert r.returncode == 0 and r.stdout.startswith("verdict: refines"), r.stdout + r.stderr
