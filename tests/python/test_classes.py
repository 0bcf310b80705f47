"""Known failing classes of real implementations (issue 11 part 3), each with its own tiny
examples captured once per session:

1. GQA whose TP degree exceeds its kv heads (kv heads replicated over groups of ranks),
   eager (repeat_kv) and fused (SDPA with enable_gqa).
"""
import os
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.dirname(__file__))

torch = pytest.importorskip("torch", reason="PyTorch is not installed (make test installs torch==2.13.0)")
from tangle import capture, groups  # noqa: E402
from tangle.binary import find_binary, locate_binary  # noqa: E402

TANGLE = find_binary()
TP = 4


def _env():
    os.environ["PYTHONPATH"] = os.pathsep.join([os.path.dirname(__file__), os.path.join(ROOT, "python"),
                                                os.environ.get("PYTHONPATH", "")])


def _check(rel, *extra):
    if TANGLE is None:
        pytest.skip(f"{locate_binary()[0]} is not built (or set TANGLE_BIN)")
    return subprocess.run([str(TANGLE), "check", str(rel), *extra], capture_output=True, text=True, timeout=300)


# ---- 1. GQA, TP degree > kv heads ---------------------------------------------------------

def _gqa_relation(holders):
    """x replicated, q rows and o columns sharded, k/v rows: kv head holders[r] on rank r."""
    lines = ["spec spec.py", f"impl impl.r{{rank}}.py ranks {TP}", "S.arg0_1 = D*.arg0_1",
             "S.arg1_1 = shard(D*.arg1_1, dim=0)", "S.arg4_1 = shard(D*.arg4_1, dim=1)"]
    for name in ("arg2_1", "arg3_1"):  # wk, wv
        lines += groups.replicated_shard(name, name, 0, holders)
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="session")
def gqa_dirs(tmp_path_factory):
    """{form: folder} for form eager / fused, TP=4 over 2 kv heads. A wrong kv-group
    assignment changes which weights ranks load, not their graphs: it is a relation."""
    import gqa_model

    _env()
    out = {}
    for form, suffix in (("eager", ""), ("fused", "_fused")):
        spec_fn, args = getattr(gqa_model, "spec" + suffix)()
        d = tmp_path_factory.mktemp(f"gqa_{form}")
        capture.capture(spec_fn, args, str(d / "spec.py"))
        capture.capture_ranks(("gqa_model", "build" + suffix), TP, str(d))
        holders = [gqa_model.kv_group(r, TP) for r in range(TP)]
        assert holders == groups.piece_holders(TP, gqa_model.KV_HEADS)
        (d / "check.rel").write_text(_gqa_relation(holders))
        interleaved = [gqa_model.kv_group(r, TP, interleaved=True) for r in range(TP)]
        (d / "wrong_groups.rel").write_text(_gqa_relation(interleaved))
        out[form] = d
    return out


def test_replicated_shard_lines():
    assert groups.piece_holders(4, 2) == [0, 0, 1, 1]
    assert groups.replicated_shard("w", "w", 0, [0, 0, 1, 1]) == [
        "S.w = concat(D0.w, D2.w, dim=0)", "S.w = concat(D1.w, D3.w, dim=0)"]
    with pytest.raises(ValueError):
        groups.replicated_shard("w", "w", 0, [0, 0, 0, 1])


@pytest.mark.parametrize("form", ["eager", "fused"])
def test_gqa_kv_replicated_over_ranks_refines(gqa_dirs, form):
    d = gqa_dirs[form]
    text = (d / "impl.r1.py").read_text()
    assert ("expand" in text) if form == "eager" else ("scaled_dot_product" in text)
    r = _check(d / "check.rel", "--replay")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[0] == "verdict: refines"
    assert "outputs match" in r.stdout


@pytest.mark.parametrize("form", ["eager", "fused"])
def test_gqa_wrong_kv_group_is_a_violation(gqa_dirs, form):
    """Ranks load kv head rank % 2: query heads 2,3 (rank 1) read kv head 1 instead of 0."""
    r = _check(gqa_dirs[form] / "wrong_groups.rel")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "verdict: violation" in r.stdout
    op = "S.bmm (aten.bmm" if form == "eager" else "S._scaled_dot_product_flash_attention_for_cpu"
    assert f"failing operator: {op}" in r.stdout, r.stdout
