"""Graphs captured with dynamic shapes (a symbolic token count) verify with the
tangle CLI: sizes are related by facts, never assumed equal by name."""
import os
import re
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


def _inputs(path):
    """forward()'s parameters: name -> annotation."""
    text = open(path).read()
    sig = re.search(r"def forward\(self, (.*?)\):", text, re.S).group(1)
    return dict(re.findall(r'(\w+): "([^"]*)"', sig))


def _roles(path):
    """x (the symbolic-row input), w1 (f32[16, 8]), w2 (f32[8, 16]) and the token symbol."""
    roles = {}
    for name, ann in _inputs(path).items():
        if ann == "f32[16, 8]":
            roles["w1"] = name
        elif ann == "f32[8, 16]":
            roles["w2"] = name
        elif ann.startswith("f32[") and ann.endswith(", 8]"):
            roles["x"] = name
            roles["n"] = ann[4:-4]
    return roles


def _capture(tmp_path, build_name, stem):
    import sp_model

    fn, args, dynamic = sp_model.spec()
    capture.capture(fn, args, str(tmp_path / "spec.py"), dynamic)
    capture.capture_ranks(("sp_model", build_name), 2, str(tmp_path), stem=stem)
    spec = _roles(tmp_path / "spec.py")
    ranks = [_roles(tmp_path / f"{stem}.r{r}.py") for r in range(2)]
    return spec, ranks


def _check(tmp_path, relation):
    if TANGLE is None:
        pytest.skip(f"{locate_binary()[0]} is not built (or set TANGLE_BIN)")
    (tmp_path / "check.rel").write_text(relation)
    return subprocess.run([str(TANGLE), "check", str(tmp_path / "check.rel")], capture_output=True, text=True, timeout=120)


def _weights(spec, ranks):
    lines = []
    for r, roles in enumerate(ranks):
        lines.append(f"S.{spec['w1']} = D{r}.{roles['w1']}")
        lines.append(f"S.{spec['w2']} = D{r}.{roles['w2']}")
    return "\n".join(lines) + "\n"


@pytest.fixture
def pythonpath(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([os.path.dirname(__file__), os.path.join(ROOT, "python")]))


def test_sequence_parallel_over_symbolic_tokens_refines(tmp_path, pythonpath):
    spec, ranks = _capture(tmp_path, "build", "impl")
    assert "Sym(" in (tmp_path / "impl.r0.py").read_text()
    rel = (f"spec spec.py\nimpl impl.r{{rank}}.py ranks 2\n"
           f"S.{spec['x']} = concat(D0.{ranks[0]['x']}, D1.{ranks[1]['x']}, dim=0)\n" + _weights(spec, ranks))
    r = _check(tmp_path, rel)
    assert r.returncode == 0, r.stdout + r.stderr
    # S.n = D0.n + D1.n from the input relation, D1.n = D0.n from the all_gather.
    assert re.search(rf"S\.{spec['n']} = 2\*D0\.{ranks[0]['n']}", r.stdout), r.stdout


def test_without_the_all_gather_the_output_stays_sharded(tmp_path, pythonpath):
    spec, ranks = _capture(tmp_path, "build_no_gather", "impl")
    rel = (f"spec spec.py\nimpl impl.r{{rank}}.py ranks 2\n"
           f"S.{spec['x']} = concat(D0.{ranks[0]['x']}, D1.{ranks[1]['x']}, dim=0)\n" + _weights(spec, ranks))
    # Each rank holds its block of the output: a sharded (still clean) relation ...
    r = _check(tmp_path, rel)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "S.mm_1 = concat(D0.mm_1, D1.mm_1, dim=0)" in r.stdout, r.stdout
    # ... so a user who expects every rank to hold all of it is told otherwise.
    r = _check(tmp_path, rel + "expect S.mm_1 = D*.mm_1\n")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "expectation refused: S.mm_1 = D0.mm_1" in r.stdout, r.stdout


def test_halving_needs_an_even_token_count(tmp_path, pythonpath):
    spec, ranks = _capture(tmp_path, "build_split_in_rank", "split")
    rel = (f"spec spec.py\nimpl split.r{{rank}}.py ranks 2\n"
           + "".join(f"S.{spec['x']} = D{r}.{ranks[r]['x']}\n" for r in range(2)) + _weights(spec, ranks))
    r = _check(tmp_path, rel)
    assert r.returncode == 1, r.stdout + r.stderr  # an odd count drops the last token
    r = _check(tmp_path, rel + f"assume S.{spec['n']} % 2 == 0\n")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "verdict: refines" in r.stdout


def _attn_roles(path):
    """x (f32[sN, 16]), the QKV weight (f32[48|24, 16]) and the output weight (f32[16, 16|8])."""
    roles = {}
    for name, ann in _inputs(path).items():
        if re.fullmatch(r"f32\[s\d+, 16\]", ann):
            roles["x"] = name
        elif re.fullmatch(r"f32\[16, \d+\]", ann):  # before wqkv: the spec's wo is f32[16, 16]
            roles["wo"] = name
        elif re.fullmatch(r"f32\[\d+, 16\]", ann):
            roles["wqkv"] = name
    return roles


def _attn_relation(tmp_path, build_name):
    import attn_model

    fn, args, dynamic = attn_model.spec()
    capture.capture(fn, args, str(tmp_path / "spec.py"), dynamic)
    capture.capture_ranks(("attn_model", build_name), 2, str(tmp_path))
    s = _attn_roles(tmp_path / "spec.py")
    d = [_attn_roles(tmp_path / f"impl.r{r}.py") for r in range(2)]
    n = attn_model.HIDDEN // 2
    parts = [f"slice(D{r}.{d[r]['wqkv']}, dim=0, start={k * n}, end={(k + 1) * n})" for k in range(3) for r in range(2)]
    return (f"spec spec.py\nimpl impl.r{{rank}}.py ranks 2\n"
            f"S.{s['x']} = D0.{d[0]['x']}\nS.{s['x']} = D1.{d[1]['x']}\n"
            f"S.{s['wqkv']} = concat({', '.join(parts)}, dim=0)\n"
            f"S.{s['wo']} = concat(D0.{d[0]['wo']}, D1.{d[1]['wo']}, dim=1)\n")


def test_tensor_parallel_attention_over_symbolic_tokens_refines(tmp_path, pythonpath):
    rel = _attn_relation(tmp_path, "build")
    out = open(tmp_path / "spec.py").read()
    output = re.search(r"return \((\w+),\)", out).group(1)
    r = _check(tmp_path, rel + f"expect S.{output} = D*.wait_tensor\n")
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"expectation holds: S.{output} = D1.wait_tensor" in r.stdout


def test_attention_without_all_reduce_holds_only_partial_sums(tmp_path, pythonpath):
    rel = _attn_relation(tmp_path, "build_no_reduce")
    out = open(tmp_path / "spec.py").read()
    output = re.search(r"return \((\w+),\)", out).group(1)
    impl_out = re.search(r"return \((\w+),\)", open(tmp_path / "impl.r0.py").read()).group(1)
    r = _check(tmp_path, rel + f"expect S.{output} = D*.{impl_out}\n")
    assert r.returncode == 1, r.stdout + r.stderr
    assert f"expectation refused: S.{output} = D0.{impl_out}" in r.stdout
    assert f"known: S.{output} = sum(D0.{impl_out}, D1.{impl_out})" in r.stdout
