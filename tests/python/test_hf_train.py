"""HF Llama TP=2, one training step (forward + backward, eager attention, one layer), checked by tangle.

Captured once per module (a spawned process per graph): the joint graph per rank and for the spec,
the placeholder map with every gradient's parameter and layout, and check.rel. The checks: the
relation says what the placements say, `tangle check` proves it (`refines`), and planted bugs in
the backward are caught.
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


def _need_hf():
    pytest.importorskip("torch", reason="PyTorch is not installed (scripts/install-deps.sh installs torch==2.13.0)")
    pytest.importorskip("transformers",
                        reason="transformers is not installed (scripts/install-deps.sh installs transformers==5.23.0)")


@pytest.fixture(scope="module")
def verified(tmp_path_factory):
    """`tangle verify hf:llama --tp 2 --backward --out DIR` (1 layer): the run and the capture it leaves,
    (CompletedProcess, HFCapture, spec params, [rank params]), shared by every test here."""
    _need_hf()
    if TANGLE is None:
        pytest.skip(f"{locate_binary()[0]} is not built (or set TANGLE_BIN)")
    out = tmp_path_factory.mktemp("llama_bw") / "out"
    env = dict(os.environ, TANGLE_BIN=str(TANGLE))
    run = subprocess.run([str(TANGLE), "verify", "hf:llama", "--tp", "2", "--layers", "1", "--backward",
                          "--out", str(out)], capture_output=True, text=True, env=env, timeout=900)
    if not (out / "check.rel").exists():
        pytest.fail(f"tangle verify left no capture:\n{run.stdout}{run.stderr}")
    result = hf.HFCapture(str(out), str(out / "spec.py"), [str(out / f"impl.r{r}.py") for r in range(2)],
                          str(out / "spec.params.json"), [str(out / f"impl.r{r}.params.json") for r in range(2)],
                          str(out / "check.rel"))
    sp = json.loads((out / "spec.params.json").read_text())
    rps = [json.loads(open(p).read()) for p in result.impl_params]
    return run, result, sp, rps


@pytest.fixture(scope="module")
def trained(verified):
    return verified[1:]


def _check(rel_path, timeout=600):
    return subprocess.run([str(TANGLE), "check", str(rel_path)], capture_output=True, text=True, timeout=timeout)


def test_tangle_verify_backward_refines(verified):
    run, result, _, _ = verified
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines()[0] == "verdict: refines"
    expects = [x for x in open(result.relation).read().splitlines() if x.startswith("expect ")]
    assert len(expects) == 13  # the loss and 12 gradients
    # a `D*` side is one expectation per rank; a shard(...) one spans the ranks
    assert run.stdout.count("expectation holds: ") == sum(2 if " = D*." in x else 1 for x in expects)
    assert "refused" not in run.stdout
    report = json.loads(open(os.path.join(result.out_dir, "report.json")).read())
    assert report["verify"]["backward"] is True


def _grads(params):
    return {o["fqn"]: o for o in params["outputs"] if o.get("what") == "grad"}


def test_gradients_and_their_layouts(trained):
    result, sp, rps = trained
    spec = _grads(sp)
    expect = {
        "model.embed_tokens.weight": "Replicate",  # DTensor gives the full embedding gradient on every rank
        LAYER + "self_attn.q_proj.weight": "Shard(0)", LAYER + "self_attn.k_proj.weight": "Shard(0)",
        LAYER + "self_attn.v_proj.weight": "Shard(0)", LAYER + "self_attn.o_proj.weight": "Shard(1)",
        LAYER + "mlp.gate_proj.weight": "Shard(0)", LAYER + "mlp.up_proj.weight": "Shard(0)",
        LAYER + "mlp.down_proj.weight": "Shard(1)", LAYER + "input_layernorm.weight": "Replicate",
        LAYER + "post_attention_layernorm.weight": "Replicate", "model.norm.weight": "Replicate",
        "lm_head.weight": "Shard(0)",
    }
    assert set(spec) == set(expect)
    assert all(o["layout"] == "Replicate" for o in spec.values())
    for rp in rps:
        assert {fqn: o["layout"] for fqn, o in _grads(rp).items()} == expect
        assert rp["outputs"][0]["what"] == "loss" and rp["outputs"][0]["shape"] == []
        assert [p["name"] for p in rp["placeholders"] if p["kind"] == "tangent"] == ["tangents_1"]
    # One joint graph: the forward's loss and the backward's kernels, with every output in its return.
    for params, graph in [(sp, result.spec)] + list(zip(rps, result.impls)):
        with open(graph) as f:
            text = f.read()
        assert "aten.nll_loss_forward" in text and "aten.embedding_dense_backward" in text
        ret = re.findall(r"return \((.*)\)", text)[-1].split(", ")
        assert ret == [o["name"] for o in params["outputs"]]


def test_relation_lines(trained):
    result, sp, rps = trained
    with open(result.relation) as f:
        text = f.read()
    down, rdown = _grads(sp)[LAYER + "mlp.down_proj.weight"], _grads(rps[0])[LAYER + "mlp.down_proj.weight"]
    assert (f"expect S.{down['name']} = shard(D*.{rdown['name']}, dim=1)  "
            f"# grad of {LAYER}mlp.down_proj.weight Shard(1)") in text
    norm, rnorm = _grads(sp)["model.norm.weight"], _grads(rps[0])["model.norm.weight"]
    assert f"expect S.{norm['name']} = D*.{rnorm['name']}  # full grad of model.norm.weight on every rank" in text
    assert f"expect S.{sp['outputs'][0]['name']} = D*.{rps[0]['outputs'][0]['name']}  # full loss" in text
    assert "S.tangents_1 = D*.tangents_1" in text


def test_training_step_checks_again(trained):
    result, _, _ = trained
    r = _check(result.relation)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[0] == "verdict: refines"


def _planted_graph(result, tmp_path, rank, edit):
    """A copy of the capture where rank `rank`'s graph is edit(text)."""
    out = tmp_path / "planted"
    out.mkdir()
    for name in os.listdir(result.out_dir):
        src = os.path.join(result.out_dir, name)
        text = open(src).read()
        if name == f"impl.r{rank}.py":
            new = edit(text)
            assert new != text
            text = new
        (out / name).write_text(text)
    return out / "check.rel"


