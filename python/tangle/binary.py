"""Where the tangle command-line binary is.

Lookup order (the first that is set wins; it is not a search path):

1. an explicit path (a script's ``--tangle PATH`` flag),
2. the ``TANGLE_BIN`` environment variable (``make test`` sets it),
3. in a source checkout, ``<repo>/build/bin/tangle``, what ``make build`` produces; in an installed
   package (``pip install .``), the ``tangle`` CLI installed with it in the environment's scripts folder.

``find_binary`` returns ``None`` when the chosen path is not an executable
file; callers decide whether to skip, build or fail.
``find_binary(..., required=True)`` raises ``FileNotFoundError`` instead, with
a message naming the path and where it came from. Python standard library only.
"""
from __future__ import annotations

import os
import sysconfig
from pathlib import Path
from typing import Mapping

ENV_VAR = "TANGLE_BIN"
REPO = Path(__file__).resolve().parents[2]
# Imported from python/tangle of a checkout, or from an installed package (site-packages/tangle).
SOURCE_CHECKOUT = (REPO / "python" / "tangle" / "binary.py").is_file() and (REPO / "CMakeLists.txt").is_file()
DEFAULT_BINARY = (REPO / "build" / "bin" / "tangle" if SOURCE_CHECKOUT
                  else Path(sysconfig.get_path("scripts")) / "tangle")


def locate_binary(explicit: str | os.PathLike | None = None,
                  env: Mapping[str, str] | None = None) -> tuple[Path, str]:
    """The binary path the lookup order picks, and its origin: ``"explicit"``,
    ``"TANGLE_BIN"`` or ``"default"``. The path need not exist. An empty
    explicit value or environment variable counts as unset."""
    env = os.environ if env is None else env
    if explicit is not None and str(explicit) != "":
        return Path(explicit), "explicit"
    if env.get(ENV_VAR):
        return Path(env[ENV_VAR]), ENV_VAR
    return DEFAULT_BINARY, "default"


def find_binary(explicit: str | os.PathLike | None = None, *, required: bool = False,
                env: Mapping[str, str] | None = None) -> Path | None:
    """The tangle binary (see the module docstring), or ``None`` when the path
    picked is not an executable file (``FileNotFoundError`` if ``required``)."""
    path, origin = locate_binary(explicit, env)
    if path.is_file() and os.access(path, os.X_OK):
        return path
    if required:
        default = (f"the default; build it with `make -C {REPO} build` or set {ENV_VAR}" if SOURCE_CHECKOUT
                   else f"installed with the tangle package; reinstall it or set {ENV_VAR}")
        how = {"explicit": "given explicitly", ENV_VAR: f"from ${ENV_VAR}", "default": default}[origin]
        state = "not executable" if path.is_file() else "missing"
        raise FileNotFoundError(f"no tangle binary at {path} ({state}; {how})")
    return None
