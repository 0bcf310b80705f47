"""Progress on stderr for ``tangle verify``: log lines, and one status line redrawn in place.

``Progress`` is the ``log`` callable that the captures call with finished steps ("rank 1/4: captured
impl.r1.py in 3.2 s"); its ``status(text)`` shows what is running now ("capturing rank 2/4 ...") on a
line redrawn with ``\\r``, only when the stream is a terminal. ``quiet`` prints nothing at all; a pipe
or a file gets the log lines and never a status byte. Python standard library only.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time

ERASE = "\r\033[K"   # back to the start of the line, erase to its end


class Progress:
    def __init__(self, stream=None, quiet: bool = False):
        self.stream = stream if stream is not None else sys.stderr
        self.quiet = quiet
        isatty = getattr(self.stream, "isatty", None)
        self.live = not quiet and bool(isatty and isatty())
        self._text = ""
        self._start = time.time()

    def __call__(self, message: str):
        """A log line (kept on screen); the status line, if any, is drawn again below it."""
        if self.quiet:
            return
        if self._text:
            self.stream.write(ERASE)
        self.stream.write(message + "\n")
        self._draw()

    def status(self, text: str):
        """Replaces the status line (terminals only)."""
        if not self.live:
            return
        self._text = text
        self._draw()

    def clear(self):
        """Erases the status line (before the report is printed)."""
        if self.live and self._text:
            self.stream.write(ERASE)
            self.stream.flush()
        self._text = ""

    def _draw(self):
        if self.live and self._text:
            try:
                width = os.get_terminal_size(self.stream.fileno()).columns
            except (OSError, ValueError, AttributeError):
                width = 0
            width = width if width > 20 else 80  # a terminal that reports no size (a fresh pty)
            line = f"{self._text} [{time.time() - self._start:.0f} s]"
            if len(line) >= width:  # a wrapped line would not be redrawn in place
                line = line[:max(0, width - 4)] + "..."
            self.stream.write(ERASE + line)
        self.stream.flush()


def status(log, text: str):
    """Shows `text` on the status line of `log` when it is a Progress (other log callables: nothing)."""
    show = getattr(log, "status", None)
    if callable(show):
        show(text)


# The checker's progress line (`tangle check --progress`): "\r" TEXT ERASE-TO-END-OF-LINE, redrawn.
_CHECKER_LINE = re.compile(r"\r([^\r\n\x1b]*)\x1b\[K")


def run_checker(cmd, log) -> subprocess.CompletedProcess:
    """``subprocess.run(cmd, capture_output=True, text=True)`` for ``tangle check``; when `log` is a live
    Progress, ``--progress`` is added and the checker's progress line is shown as its status line
    while the check runs (and left out of the returned stderr)."""
    live = getattr(log, "live", False)
    if not live:
        return subprocess.run(cmd, capture_output=True, text=True)
    cmd = [*cmd, "--progress"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = []
    reader = threading.Thread(target=lambda: out.append(proc.stdout.read()), daemon=True)
    reader.start()
    err = b""
    while True:
        chunk = os.read(proc.stderr.fileno(), 4096)
        if not chunk:
            break
        err += chunk
        # The last line drawn, not the erase after it: a check that ends within one read (a busy
        # machine reads its whole stderr at once) still shows where it was.
        lines = [line for line in _CHECKER_LINE.findall(chunk.decode(errors="replace")) if line]
        if lines:
            log.status(lines[-1])
    reader.join()
    proc.stdout.close()
    proc.stderr.close()
    proc.wait()
    stderr = _CHECKER_LINE.sub("", err.decode(errors="replace")).replace("\r\x1b[K", "")
    return subprocess.CompletedProcess(cmd, proc.returncode, (out[0] if out else b"").decode(errors="replace"), stderr)
