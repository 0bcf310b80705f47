"""Progress on stderr: the line `tangle check` redraws while it searches, and `tangle verify`'s
"capturing rank r/N ..." status, both drawn only on a terminal (a pseudo-terminal here); with --quiet
or into a pipe not one byte of them is written.
"""
import io
import os
import pty
import re
import select
import subprocess
import sys
import textwrap
import time

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))

from tangle.binary import find_binary  # noqa: E402

TANGLE = find_binary()
VIOLATION = os.path.join(ROOT, "examples", "paper", "bug4_offdiag", "check.rel")
PROGRESS_NOW = {"TANGLE_PROGRESS_DELAY": "0"}  # draw from the first operator (the examples take ~0.1 s)
STATUS = re.compile(r"\r\x1b\[K")              # what redraws a line in place


def _need_tangle():
    if TANGLE is None:
        pytest.skip("no tangle binary (make build, or set TANGLE_BIN)")


def _run_in_pty(cmd, env, cwd=None, timeout=300):
    """Runs cmd with stdin/stdout/stderr on a pseudo-terminal; returns (exit code, everything written)."""
    pid, fd = pty.fork()
    if pid == 0:
        try:
            if cwd:
                os.chdir(cwd)
            os.execvpe(cmd[0], cmd, env)
        finally:
            os._exit(127)
    out = b""
    deadline = time.time() + timeout
    while time.time() < deadline:
        ready, _, _ = select.select([fd], [], [], 1)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
    else:
        os.kill(pid, 9)
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), out.decode(errors="replace")


def test_check_progress_on_a_terminal():
    _need_tangle()
    code, out = _run_in_pty([str(TANGLE), "check", VIOLATION], {**os.environ, **PROGRESS_NOW})
    assert code == 1
    # operators done / total, ETA, the operator and its model source line
    assert re.search(r"\rchecking: operator 1/1, ETA \?: S\.mm \(moe_expert\.py:31 in forward\)\x1b\[K", out), out
    assert out.index("\r\x1b[K") < out.index("verdict: violation")  # erased before the report


def test_no_check_progress_when_quiet_or_not_a_terminal():
    _need_tangle()
    code, out = _run_in_pty([str(TANGLE), "check", VIOLATION, "--quiet"], {**os.environ, **PROGRESS_NOW})
    assert code == 1 and "verdict: violation" in out
    assert "checking:" not in out and not STATUS.search(out)
    proc = subprocess.run([str(TANGLE), "check", VIOLATION], capture_output=True, text=True,
                          env={**os.environ, **PROGRESS_NOW}, timeout=120)
    assert proc.returncode == 1
    assert proc.stderr == ""
    assert "\r" not in proc.stdout and "\x1b" not in proc.stdout


MODULE = '''
import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol


def weights():
    g = torch.Generator().manual_seed(0)
    return torch.randn(4, 6, generator=g), torch.randn(8, 6, generator=g)


def spec():
    return (lambda x, w: x @ w.t()), weights()


def build(rank, world_size):
    x, w = weights()
    o = 8 // world_size
    return (lambda x, w: funcol.all_gather_tensor(x @ w.t(), 1, dist.group.WORLD)), (x, w[rank * o:(rank + 1) * o])


def relation(world_size):
    return "S.x = D*.x\\nS.w = shard(D*.w, dim=0)\\nexpect S.output = D*.output\\n"
'''


@pytest.fixture(scope="module")
def user_module(tmp_path_factory):
    pytest.importorskip("torch", reason="PyTorch is not installed (scripts/install-deps.sh installs torch==2.13.0)")
    _need_tangle()
    d = tmp_path_factory.mktemp("progress_model")
    (d / "progress_model.py").write_text(textwrap.dedent(MODULE))
    return d


def _verify_env(folder):
    env = {**os.environ, **PROGRESS_NOW}
    env["PYTHONPATH"] = os.pathsep.join([str(folder), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def test_verify_progress_on_a_terminal(user_module):
    code, out = _run_in_pty([str(TANGLE), "verify", "progress_model:build", "--ranks", "2"],
                            _verify_env(user_module), cwd=user_module)
    assert code == 0, out
    assert "\r\x1b[Kcapturing the spec ..." in out
    assert "\r\x1b[Kcapturing rank 0/2 ... (0/2 captured)" in out
    assert "\r\x1b[Kcapturing rank 1/2 ... (1/2 captured)" in out
    # the checker's line, relayed through tangle verify's status line
    assert re.search(r"\r\x1b\[Kchecking: operator \d+/\d+, ETA", out), out
    assert "rank 1/2: captured impl.r1.py" in out  # the log lines stay
    assert "verdict: refines" in out


def test_verify_no_progress_into_a_pipe(user_module):
    html = user_module / "verify.html"
    proc = subprocess.run([str(TANGLE), "verify", "progress_model:build", "--ranks", "2", "--html", str(html)],
                          capture_output=True, text=True, env=_verify_env(user_module), cwd=user_module, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "verdict: refines" in proc.stdout
    assert 'class="verdict refines"' in html.read_text()  # tangle verify --html
    assert "rank 1/2: captured impl.r1.py" in proc.stderr  # log lines, one per line
    assert "\r" not in proc.stderr and "\x1b" not in proc.stderr and "capturing" not in proc.stderr


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_verify_quiet_writes_nothing_even_to_a_terminal():
    from tangle import progress
    out = _Terminal()
    log = progress.Progress(stream=out, quiet=True)  # what tangle verify --quiet uses
    log("rank 0/2: captured impl.r0.py in 1.0 s")
    progress.status(log, "capturing rank 1/2 ...")
    log.clear()
    assert out.getvalue() == "" and not log.live
    log = progress.Progress(stream=out)
    log("a log line")
    progress.status(log, "capturing rank 1/2 ...")
    log.clear()
    assert out.getvalue().startswith("a log line\n\r\x1b[Kcapturing rank 1/2 ... [") and out.getvalue().endswith("\r\x1b[K")
