"""HF Llama TP=2, one training step with 2 micro-batches accumulated (tangle.hf_accum): the loss
scaled as transformers' Trainer scales it (sum over tokens / kept tokens of the whole step) refines
the unparallelized step; the planted "loss not scaled" and "scaled twice" are violations that name
the step's line where the ranks and the spec part ways.

Captured once per module (spawned processes: the spec and 2 ranks per variant); each test runs the
checker on one variant.
"""
import os
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))

from tangle.binary import find_binary, locate_binary  # noqa: E402

TANGLE = find_binary()
VARIANTS = ("tokens", "unscaled", "twice")


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    pytest.importorskip("torch", reason="PyTorch is not installed (scripts/install-deps.sh installs torch==2.13.0)")
    pytest.importorskip("transformers",
                        reason="transformers is not installed (scripts/install-deps.sh installs transformers==5.23.0)")
    if TANGLE is None:
        pytest.skip(f"{locate_binary()[0]} is not built (or set TANGLE_BIN)")
    from tangle import hf_accum
    out = tmp_path_factory.mktemp("hf_accum")
    return hf_accum.capture("llama", 2, 1, str(out), scalings=VARIANTS, log=lambda *_: None)


def _check(captured, variant):
    return subprocess.run([str(TANGLE), "check", captured[variant].relation], capture_output=True, text=True,
                          timeout=900)


def _failure(stdout):
    head = stdout.split("where its inputs")[0]
    return head.splitlines()[1], head


def test_trainer_scaling_refines(captured):
    r = _check(captured, "tokens")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[0] == "verdict: refines"
    expects = [x for x in open(captured["tokens"].relation).read().splitlines() if x.startswith("expect ")]
    assert len(expects) == 13  # the loss and 12 gradients
    # a `D*` side is one expectation per rank; a shard(...) one spans the ranks
    assert r.stdout.count("expectation holds: ") == sum(2 if " = D*." in x else 1 for x in expects), r.stdout


def test_loss_not_scaled_is_a_violation_at_the_token_count(captured):
    """Each micro-batch's own mean, not divided by 2: the ranks never compute the step's kept-token
    count that the spec divides every micro-batch's loss by; the report names that line."""
    r = _check(captured, "unscaled")
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stdout.splitlines()[0] == "verdict: violation"
    line, head = _failure(r.stdout)
    assert line.startswith("failing operator: S.ne (aten.ne.Scalar)"), r.stdout
    assert "hf_accum.py" in head and "items = (labels[..., 1:] != IGNORE).sum()" in head, head


def test_loss_scaled_twice_is_a_violation_at_the_accumulation(captured):
    """num_items_in_batch and a further 1/2: each micro-batch's loss is related, their sum is not."""
    r = _check(captured, "twice")
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stdout.splitlines()[0] == "verdict: violation"
    line, head = _failure(r.stdout)
    assert line.startswith("failing operator: S.add_"), r.stdout
    assert "total = loss if total is None else total + loss" in head, head
