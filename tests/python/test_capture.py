"""Graphs captured from real PyTorch programs verify with the tangle CLI."""
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.dirname(__file__))

torch = pytest.importorskip("torch", reason="PyTorch is not installed (make test installs torch==2.13.0)")
from tangle import capture  # noqa: E402
from tangle.binary import find_binary, locate_binary  # noqa: E402

TANGLE = find_binary()

# AOTAutograd numbers the inputs: arg0_1 = w1, arg1_1 = x, arg2_1 = w2, arg3_1 = b2.
RELATION = """spec spec.py
impl impl.r{rank}.py ranks 2
S.arg0_1 = shard(D*.arg0_1, dim=0)
S.arg1_1 = D*.arg1_1
S.arg2_1 = shard(D*.arg2_1, dim=1)
S.arg3_1 = D*.arg3_1
"""


def _capture(tmp_path, build_name):
    import mlp_model

    fn, args = mlp_model.spec()
    capture.capture(fn, args, str(tmp_path / "spec.py"))
    capture.capture_ranks(("mlp_model", build_name), 2, str(tmp_path))
    (tmp_path / "check.rel").write_text(RELATION)


def _check(tmp_path):
    if TANGLE is None:
        pytest.skip(f"{locate_binary()[0]} is not built (or set TANGLE_BIN)")
    return subprocess.run([str(TANGLE), "check", str(tmp_path / "check.rel")], capture_output=True, text=True, timeout=120)


def test_captured_tensor_parallel_mlp_refines(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([os.path.dirname(__file__), os.path.join(ROOT, "python")]))
    _capture(tmp_path, "build")
    text = (tmp_path / "impl.r1.py").read_text()
    assert "_c10d_functional.all_reduce" in text
    r = _check(tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[0] == "verdict: refines"


def test_captured_mlp_without_all_reduce_is_a_violation(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([os.path.dirname(__file__), os.path.join(ROOT, "python")]))
    _capture(tmp_path, "build_buggy")
    r = _check(tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "verdict: violation" in r.stdout
    # Each rank adds the bias to its partial product: the add is the first wrong operator.
    assert "failing operator: S.add (aten.add.Tensor)" in r.stdout, r.stdout
