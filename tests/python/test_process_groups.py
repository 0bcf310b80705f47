"""A collective on the wrong process group (tp_dp_model.py): a row-parallel all-reduce on the rank's
data-parallel group instead of the tensor-parallel group must be a violation naming the operator, the
parameter and the source line; the same model on the right group refines. Each twin is captured once
(`tangle verify MODULE:build --ranks 2`, a process per graph).
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

from tangle.binary import find_binary, locate_binary  # noqa: E402

TANGLE = find_binary()


def _verify(target, out):
    pytest.importorskip("torch", reason="PyTorch is not installed (scripts/install-deps.sh installs torch==2.13.0)")
    if TANGLE is None:
        pytest.skip(f"{locate_binary()[0]} is not built (or set TANGLE_BIN)")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(ROOT, "python"), HERE,
                                                        os.environ.get("PYTHONPATH", "")]))
    run = subprocess.run([str(TANGLE), "verify", target, "--ranks", "2", "--out", str(out), "--json",
                          str(out) + ".json", "--quiet"], capture_output=True, text=True, timeout=900, env=env)
    report = json.loads(open(str(out) + ".json").read()) if os.path.exists(str(out) + ".json") else None
    return run, report


@pytest.fixture(scope="module")
def right_group(tmp_path_factory):
    return _verify("tp_dp_model:build", tmp_path_factory.mktemp("groups") / "right")


@pytest.fixture(scope="module")
def wrong_group(tmp_path_factory):
    return _verify("tp_dp_model:build_wrong_group", tmp_path_factory.mktemp("groups") / "wrong")


def _group_of_all_reduce(graph):
    with open(graph) as f:
        return re.search(r"_c10d_functional\.all_reduce\.default\(\w+, 'sum', '(\w+)'\)", f.read()).group(1)


def test_all_reduce_on_the_tensor_parallel_group_refines(right_group):
    run, report = right_group
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines()[0] == "verdict: refines"
    assert report["verdict"] == "refines"
    out = report["verify"]["out_dir"]
    # one group, shared by both ranks: the lowering sums over both
    assert _group_of_all_reduce(os.path.join(out, "impl.r0.py")) == _group_of_all_reduce(os.path.join(out, "impl.r1.py"))


def test_all_reduce_on_the_data_parallel_group_is_a_violation(wrong_group):
    run, report = wrong_group
    assert run.returncode == 1, run.stdout + run.stderr
    assert run.stdout.splitlines()[0] == "verdict: violation"
    assert "refines" not in run.stdout
    out = report["verify"]["out_dir"]
    # each rank's all-reduce names its own group of one: nothing is summed over the shards
    assert _group_of_all_reduce(os.path.join(out, "impl.r0.py")) != _group_of_all_reduce(os.path.join(out, "impl.r1.py"))
    # the operator: the bias add after the row-parallel product, its input known only as a sum over ranks
    assert re.search(r"failing operator: S\.add \(aten\.add\.Tensor\)", run.stdout), run.stdout
    assert re.search(r"S\.mm_1 = sum\(D0\.mm_1, D1\.mm_1\)", run.stdout), run.stdout
    # the parameter: the row-parallel weight (and the bias) named from the placeholder maps
    assert re.search(r"S\.\w+ = w2 \(\[8, 16\], related by: S\.\w+ = shard\(D\*\.\w+, dim=1\)\)", run.stdout), run.stdout
    assert {p["fqn"] for p in report["parameters_involved"]} >= {"w2", "b2"}
    # the source line
    assert re.search(r"model source of S\.add: .*tp_dp_model\.py:\d+ in mlp: .*@ w2\.t\(\) \+ b2", run.stdout), run.stdout