def test_planted_backward_bug_is_a_violation(trained, tmp_path):
    """Rank 1 adds the MLP's input gradients before their all-reduce (its partial sum of the
    column-parallel backward, not the total): rank 1's gradients below it are wrong. Rank 0 alone
    still gives the replicated ones, so tangle fails at the first gradient that needs rank 1's
    shard: the row-parallel o_proj weight's (an mm of the o_proj line)."""
    result, _, _ = trained

    def skip_all_reduce(text):
        tail = text[text.index("aten.silu_backward"):]
        add = re.search(r"(\w+): \"f32\[[^\]]*\]\" = torch\.ops\.aten\.add\.Tensor\((wait_tensor_\d+), "
                        r"(wait_tensor_\d+)\)", tail)
        waited = re.search(rf"{add.group(3)}: \"[^\"]*\" = torch\.ops\._c10d_functional\.wait_tensor\.default\((\w+)\)",
                           text).group(1)
        partial = re.search(rf"{waited}: \"[^\"]*\" = torch\.ops\._c10d_functional\.all_reduce\.default\((\w+),",
                            text).group(1)
        line = tail[add.start():tail.index("\n", add.start())]
        return text.replace(line, line.replace(add.group(3), partial))

    r = _check(_planted_graph(result, tmp_path, 1, skip_all_reduce))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "verdict: violation" in r.stdout
    assert re.search(r"failing operator: S\.mm_\d+ \(aten\.mm\.default\)", r.stdout), r.stdout
    assert "attn_output = self.o_proj(attn_output)" in r.stdout.split("where its inputs")[0], r.stdout


