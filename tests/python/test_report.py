"""`tangle check --html`: the page, rendered by headless Chromium.

Runs the CLI on the paper's examples: matmul_sub_rs refines, bug4_offdiag is a violation at S.mm.
"""
import os
import re
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))

from tangle.binary import find_binary  # noqa: E402

TANGLE = find_binary()
REFINES = os.path.join(ROOT, "examples", "paper", "matmul_sub_rs", "check.rel")
VIOLATION = os.path.join(ROOT, "examples", "paper", "bug4_offdiag", "check.rel")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _need_tangle():
    if TANGLE is None:
        pytest.skip("no tangle binary (make build, or set TANGLE_BIN)")


def _check_html(tmp_path, rel, name, env=None):
    _need_tangle()
    out = tmp_path / name
    proc = subprocess.run([str(TANGLE), "check", rel, "--html", str(out)], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    return proc, out.read_text()


def _dump_dom(path):
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (scripts/install-deps.sh installs Debian's chromium)")
    proc = subprocess.run([CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox", "--dump-dom", f"file://{path}"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "</html>" in proc.stdout, "Chromium did not load the page"
    return proc.stdout


def _self_contained(page):
    # no script, and nothing loaded from elsewhere (SVG namespace URIs are not loads)
    assert "<script" not in page
    assert not re.search(r'\s(src|href|xlink:href)="(https?:)?//', page)


def test_html_violation_draws_the_failing_operator(tmp_path):
    proc, page = _check_html(tmp_path, VIOLATION, "violation.html")
    assert proc.returncode == 1
    _self_contained(page)
    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot is not installed (scripts/install-deps.sh installs Debian's graphviz)")
    dom = _dump_dom(tmp_path / "violation.html")
    assert 'class="verdict violation"' in dom
    assert "S.mm" in dom and "<svg" in dom
    svg = dom[dom.index("<svg"):dom.index("</svg>")]
    # the failing operator, an implementation operator of each rank, and the relations of its inputs
    assert "S.mm" in svg and "D0.mm" in svg and "D1.mm" in svg
    assert "S.A =" in svg and "concat(D0.A, D1.A, dim=0)" in svg.replace("&#45;", "-")
    assert "cluster" in svg or "implementation rank 0" in svg
    # hovering the failing box shows where it is (the SVG <title> of its node)
    assert re.search(r"<title>S\.mm \(aten\.mm\.default\) at spec\.py:\d+", svg)


def test_html_refines_lists_the_output_relation(tmp_path):
    proc, page = _check_html(tmp_path, REFINES, "refines.html")
    assert proc.returncode == 0
    _self_contained(page)
    dom = _dump_dom(tmp_path / "refines.html")
    assert 'class="verdict refines"' in dom
    expected = re.findall(r"^  (S\.\S+) = (.+)$", proc.stdout.split("output relation:\n")[1], re.M)
    assert expected
    for tensor, expr in expected:
        assert tensor in dom and expr.replace("&", "&amp;") in dom


def test_html_without_dot_says_so(tmp_path):
    proc, page = _check_html(tmp_path, VIOLATION, "nodot.html", env={"TANGLE_DOT": str(tmp_path / "no-such-dot")})
    assert proc.returncode == 1
    assert "<svg" not in page
    assert "No drawing: Graphviz" in page and "not installed" in page
    assert "S.mm" in page  # the neighbourhood is still listed


def test_html_unwritable_is_bad_input(tmp_path):
    _need_tangle()
    proc = subprocess.run([str(TANGLE), "check", REFINES, "--html", str(tmp_path / "no" / "dir" / "r.html")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "cannot write the HTML report" in proc.stderr


def test_python_api_writes_the_page_and_types_the_result(tmp_path):
    _need_tangle()
    import tangle
    r = tangle.check(VIOLATION, tangle=str(TANGLE), html_out=str(tmp_path / "api.html"))
    assert r.verdict == "violation" and not r.refines and r.html == str(tmp_path / "api.html")
    assert (r.failure.operator, r.failure.op, r.failure.source_line, r.failure.code) == \
        ("S.mm", "aten.mm.default", 31, "C = A @ B")
    assert r.failure.input_relations == {"S.A": ["concat(D0.A, D1.A, dim=0)"], "S.B": ["concat(D0.B, D1.B, dim=1)"]}
    assert r.stats["operators_checked"] == 1
    assert "S.mm" in (tmp_path / "api.html").read_text()
