"""TrainVerify's TP bug classes (seed 001, SOSP'25 §8.3; ../shared/notes/trainverify.md), each a PyTorch
model pair that tangle must report as a violation at the right operator (trainverify_model.py,
tp_dp_grid.py). One spawned process captures every graph: the correct programs once, and per bug only
the ranks the bug changes (the others are the correct ranks' graphs). Bugs 6 and 14 (pipeline, DP
microbatches) are not here.
"""
import importlib
import json
import multiprocessing
import os
import re
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path[:0] = [os.path.join(ROOT, "python"), HERE]

from tangle.binary import find_binary, locate_binary  # noqa: E402

TANGLE = find_binary()
MODEL = os.path.join(HERE, "trainverify_model.py")
GRID = os.path.join(HERE, "tp_dp_grid.py")

# The norm bugs are reported at the projection that reads the norm's output h (its relation lacks the
# changed ranks: "known relations of its inputs" lists only the others).
NORM_READER = r"[qkv] = \(h @ w[qkv]\.t\(\)\)"

# bug: (model, the spec operator's source line (file, code regex), what the report says)
BUGS = {
    # 1: the attention output's all-reduce a no-op on every rank: the residual add sees partial sums
    "allreduce_noop": ("block", (MODEL, re.escape("y = x + o")), "failing operator"),
    # 2: the MLP's all-reduce removed from the data flow (it runs; the residual add reads the partial sum)
    "allreduce_removed": ("block", (MODEL, re.escape("z = y + f_red")), "failing operator"),
    # 3: the attention's all-reduce replaced by all-gather along dim 0 (the consumer reads the first block)
    "allreduce_to_allgather": ("block", (MODEL, re.escape("y = x + o")), "failing operator"),
    # 4: the lm_head's all-gather replaced by an all-reduce (tiled to the gathered shape)
    "allgather_to_allreduce": ("block", (MODEL, re.escape("logits = z @ wlm.t()")), "failing operator"),
    # 5: the input-gradient all-reduce of the column-parallel q/k/v missing
    "bwd_allreduce_missing": ("block", (MODEL, re.escape("dh = dq2 @ wq + (dq2 if")), "expectation refused"),
    # 7: RMSNorm's eps changed on rank 1
    "eps_one_rank": ("block", (MODEL, NORM_READER), "failing operator"),
    # 8: pow(x, 2) -> pow(x, 1) on rank 2
    "pow_one_rank": ("block", (MODEL, NORM_READER), "failing operator"),
    # 9: the constant of an add (the norm weight's 1 + wn) changed on ranks 1 and 2
    "add_const_two_ranks": ("block", (MODEL, NORM_READER), "failing operator"),
    # 10: the fan-in of h's gradient (q, k, v) given q's gradient for k's on rank 3
    "bwd_fanin_one_rank": ("block", (MODEL, re.escape("dh = dq2 @ wq + (dq2 if")), "failing operator"),
    # 11: RoPE's backward given q's and k's gradients swapped; reported where the swapped gradients meet wq (the
    # RoPE-backward products are carried there: no rank computes them)
    "bwd_rope_swapped": ("block", (MODEL, re.escape("dh = dq2 @ wq + (dq2 if")), "failing operator"),
    # 12, 13: the attention-score scale wrong on rank 1, on every rank
    "scale_one_rank": ("block", (MODEL, re.escape("a = torch.softmax(qr @ kr.transpose(1, 2) * scale")), "failing operator"),
    "scale_all_ranks": ("block", (MODEL, re.escape("a = torch.softmax(qr @ kr.transpose(1, 2) * scale")), "failing operator"),
    # the sequence sharded, the RoPE table not sliced by the shard's offset (positions not offset)
    "rope_table": ("seq", (MODEL, re.escape("qr, kr = q * c + _rot(q) * s")), "failing operator"),
    # a custom backward's input-gradient all-reduce over the global group, or skipped (TP2 x DP2)
    "dgrad_global": ("grid", (GRID, re.escape("return y, dz @ w1")), "failing operator"),
    "dgrad_skipped": ("grid", (GRID, re.escape("return y, dz @ w1")), "expectation refused"),
}


def _capture(out_root):
    sys.path[:0] = [os.path.join(ROOT, "python"), HERE]
    m = importlib.import_module("trainverify_model")
    by = lambda model: [b for b, v in BUGS.items() if v[0] == model]  # noqa: E731
    m.capture_all(out_root, by("block"), by("seq"), by("grid"))


def _relation(d, model):
    verify = importlib.import_module("tangle.verify")
    m, grid = importlib.import_module("trainverify_model"), importlib.import_module("tp_dp_grid")
    body, n = {"block": (m.relation, m.TP), "seq": (m.seq_relation, 2), "grid": (grid.relation_train, 4)}[model]
    sp = json.load(open(os.path.join(d, "spec.params.json")))
    rp = [json.load(open(os.path.join(d, f"impl.r{r}.params.json"))) for r in range(n)]
    text = verify._user_relation(body(n), n, sp, rp, verify._node_names(os.path.join(d, "spec.py")),
                                 [verify._node_names(os.path.join(d, f"impl.r{r}.py")) for r in range(n)], {})
    path = os.path.join(d, "check.rel")
    with open(path, "w") as f:
        f.write(text)
    return path


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    pytest.importorskip("torch", reason="PyTorch is not installed (scripts/install-deps.sh installs torch==2.13.0)")
    if TANGLE is None:
        pytest.skip(f"{locate_binary()[0]} is not built (or set TANGLE_BIN)")
    out = str(tmp_path_factory.mktemp("trainverify"))
    p = multiprocessing.get_context("spawn").Process(target=_capture, args=(out,))
    p.start()
    p.join()
    assert p.exitcode == 0, "capturing the TrainVerify bug models failed"
    return out


def _check(captured, model, variant):
    rel = _relation(os.path.join(captured, model, variant), model)
    return subprocess.run([str(TANGLE), "check", rel], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("model", ["block", "seq", "grid"])
def test_correct_models_refine(captured, model):
    r = _check(captured, model, "correct")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[0] == "verdict: refines"


@pytest.mark.parametrize("bug", list(BUGS))
def test_bug_is_a_violation_at_its_operator(captured, bug):
    model, (path, code), kind = BUGS[bug]
    r = _check(captured, model, bug)
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stdout.splitlines()[0] == "verdict: violation"
    assert kind in r.stdout, r.stdout
    # the model source line of the operator named (failing operator, or the refused expectation's)
    first = r.stdout.split("\n  D0.", 1)[0]  # the spec side of the report
    assert re.search(rf"{re.escape(path)}:\d+ in \w+, code: .*{code}", first), r.stdout
