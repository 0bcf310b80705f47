"""Pipeline parallelism: torch.distributed.pipelining training steps captured (tangle.pp) and checked.

Each configuration of tests/python/pp_model.py is captured once (all ranks at once over gloo, make_fx
of one schedule step; the spec is the whole model on the whole batch) and checked with the CLI:

* GPipe, 2 stages x 2 microbatches; 1F1B, 3 stages x 4 microbatches; DP2 x PP2 (gradients summed
  over the data-parallel group after the step): refine, every gradient rebuilt from the ranks';
* TrainVerify bug 6 (send/recv between the wrong ranks): a violation at the first layer's matmul;
* TrainVerify bug 14 (the data-parallel reduction before the last microbatch): a violation at a
  gradient, whose correct sum exists only over tensors the ranks do not return;
* a send without its receive is bad input (exit 2), one line naming the node.
"""
import json
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.dirname(__file__))

from tangle.binary import find_binary, locate_binary  # noqa: E402

TANGLE = find_binary()


def _need():
    pytest.importorskip("torch", reason="torch is not installed (scripts/install-deps.sh)")
    pytest.importorskip("torch.distributed.pipelining", reason="this torch has no torch.distributed.pipelining")
    if TANGLE is None:
        pytest.skip(f"{locate_binary()[0]} is not built (or set TANGLE_BIN)")


_CACHE = {}


def _captured(tmp_path_factory, build, spec, world):
    """(out dir, check result) of one configuration, captured once per session."""
    if build not in _CACHE:
        import tangle
        from tangle import pp
        _need()
        out = tmp_path_factory.mktemp(f"pp_{build}")
        pp.capture_pipeline(("pp_model", build), ("pp_model", spec), world, str(out))
        rel = pp.write_relation(str(out), world)
        _CACHE[build] = (out, tangle.check(rel, tangle=str(TANGLE)))
    return _CACHE[build]


def _grad_roots(out):
    """The spec tensors of the gradients: the graph returns detach(g); relations name g."""
    names = set(json.loads((out / "spec.pp.json").read_text())["outputs"].values())
    roots = set()
    for line in (out / "spec.py").read_text().splitlines():
        m = re.match(r"\s*(\w+): .* = torch\.ops\.aten\.detach\.default\((\w+)\)", line)
        if m and m.group(1) in names:
            roots.add(m.group(2))
    assert len(roots) == len(names), (names, roots)
    return roots


@pytest.mark.parametrize("build,spec,world", [("gpipe2", "spec2", 2), ("onef1b3", "spec3", 3),
                                              ("dp2pp2", "spec2", 4)])
def test_pipeline_step_refines(tmp_path_factory, build, spec, world):
    out, r = _captured(tmp_path_factory, build, spec, world)
    assert r.verdict == "refines", r.report
    grads = _grad_roots(out)
    rebuilt = {lhs.removeprefix("S.") for lhs, _ in r.output_relation}
    assert grads <= rebuilt, (grads - rebuilt, r.report)
    # the data-parallel replicas each return the reduced gradient: both appear in the certificate
    if build == "dp2pp2":
        assert any("D2." in rhs for _, rhs in r.output_relation) and any("D0." in rhs for _, rhs in r.output_relation)


def test_send_recv_between_wrong_ranks_is_a_violation(tmp_path_factory):
    out, r = _captured(tmp_path_factory, "wrong_peer3", "spec3", 3)
    assert r.verdict == "violation", r.report
    assert r.failure.op == "aten.mm.default", r.report
    # the first layer's matmul: it reads the batch and layer 0's gate weight
    spec = json.loads((out / "spec.pp.json").read_text())
    assert "S.x_1" in r.failure.input_relations, r.report
    assert spec["params"]["0.gate.weight"] in r.report


def test_dp_reduce_before_last_microbatch_is_a_violation(tmp_path_factory):
    out, r = _captured(tmp_path_factory, "early_reduce", "spec2", 4)
    assert r.verdict == "violation", r.report
    assert r.failure.operator.removeprefix("S.") in _grad_roots(out), r.report
    assert "do not return" in r.failure.reason, r.report


def test_unmatched_send_is_bad_input(tmp_path_factory, tmp_path):
    out, _ = _captured(tmp_path_factory, "gpipe2", "spec2", 2)
    for f in out.iterdir():
        if f.is_file():
            (tmp_path / f.name).write_bytes(f.read_bytes())
    lines = (tmp_path / "impl.r0.py").read_text().splitlines(keepends=True)
    first_send = next(i for i, line in enumerate(lines) if "c10d.send.default" in line)
    del lines[first_send]
    (tmp_path / "impl.r0.py").write_text("".join(lines))
    p = subprocess.run([str(TANGLE), "check", str(tmp_path / "check.rel")], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 2, p.stdout + p.stderr
    err = p.stderr.strip().splitlines()
    assert len(err) == 1 and "impl.r1.py" in err[0] and "no partner" in err[0], p.stderr
