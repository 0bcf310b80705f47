"""Expert parallelism (moe_model.py) and context parallelism (cp_model.py), captured from torch code and checked;
the context-parallel training step (cp_train_model.py: forward, loss, backward, gradients all-reduced) and the
expert-parallel one (moe_train_model.py: all_to_all dispatch and combine differentiated, expert shards not reduced).

Every graph is captured once, all in one spawned process (fake process groups, one after another), so the
twins share their spec and torch is imported once; the relations are written from each model's
relation(world_size) the way `tangle verify MODULE:build` writes them, then `tangle check` runs.
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
RANKS = 2
CASES = {f"{module}.{build}": f"{module}:spec:{build}:{RANKS}"
         for module, builds in {"moe_model": ["build", "build_wrong_ranks", "build_no_combine_weights"],
                                "cp_model": ["build", "build_rope_from_zero"]}.items()
         for build in builds}
# training steps (forward, loss, backward) traced with make_fx as tangle.pp does, with the gradients' expectations
CASES.update({f"{module}.{build}": f"{module}:spec:{build}:{RANKS}:program"
              for module, builds in {"cp_train_model": ["build", "build_no_reduce", "build_no_kv_grad", "build_mean_loss",
                                                        "build_mean_loss_not_divided",
                                                        "build_mean_loss_divided_twice"],
                                     "moe_train_model": ["build", "build_experts_reduced"]}.items()
              for build in builds})


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    pytest.importorskip("torch", reason="PyTorch is not installed (scripts/install-deps.sh installs torch==2.13.0)")
    if TANGLE is None:
        pytest.skip(f"{locate_binary()[0]} is not built (or set TANGLE_BIN)")
    return str(capture_in_child(tmp_path_factory.mktemp("moe_cp"), CASES))


def _check(captured, module, build):
    verify = importlib.import_module("tangle.verify")  # the module (tangle.verify is also the function)
    return verify.check(os.path.join(captured, f"{module}.{build}", "check.rel"), tangle=str(TANGLE))


def _failing(result):
    return result.json["failure"]  # operator, op (the ATen call), source (the model line)


def test_expert_parallel_moe_refines(captured):
    r = _check(captured, "moe_model", "build")
    assert r.verdict == "refines", r.checker_report
    assert r.json["expectations"] and all(e["holds"] for e in r.json["expectations"]), r.checker_report
    # the two all_to_alls per rank were lowered: dispatch and combine are in the proof
    assert r.stats["operators_checked"] > 50


def test_experts_on_the_wrong_ranks_is_a_violation_at_the_first_expert_matmul(captured):
    r = _check(captured, "moe_model", "build_wrong_ranks")
    assert r.verdict == "violation", r.checker_report
    op = _failing(r)
    assert op["op"] == "aten.mm.default", r.checker_report
    assert "x @ w1.t()" in op["source"], r.checker_report  # the expert FFN, not the router or the combine


def test_dropped_combine_weights_is_a_violation_at_the_combine_weights(captured):
    # The implementation never computes the router's combine weights (they are unused, so not traced):
    # the first spec operator without a counterpart is the one that makes them.
    r = _check(captured, "moe_model", "build_no_combine_weights")
    assert r.verdict == "violation", r.checker_report
    op = _failing(r)
    assert op["op"] == "aten.mul.Tensor" and "weights = scores * mask" in op["source"], r.checker_report


def test_context_parallel_attention_refines(captured):
    r = _check(captured, "cp_model", "build")
    assert r.verdict == "refines", r.checker_report
    assert r.json["expectations"] and all(e["holds"] for e in r.json["expectations"]), r.checker_report


def test_rope_positions_not_offset_is_a_violation_at_the_rope(captured):
    r = _check(captured, "cp_model", "build_rope_from_zero")
    assert r.verdict == "violation", r.checker_report
    op = _failing(r)
    assert op["op"] == "aten.mul.Tensor" and "t * cos" in op["source"], r.checker_report  # q's rotary embedding


# ---- context-parallel training step (cp_train_model.py): the K/V all-gather's backward is a reduce-scatter
def test_context_parallel_training_step_refines(captured):
    r = _check(captured, "cp_train_model", "build")
    assert r.verdict == "refines", r.checker_report
    # every rank ends with the spec's gradient of each of the 4 replicated weights
    assert len(r.json["expectations"]) == 8 and all(e["holds"] for e in r.json["expectations"]), r.checker_report
    impl = open(os.path.join(captured, "cp_train_model.build", "impl.r0.py")).read()
    assert impl.count("_c10d_functional.reduce_scatter_tensor.default(") == 2, "K and V's gradients"


def test_cp_gradients_not_reduced_is_a_violation_at_every_gradient(captured):
    r = _check(captured, "cp_train_model", "build_no_reduce")
    assert r.verdict == "violation", r.checker_report
    # each spec gradient is known only as the SUM of the ranks' partial gradients, never a rank's own
    refused = [e for e in r.json["expectations"] if not e["holds"]]
    assert len(refused) == 8, r.checker_report
    assert all(any(k.startswith("sum(D0.") for k in e["known"]) for e in refused), r.checker_report


def test_cp_kv_gathered_without_gradient_is_a_violation_at_a_weight_gradient(captured):
    # The other ranks' K/V rows are constants: the spec's dV is still the sum of the ranks' full-size dV
    # partials, but no rank multiplies that sum by its input: wv's gradient matmul is where it fails.
    r = _check(captured, "cp_train_model", "build_no_kv_grad")
    assert r.verdict == "violation", r.checker_report
    op = _failing(r)
    assert op["op"] == "aten.mm.default" and [i["tensor"] for i in op["inputs_read"]] == ["S.arg0_1"], \
        r.checker_report


# ---- expert-parallel training step (moe_train_model.py): each all_to_all's backward is an all_to_all back
def test_expert_parallel_training_step_refines(captured):
    r = _check(captured, "moe_train_model", "build")
    assert r.verdict == "refines", r.checker_report
    # router and shared expert: every rank holds the spec's gradient (4 x 2 ranks); experts: the ranks' shards (3)
    assert len(r.json["expectations"]) == 11 and all(e["holds"] for e in r.json["expectations"]), r.checker_report
    impl = open(os.path.join(captured, "moe_train_model.build", "impl.r0.py")).read()
    # dispatch, combine, and the combine's backward (the dispatched x * mask needs no gradient: x is data and
    # the top-k mask is not differentiable)
    assert impl.count("_c10d_functional.all_to_all_single.default(") == 3, r.checker_report


def test_moe_expert_gradients_all_reduced_is_a_violation_at_the_expert_gradient(captured):
    # Each rank's expert gradient is right before the all-reduce (concat(D0.add_12, D1.add_12) is found) but the
    # returned one is the sum of two different experts': the spec's sum of the experts' select_backwards fails.
    r = _check(captured, "moe_train_model", "build_experts_reduced")
    assert r.verdict == "violation", r.checker_report
    op = _failing(r)
    assert op["op"] == "aten.add.Tensor" and "do not return" in op["reason"], r.checker_report
    assert any(k.startswith("concat(D0.") for e in op["input_relations"] for k in e["expressions"]), r.checker_report


# ---- the local-mean loss, its gradients averaged over the CP ranks (all-reduce, then / world size)
def test_cp_mean_loss_step_refines(captured):
    # Each rank seeds its backward with 1/(its elements), the spec with 1/(all elements): every spec
    # gradient is the ranks' divided by 2 until the average. The scale lemmas (scale-out-*,
    # div-split-constant) keep it carried as div(clean, 2), searched from as from a clean relation
    # (deferred.cpp), until each rank's own / 2 after the all-reduce: every rank ends with the spec's
    # gradients (was inconclusive at a search limit in the attention backward, and before that a
    # false violation at the seed's division)
    r = _check(captured, "cp_train_model", "build_mean_loss")
    assert r.verdict == "refines", r.checker_report
    assert len(r.json["expectations"]) == 8 and all(e["holds"] for e in r.json["expectations"]), r.checker_report


def test_cp_mean_loss_wrongly_scaled_is_a_violation_at_the_seed(captured):
    # summed but never divided, or divided by the world size twice: the wo gradient (the first one the
    # backward reaches) is the spec's times 2 or / 2, so the chain carried from the seed's division ends
    # there without a clean relation
    for build in ("build_mean_loss_not_divided", "build_mean_loss_divided_twice"):
        r = _check(captured, "cp_train_model", build)
        assert r.verdict == "violation", (build, r.checker_report)
        op = _failing(r)
        assert op["op"] == "aten.div.Tensor" and not op["limit_reached"], (build, r.checker_report)
