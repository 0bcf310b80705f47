"""TrainVerify's Llama-3 plan (bench/trainverify/llama_pp.py) at test size, captured shapes-only.

FFN-only TP with attention, norms and embedding replicated on the TP ranks, as pipeline stages with
data parallelism (DP2 PP2 TP2, 2 microbatches, 2 layers, forward + backward), captured by
tangle.pp.capture_pipeline_fake (fake tensors under the fake process group, every rank in one
process) and checked:

* the plan refines: the replicated computation keeps a relation on every TP rank, so each rank's
  FFN shard is matched, and every gradient is rebuilt from the ranks';
* the planted bug (the last stage's FFN without its forward all-reduce) is a violation at that
  stage's FFN residual add, the first operator reading the unreduced partial sum.
"""
import json
import os
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path[:0] = [os.path.join(ROOT, "python"), os.path.join(ROOT, "bench", "trainverify")]

from tangle.binary import find_binary, locate_binary  # noqa: E402

TANGLE = find_binary()
PLAN = dict(TV_HIDDEN="64", TV_SEQ="8", TV_DP="2", TV_PP="2", TV_TP="2", TV_NM="2", TV_LAYERS="2", TV_VOCAB="32")
_CACHE = {}


def _checked(tmp_path_factory, bug):
    if bug not in _CACHE:
        pytest.importorskip("torch", reason="torch is not installed (scripts/install-deps.sh)")
        pytest.importorskip("torch.distributed.pipelining", reason="this torch has no torch.distributed.pipelining")
        if TANGLE is None:
            pytest.skip(f"{locate_binary()[0]} is not built (or set TANGLE_BIN)")
        import tangle
        from tangle import pp
        env = dict(PLAN, TV_BUG=bug or "")
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)  # the capture child reads the plan from its environment
        try:
            out = tmp_path_factory.mktemp(f"tv_{bug or 'correct'}")
            pp.capture_pipeline_fake(("llama_pp", "build"), ("llama_pp", "spec"), 8, str(out))
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        rel = pp.write_relation(str(out), 8)
        _CACHE[bug] = (out, tangle.check(rel, tangle=str(TANGLE)))
    return _CACHE[bug]


def test_ffn_only_tp_plan_refines(tmp_path_factory):
    out, r = _checked(tmp_path_factory, None)
    assert r.verdict == "refines", r.report
    spec = json.loads((out / "spec.pp.json").read_text())
    rebuilt = {lhs for lhs, _ in r.output_relation}
    # every gradient of the spec (returned as detach(g)) has a relation; both DP replicas appear
    assert len(rebuilt) >= len(spec["outputs"]), r.report
    rhs = " ".join(rhs for _, rhs in r.output_relation)
    assert all(f"D{d}." in rhs for d in range(8)), r.report
    # Repeated layers are given earlier operators' relations (reuse), and that first pass is
    # already `refines`: a reused operator also records the equalities between the TP replicas'
    # tensors its source's search proved, which each rank's gradient expectation needs.
    assert r.stats["operators_reused"] > 0, r.stats
    assert r.stats["reuse_rerun"] is False, r.stats
    # The 2 replicas x 2 microbatches are 4 pieces of every activation: operators are searched on
    # one and renamed onto the others (block search), and that pass is `refines` too.
    assert r.stats["operators_blocked"] > 0, r.stats
    assert r.stats["blocks_rerun"] is False, r.stats


def test_missing_ffn_allreduce_on_the_last_stage_is_a_violation_at_its_residual_add(tmp_path_factory):
    out, r = _checked(tmp_path_factory, "no_ffn_allreduce")
    assert r.verdict == "violation", r.report
    assert r.failure.op == "aten.add.Tensor", r.report
    # the add reads the output of layer 1's FFN down projection (the last stage's first FFN)
    down = json.loads((out / "spec.pp.json").read_text())["params"]["layers.1.ffn.down.weight"]
    assert f"reads S.{down}" in r.report, r.report
