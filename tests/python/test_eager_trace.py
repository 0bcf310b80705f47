"""The capture frontend without Dynamo (tangle.eager_trace, the default) records the same ATen program as
torch.compile: the same operators, in the same order, with the same result shapes and dtypes, on the spec
and on every rank of a tiny HF Llama TP=2 (transformers' plan: in-place dist.all_reduce under no_grad,
the collective Dynamo rewrites to its functional form), and both captures refine."""
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))

from tangle import eager_trace, hf  # noqa: E402
from tangle.binary import find_binary  # noqa: E402

TANGLE = find_binary()
OP = re.compile(r'^\s*\w+(?:: "([^"]*)")? = (torch\.ops\.[\w.]+)\(')


def _program(path):
    """[(result type, operator)] of a printed graph, names and comments left out."""
    with open(path) as f:
        return [m.groups() for m in map(OP.match, f) if m]


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    pytest.importorskip("transformers")
    out = {}
    saved = os.environ.get(eager_trace.ENV)
    try:
        for frontend in ("eager", "dynamo"):
            os.environ[eager_trace.ENV] = frontend
            out[frontend] = hf.capture_hf("llama", tp=2, layers=1, attn="eager", log=lambda m: None,
                                          out_dir=str(tmp_path_factory.mktemp(frontend)))
    finally:
        if saved is None:
            os.environ.pop(eager_trace.ENV, None)
        else:
            os.environ[eager_trace.ENV] = saved
    return out


def test_same_aten_program_as_torch_compile(both):
    eager, dynamo = both["eager"], both["dynamo"]
    for a, b in [(eager.spec, dynamo.spec)] + list(zip(eager.impls, dynamo.impls)):
        pa, pb = _program(a), _program(b)
        assert len(pa) > 100 and pa == pb, os.path.basename(a)
    rank = "".join(open(eager.impls[0]).readlines())
    assert "_c10d_functional.all_reduce" in rank and "with_effects" not in rank


def test_both_refine(both):
    for frontend, result in both.items():
        proc = subprocess.run([TANGLE, "check", result.relation], capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0 and "verdict: refines" in proc.stdout + proc.stderr, (frontend, proc.stderr)


def test_unknown_frontend_is_refused(monkeypatch):
    monkeypatch.setenv(eager_trace.ENV, "jit")
    with pytest.raises(ValueError, match="TANGLE_CAPTURE_FRONTEND"):
        eager_trace.frontend()
