"""`tangle sweep`: a grid of verify runs on a process pool and on a local Ray instance.

The points are the tiny tensor-parallel MLP of mlp_model.py (a correct build and one that drops its
all-reduce) at 1 and 2 ranks, so each point captures in a few seconds.
"""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(ROOT, "python"))

from tangle import sweep as S  # noqa: E402
from tangle.binary import find_binary, locate_binary  # noqa: E402

TANGLE = find_binary()


def _need():
    pytest.importorskip("torch", reason="PyTorch is not installed (scripts/install-deps.sh installs torch==2.13.0)")
    if TANGLE is None:
        pytest.skip(f"{locate_binary()[0]} is not built (or set TANGLE_BIN)")


def _env():
    env = dict(os.environ)
    env.pop("TANGLE_BIN", None)  # `tangle sweep` sets it to itself
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [HERE, os.path.join(ROOT, "python"), env.get("PYTHONPATH")]))
    return env


# ---------------------------------------------------------------- the grid (no capture)

def test_grid_is_the_product_of_its_axes():
    pts = S.expand({"target": ["a:build", "b:build"], "tp": [2, 4], "sp": [False, True],
                    "fixed": {"setup": "m"}})
    assert len(pts) == 8
    assert pts[0] == {"setup": "m", "target": "a:build", "tp": 2, "sp": False}
    assert {(p["target"], p["tp"], p["sp"]) for p in pts} == {
        (t, n, s) for t in ("a:build", "b:build") for n in (2, 4) for s in (False, True)}
    assert S.expand({"points": [{"target": "a:build", "tp": 3}]}) == [{"target": "a:build", "tp": 3}]


@pytest.mark.parametrize("grid, message", [
    ({"target": ["a:build"], "degree": [2]}, "unknown grid axis 'degree'"),
    ({"tp": [2]}, "has no target"),
    ({"target": []}, "must be a non-empty list"),
    ({"points": [{"target": "a:build", "color": 1}]}, "unknown argument 'color'"),
    ([1, 2], "a grid is a JSON object"),
])
def test_bad_grids_are_one_error(grid, message):
    with pytest.raises(S.SweepError, match=message):
        S.expand(grid)


def test_exit_code_is_the_worst_point():
    def r(verdict):
        return S.PointResult({"target": "x"}, verdict, 0, 0.0, None, None, None, "")
    assert S.exit_code([r("refines"), r("refines")]) == 0
    assert S.exit_code([r("refines"), r("inconclusive")]) == 3
    assert S.exit_code([r("inconclusive"), r("error")]) == 2
    assert S.exit_code([r("error"), r("violation"), r("refines")]) == 1


def test_bad_grid_file_is_one_line(tmp_path):
    bad = tmp_path / "grid.json"
    bad.write_text('{"target": ["mlp_model:build"],\n "tp": [2,]}')
    r = subprocess.run([sys.executable, "-m", "tangle.sweep", "--grid", str(bad)], capture_output=True, text=True,
                       env=_env(), cwd=ROOT)
    assert r.returncode == 2
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("tangle sweep: error: ") and "grid.json:2" in lines[0], r.stderr


# ---------------------------------------------------------------- real verify runs

def test_sweep_on_a_process_pool(tmp_path):
    """Four points, two at a time: the correct build refines at 1 and 2 ranks, the buggy one is a
    violation at 2 ranks (and refines at 1, where there is nothing to reduce); one table, one JSON."""
    _need()
    out = tmp_path / "sweep.json"
    r = subprocess.run([str(TANGLE), "sweep", "mlp_model:build", "mlp_model:build_buggy", "--tp", "1,2",
                        "--jobs", "2", "--json", str(out)],
                       capture_output=True, text=True, env=_env(), cwd=ROOT, timeout=900)
    assert r.returncode == 1, r.stdout + r.stderr  # a violation among the points
    results = json.loads(out.read_text())["results"]
    got = {(x["point"]["target"], x["point"]["tp"]): x["verdict"] for x in results}
    assert got == {("mlp_model:build", 1): "refines", ("mlp_model:build", 2): "refines",
                   ("mlp_model:build_buggy", 1): "refines", ("mlp_model:build_buggy", 2): "violation"}
    assert len({x["worker"] for x in results}) >= 2  # really ran on more than one process
    bug = next(x for x in results if x["verdict"] == "violation")
    assert bug["failure"] and bug["check_seconds"] is not None and bug["enodes_max"] > 0
    table = r.stdout.splitlines()
    assert table[0].startswith("| target | tp | layers |") and len(table) == 2 + 4
    assert sum("| violation |" in line for line in table) == 1


def test_sweep_on_a_local_ray_instance(tmp_path):
    """The same kind of grid as tasks on a Ray instance this test starts on this machine."""
    _need()
    pytest.importorskip("ray", reason="ray is not installed (scripts/install-deps.sh installs ray==2.60.0)")
    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps({"points": [{"target": "mlp_model:build", "tp": 2},
                                           {"target": "mlp_model:build_buggy", "tp": 2}]}))
    out = tmp_path / "sweep.json"
    env = _env()
    env["RAY_AUTH_MODE"] = "disabled"  # a throwaway local instance
    r = subprocess.run([str(TANGLE), "sweep", "--grid", str(grid), "--ray", "local", "--jobs", "2",
                        "--json", str(out)], capture_output=True, text=True, env=env, cwd=ROOT, timeout=900)
    assert r.returncode == 1, r.stdout + r.stderr
    results = json.loads(out.read_text())["results"]
    assert [x["verdict"] for x in results] == ["refines", "violation"]
    assert all(x["worker"].split(":")[1] != str(os.getpid()) for x in results)
