"""tangle equiv: is vLLM's model the same function as HF transformers'? (HF is the spec.)

Glue only: captures the tiny model in both frameworks inside the pinned vLLM environment
(``python -m tangle.vllm_capture`` in ``$TANGLE_VLLM_PYTHON`` or ``~/.cache/tangle/vllm-venv``, made by
scripts/install-deps.sh), asks ``tangle propose`` for the relation between the two frameworks' tensors
(from the values both graphs computed on the same random input), shows it, and runs ``tangle check``
on it. The verdict is the checker's.

    tangle equiv qwen2|llama [--layers N] [--bug NAME] [--out DIR] [--json FILE]

Exit codes are the checker's (0 the same function, 1 violation, 3 inconclusive); 2 bad input or
the vLLM environment missing (one line).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

BUGS = ("qkv-order", "rope-gptj", "rope-theta", "rms-eps", "no-residual", "scale", "mask")


def vllm_python() -> str | None:
    """The interpreter of the pinned vLLM environment, or None when it is absent."""
    chosen = os.environ.get("TANGLE_VLLM_PYTHON")
    path = Path(chosen) if chosen else Path.home() / ".cache" / "tangle" / "vllm-venv" / "bin" / "python"
    if not path.exists():
        return None
    ok = subprocess.run([str(path), "-c", "import vllm, transformers"], capture_output=True).returncode == 0
    return str(path) if ok else None


def _tangle_bin() -> str:
    return os.environ.get("TANGLE_BIN", "tangle")


def capture(family: str, out: str, layers: int = 1, bug: str | None = None, bugs: list[str] | None = None) -> None:
    """Captures into OUT (or, with bugs, each variant into OUT/<bug>, in one process: "clean" for none)."""
    python = vllm_python()
    if python is None:
        raise RuntimeError("the vLLM environment is missing (scripts/install-deps.sh makes ~/.cache/tangle/vllm-venv; "
                           "or set TANGLE_VLLM_PYTHON)")
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    cmd = [python, "-m", "tangle.vllm_capture", family, "--out", out, "--layers", str(layers)]
    if bug:
        cmd += ["--bug", bug]
    if bugs:
        cmd += ["--bugs", *bugs]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        last = [line for line in r.stderr.splitlines() if line.strip()][-1:] or ["(no output)"]
        raise RuntimeError(f"capturing {family} in HF and vLLM failed: {last[0].removeprefix('[rank0]: ')}")


def equiv(family: str, out: str, layers: int = 1, bug: str | None = None, json_out: str | None = None,
          log=print) -> tuple[int, str, str]:
    """Captures, proposes and checks; returns (exit code, relation text, check report)."""
    capture(family, out, layers, bug)
    rel = os.path.join(out, "equiv.rel")
    p = subprocess.run([_tangle_bin(), "propose", os.path.join(out, "hf.values.json"),
                        os.path.join(out, "vllm.values.json"), "-o", rel], capture_output=True, text=True)
    if p.returncode not in (0, 1) or not os.path.exists(rel):
        raise RuntimeError(p.stderr.strip() or "tangle propose failed")
    text = Path(rel).read_text()
    log(f"relation proposed from values ({rel}; review it):\n{text}")
    if p.stderr.strip():
        log(p.stderr.strip())
    cmd = [_tangle_bin(), "check", rel, "--quiet"] + (["--json", json_out] if json_out else [])
    c = subprocess.run(cmd, capture_output=True, text=True)
    log(c.stdout.rstrip())
    if c.stderr.strip():
        log(c.stderr.strip())
    if c.returncode != 0:  # where the values part, whatever the proof could not reach (a diagnosis)
        d = subprocess.run([_tangle_bin(), "propose", os.path.join(out, "hf.values.json"),
                            os.path.join(out, "vllm.values.json"), "--localize"], capture_output=True, text=True)
        log(d.stdout.rstrip() or d.stderr.strip())
    return c.returncode, text, c.stdout


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="tangle equiv", description=__doc__.split("\n\n")[0])
    ap.add_argument("family", choices=["qwen2", "llama"])
    ap.add_argument("--layers", type=int, default=1)
    ap.add_argument("--bug", choices=BUGS, help="plant one bug into the vLLM side (tests the reports)")
    ap.add_argument("--out", help="keep the graphs, values and relation here (default: a temporary folder)")
    ap.add_argument("--json", help="also write the checker's JSON report here")
    a = ap.parse_args(argv)
    out = a.out or tempfile.mkdtemp(prefix="tangle-equiv-")
    os.makedirs(out, exist_ok=True)
    try:
        code, _, _ = equiv(a.family, out, a.layers, a.bug, a.json)
    except RuntimeError as e:
        print(f"tangle equiv: error: {e}", file=sys.stderr)
        return 2
    return code


if __name__ == "__main__":
    sys.exit(main())