def test_planted_swapped_gradients_is_a_violation(trained, tmp_path):
    """The relation expects the k_proj gradient from the ranks' v_proj gradients (same shapes)."""
    result, sp, rps = trained
    k, v = _grads(sp)[LAYER + "self_attn.k_proj.weight"], _grads(rps[0])[LAYER + "self_attn.v_proj.weight"]
    text = open(result.relation).read()
    line = next(x for x in text.splitlines() if x.startswith(f"expect S.{k['name']} ="))
    planted = text.replace(line, f"expect S.{k['name']} = shard(D*.{v['name']}, dim=0)")
    path = tmp_path / "check.rel"
    for name in os.listdir(result.out_dir):
        if name.endswith(".py"):
            (tmp_path / name).write_text(open(os.path.join(result.out_dir, name)).read())
    path.write_text(planted)
    r = _check(path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "verdict: violation" in r.stdout


# ---------------------------------------------------------------- gradient layouts on real values

MISLABELLED = {"model.embed_tokens.weight": "Partial(sum)",  # whole on every rank: summing doubles it
               LAYER + "self_attn.o_proj.weight": "Shard(0)"}  # its shard is along dim 1


@pytest.fixture(scope="module")
def gloo_step(trained, tmp_path_factory):
    """hf_grad_values.py on two gloo processes (one real training step of the TP=2 model), against the
    capture's placeholder maps and against a copy with two gradient layouts mislabelled."""
    result, _, _ = trained
    tmp = tmp_path_factory.mktemp("llama_bw_gloo")
    wrong = tmp / "mislabelled"
    wrong.mkdir()
    for r, path in enumerate(result.impl_params):
        params = json.loads(open(path).read())
        for o in params["outputs"]:
            o["layout"] = MISLABELLED.get(o.get("fqn"), o["layout"])
        (wrong / f"impl.r{r}.params.json").write_text(json.dumps(params))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(ROOT, "python"), os.path.dirname(__file__)]))
    procs = [subprocess.Popen([sys.executable, os.path.join(os.path.dirname(__file__), "hf_grad_values.py"),
                               "llama", "1", "2", str(r), str(tmp / "store"), f"{result.out_dir},{wrong}",
                               str(tmp / f"r{r}.json")],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for r in range(2)]
    for r, p in enumerate(procs):
        out, _ = p.communicate(timeout=600)
        assert p.returncode == 0, f"rank {r}:\n{out[-3000:]}"
    return [json.loads((tmp / f"r{r}.json").read_text()) for r in range(2)]


def test_gradient_layouts_hold_on_values(gloo_step):
    """Each gradient the relation expects, in the layout it expects it, is what a real gloo run of the
    TP=2 model computes (the spec's gradient, its block, or a term of it), and the loss is the spec's."""
    for r, (real, _) in enumerate(gloo_step):
        assert real["mismatches"] == [], (r, real)
        assert real["checked"] == 12 and real["loss_error"] < 1e-5, (r, real)


def test_mislabelled_gradient_layout_fails_on_values(gloo_step):
    for r, (_, wrong) in enumerate(gloo_step):
        bad = sorted(m.split(" (")[0] for m in wrong["mismatches"])
        assert bad == sorted(f"grad of {f}" for f in MISLABELLED), (r, wrong)


# ---------------------------------------------------------------- no capture needed

def _ph(name, fqn, placement, kind="parameter"):
    return dict(name=name, kind=kind, fqn=fqn, placement=placement, global_shape=[8], local_shape=[8],
                dtype="float32")


def _params(grads, placeholders=None):
    phs = placeholders or [_ph("primals_1", "w", "Replicate"), _ph("tangents_1", "tangent:loss", "Replicate",
                                                                   kind="tangent")]
    return dict(backward=True, placeholders=phs,
                outputs=[dict(name="loss", what="loss", layout="Replicate", shape=[])] +
                        [dict(name=f"g_{f}", what="grad", fqn=f, layout=layout, shape=[8]) for f, layout in grads])


def test_relation_matches_gradients_by_fqn():
    spec = _params([("w", "Replicate")])
    text = hf.write_relation(spec, [_params([("w", "Partial(sum)")])] * 2)
    assert "S.tangents_1 = D*.tangents_1  # tangent:loss Replicate" in text
    assert "expect S.g_w = sum(D*.g_w)  # grad of w Partial(sum)" in text
    assert "expect S.loss = D*.loss  # full loss on every rank" in text


def test_mismatched_gradients_are_one_error():
    with pytest.raises(ValueError, match="the spec and the ranks return different gradients: v, w"):
        hf.write_relation(_params([("w", "Replicate")]), [_params([("v", "Replicate")])] * 2)
    with pytest.raises(ValueError, match="w: an input of the spec but not of rank"):
        hf.write_relation(_params([("w", "Replicate")]),
                          [_params([("w", "Replicate")], [_ph("primals_1", "x", "Replicate")])] * 2)
    with pytest.raises(ValueError, match="not the same kind of capture"):
        hf.write_relation(_params([]), [dict(_params([]), backward=False)] * 2)


def test_backward_is_for_hf_targets(tmp_path):
    if TANGLE is None:
        pytest.skip(f"{locate_binary()[0]} is not built (or set TANGLE_BIN)")
    r = subprocess.run([str(TANGLE), "verify", "mymodule:build", "--backward"], capture_output=True, text=True,
                       cwd=tmp_path, timeout=120)
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.strip().splitlines()[-1] == ("tangle verify: error: --backward applies to hf:, megatron: and "
                                                 "torchtitan: targets only")
