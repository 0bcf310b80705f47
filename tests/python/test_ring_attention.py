"""Ring attention (ring_model.py): torch's own ring loop (_templated_ring_attention, the code behind
context_parallel) captured per rank and checked against one attention over the whole sequence; with its
backward (ring_backward_model.py: _templated_ring_attention_backward), the gradients of q, k, v too, with and
without torch's round-robin load balancing; rings whose rotater turns the wrong way are violations.

All cases are captured once, in one spawned process (fake process groups), as test_moe_cp.py does.
"""
import importlib
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path[:0] = [os.path.join(ROOT, "python"), HERE]

from tangle.binary import find_binary, locate_binary  # noqa: E402
from dp_capture import capture_in_child  # noqa: E402

TANGLE = find_binary()
CASES = {"plain": "ring_model:spec:build:2", "no_ring": "ring_model:spec:build_no_ring:2",
         "causal": "ring_model:spec_causal:build_causal:2",
         "unmasked": "ring_model:spec_causal:build_causal_unmasked:2",
         "balanced": "ring_model:spec_causal:build_causal_balanced:2:relation_balanced",
         "balanced_swapped": "ring_model:spec_causal:build_causal_balanced_swapped:2:relation_balanced_swapped",
         "balanced_unbalanced_ring": "ring_model:spec_causal:build_causal_balanced_unbalanced_ring:2:relation_balanced",
         "bw_plain": "ring_backward_model:spec:build:2", "bw_causal": "ring_backward_model:spec_causal:build_causal:2",
         "bw_kept_grad": "ring_backward_model:spec:build_kept_grad:2",
         "bw_unmasked": "ring_backward_model:spec_causal:build_causal_unmasked_backward:2",
         "bw_balanced": "ring_backward_model:spec_causal:build_causal_balanced:2:relation_balanced",
         # the wrong-way rings need 4 ranks: with 2, rank r-1 is rank r+1
         "wrong_way": "ring_model:spec_causal:build_causal_wrong_way:4",
         "bw_wrong_way": "ring_backward_model:spec_causal:build_causal_wrong_way:4",
         # load-balanced over 4 ranks: each rank's dk/dv accumulator is concat(chunk j, chunk 7-j), pairs that are
         # not adjacent in the sequence (at 2 ranks they are)
         "bw_balanced4": "ring_backward_model:spec_causal:build_causal_balanced:4:relation_balanced",
         "bw_balanced_kept_grad4": "ring_backward_model:spec_causal:build_causal_balanced_kept_grad:4:relation_balanced"}


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    pytest.importorskip("torch", reason="PyTorch is not installed (scripts/install-deps.sh installs torch==2.13.0)")
    if TANGLE is None:
        pytest.skip(f"{locate_binary()[0]} is not built (or set TANGLE_BIN)")
    return str(capture_in_child(tmp_path_factory.mktemp("ring"), CASES))


def _check(captured, case):
    verify = importlib.import_module("tangle.verify")  # the module (tangle.verify is also the function)
    return verify.check(os.path.join(captured, case, "check.rel"), tangle=str(TANGLE), extra_args=["--replay"])


def _holds(r):
    return r.json["expectations"] and all(e["holds"] for e in r.json["expectations"])


@pytest.mark.parametrize("case", ["plain", "causal", "balanced"])
def test_ring_attention_refines_with_out_and_lse(captured, case):
    r = _check(captured, case)
    assert r.verdict == "refines", r.checker_report
    assert _holds(r) and len(r.json["expectations"]) == 2, r.checker_report  # out and the log-sum-exp
    assert "outputs match" in r.checker_report, r.checker_report  # the certificate replays


@pytest.mark.parametrize("case", ["no_ring", "unmasked", "balanced_swapped", "balanced_unbalanced_ring", "wrong_way"])
def test_broken_ring_is_a_violation_at_the_attention(captured, case):
    r = _check(captured, case)
    assert r.verdict == "violation", r.checker_report
    assert r.json["failure"]["op"] == "aten._scaled_dot_product_flash_attention_for_cpu.default", r.checker_report


@pytest.mark.parametrize("case", ["bw_plain", "bw_causal", "bw_balanced", "bw_balanced4"])
def test_ring_attention_backward_refines_with_every_gradient(captured, case):
    r = _check(captured, case)
    assert r.verdict == "refines", r.checker_report
    # out, lse, and dq, dk, dv: each rank's rows of the spec's gradients
    assert _holds(r) and len(r.json["expectations"]) == 5, r.checker_report
    assert "5 outputs match" in r.checker_report, r.checker_report


@pytest.mark.parametrize("case", ["bw_kept_grad", "bw_unmasked", "bw_wrong_way", "bw_balanced_kept_grad4"])
def test_broken_ring_backward_is_a_violation_at_the_backward(captured, case):
    # dk/dv never sent round the ring (also load-balanced over 4 ranks); is_causal dropped in the backward only (the
    # forward is right); dk/dv sent to rank r-1 while K/V arrive from r-1
    r = _check(captured, case)
    assert r.verdict == "violation", r.checker_report
    assert r.json["failure"]["op"] == "aten._scaled_dot_product_flash_attention_for_cpu_backward.default", \
        r.checker_report
    assert "counterexample" in r.checker_report, r.checker_report
