"""The pip package: `pip wheel .` packages the CLI with the Python package; installed into a fresh venv,
`tangle check`, `tangle verify` and `import tangle; tangle.check(...)` work from there, with nothing of
the source tree on the path.

A wheel built from the sources compiles the whole core (measured: ~17 min on this loaded 2-core machine,
17 s when build-wheel/ is kept from an earlier run), so by default the wheel packages the CLI under test
(TANGLE_BIN, via the CMake cache variable TANGLE_PREBUILT_CLI) and runs the rest of the package build
as is. TANGLE_TEST_WHEEL_FROM_SOURCE=1 compiles it instead, in build-wheel/ at the repository root
(ignored by git; kept, so a second run rebuilds nothing; ccache'd when ccache is installed).
"""
import importlib.util
import os
import shutil
import subprocess
import sys
import time

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
REL = os.path.join(ROOT, "examples", "paper", "matmul_sub_rs", "check.rel")
BUILD_DIR = os.path.join(ROOT, "build-wheel")
sys.path.insert(0, os.path.join(ROOT, "python"))

from tangle.binary import find_binary  # noqa: E402

TANGLE = find_binary()


def _clean_env(venv):
    """The venv's bin first on PATH; nothing that points at the source tree or its build."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TANGLE_BIN", "TANGLE_PYTHON")}
    env["PATH"] = os.path.join(venv, "bin") + os.pathsep + env.get("PATH", "")
    env["VIRTUAL_ENV"] = str(venv)
    return env


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    if importlib.util.find_spec("scikit_build_core") is None:
        pytest.skip("scikit-build-core is not installed (scripts/install-deps.sh installs scikit-build-core==1.1.2)")
    tmp = tmp_path_factory.mktemp("package")
    wheels = tmp / "wheels"
    cmd = [sys.executable, "-m", "pip", "wheel", ".", "--no-build-isolation", "--no-deps", "-q", "-w", str(wheels)]
    if os.environ.get("TANGLE_TEST_WHEEL_FROM_SOURCE"):
        cmd += ["-C", f"build-dir={BUILD_DIR}", "-C", "cmake.define.TANGLE_PREBUILT_CLI="]
        if shutil.which("ccache"):
            cmd += ["-C", "cmake.define.CMAKE_CXX_COMPILER_LAUNCHER=ccache"]
    else:
        if TANGLE is None:
            pytest.skip("no tangle binary to package (make build, or set TANGLE_BIN)")
        cmd += ["-C", f"build-dir={tmp / 'build'}", "-C", f"cmake.define.TANGLE_PREBUILT_CLI={TANGLE}"]
    t0 = time.time()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    print(f"wheel built in {time.time() - t0:.1f} s")
    wheel = next(wheels.glob("tangle-*.whl"))
    env_dir = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(env_dir)], check=True, timeout=300)
    proc = subprocess.run([str(env_dir / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                           str(wheel)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return env_dir


def test_tangle_command_from_the_package(venv, tmp_path):
    exe = shutil.which("tangle", path=_clean_env(venv)["PATH"])
    assert exe == str(venv / "bin" / "tangle")
    proc = subprocess.run(["tangle", "check", REL], capture_output=True, text=True, env=_clean_env(venv),
                          cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("verdict: refines\n")
    # `tangle verify` runs the installed package with the venv's python
    proc = subprocess.run(["tangle", "verify", "--help"], capture_output=True, text=True, env=_clean_env(venv),
                          cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "usage: tangle verify" in proc.stdout
    # ... and that python imports the installed package: a target module that names it in its import error
    (tmp_path / "where.py").write_text("import tangle\nraise RuntimeError('tangle from ' + tangle.__file__)\n")
    proc = subprocess.run(["tangle", "verify", "where:build"], capture_output=True, text=True, env=_clean_env(venv),
                          cwd=tmp_path, timeout=120)
    assert proc.returncode == 2
    if importlib.util.find_spec("torch") is not None:  # checked before the module is imported
        assert f"tangle from {venv}/lib/" in proc.stderr, proc.stderr


def test_python_api_from_the_package(venv, tmp_path):
    code = ("import tangle, tangle.binary as b; r = tangle.check(%r); "
            "assert r.verdict == 'refines', r.report; assert r.refines and r.failure is None; "
            "assert r.output_relation and r.stats['operators_checked'] > 0; "
            "print(tangle.__file__); print(b.find_binary(required=True))" % REL)
    proc = subprocess.run([str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True,
                          env=_clean_env(venv), cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    module, exe = proc.stdout.split()
    assert module.startswith(str(venv)) and "site-packages" in module  # the installed copy, not python/
    assert exe == str(venv / "bin" / "tangle")
