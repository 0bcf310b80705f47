"""`tangle check --json` reports against docs/report-schema.json (docs/report.md).

Real reports of each kind (refines, violation, inconclusive, expectations that hold, are refused or
are not reached, symbolic sizes, --replay with a match and with a counterexample) must validate;
every object in the schema is closed, so a field added to the report without the schema fails here;
and every field of the schema must occur in some real report, so the schema describes no field the
report does not have.
"""
import copy
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))

from tangle.binary import find_binary  # noqa: E402

jsonschema = pytest.importorskip(
    "jsonschema", reason="jsonschema is not installed (scripts/install-deps.sh installs jsonschema==4.26.0)")

with open(os.path.join(ROOT, "docs", "report-schema.json")) as f:
    SCHEMA = json.load(f)

# name -> (relation file, extra arguments, expected exit code)
CASES = {
    "refines": ("examples/paper/matmul_sub_rs/check.rel", [], 0),
    "violation": ("examples/paper/bug4_offdiag/check.rel", [], 1),
    "inconclusive": ("tests/data/limits/tiny_budget.rel", [], 3),
    "expectations_hold": ("examples/gradacc/two_microbatches/check.rel", [], 0),
    "expectations_refused": ("examples/expect/partial_grad/check.rel", [], 1),
    "expectations_stopped": ("examples/gradacc/missing_scale/check.rel", [], 1),
    "symbolic": ("examples/symbolic/split_even.rel", [], 0),
    "replay_matched": ("examples/paper/matmul_sub_rs/check.rel", ["--replay"], 0),
    "replay_counterexample": ("examples/mlp/missing_allreduce/check.rel", ["--replay"], 1),
    "by_evaluation": ("examples/closed/causal_mask/check.rel", [], 0),
    "precision_note": ("examples/precision/cast_before_reduce/check.rel", [], 0),
}
# Written only by `tangle verify` (python/tangle/verify.py), never by `tangle check`.
VERIFY_ONLY = {"parameters_involved", "verify"}


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    try:
        tangle = find_binary()
    except FileNotFoundError as e:
        pytest.skip(f"no tangle binary: {e}")
    d = tmp_path_factory.mktemp("reports")
    out = {}
    for name, (rel, extra, code) in CASES.items():
        path = d / f"{name}.json"
        r = subprocess.run([str(tangle), "check", os.path.join(ROOT, rel), "--json", str(path), *extra],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == code, f"{name}: exit {r.returncode}\n{r.stdout}{r.stderr}"
        with open(path) as f:
            out[name] = json.load(f)
    bad = d / "bad.json"
    r = subprocess.run([str(tangle), "check", os.path.join(ROOT, "tests/data/bad/missing_tensor.rel"),
                        "--json", str(bad)], capture_output=True, text=True, timeout=300)
    out["_bad_input"] = (r, bad)
    return out


def _validator():
    return jsonschema.Draft202012Validator(SCHEMA)


def test_schema_is_a_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize("name", sorted(CASES))
def test_real_report_validates(reports, name):
    errors = sorted(_validator().iter_errors(reports[name]), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors)


def test_reports_carry_the_schema_version(reports):
    assert SCHEMA["properties"]["schema_version"]["const"] == 5
    for name in CASES:
        assert reports[name]["schema_version"] == SCHEMA["properties"]["schema_version"]["const"], name


def test_the_cases_cover_the_verdicts_and_sections(reports):
    assert {reports[n]["verdict"] for n in CASES} == {"refines", "violation", "inconclusive"}
    assert reports["inconclusive"]["failure"]["limit_reached"] is True
    assert reports["replay_counterexample"]["replay"]["counterexamples"]
    assert reports["expectations_stopped"]["expectations_not_established"]
    assert {e["holds"] for n in CASES for e in reports[n]["expectations"]} == {True, False}
    assert reports["symbolic"]["symbol_facts"]


def test_bad_input_writes_no_report(reports):
    r, path = reports["_bad_input"]
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not path.exists()


def _objects(value, path=()):
    """Every JSON object in value, with its path."""
    if isinstance(value, dict):
        yield path, value
        for k, v in value.items():
            yield from _objects(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _objects(v, path + (i,))


def test_a_field_missing_from_the_schema_fails(reports):
    """Adding a field anywhere in a report (except the free-form lemma-name map) must fail validation."""
    checked = 0
    for name in CASES:
        for path, obj in list(_objects(reports[name])):
            if path[-1:] == ("firings",):
                continue  # lemma name -> count: keys are data, not fields
            doc = copy.deepcopy(reports[name])
            target = doc
            for k in path:
                target = target[k]
            target["a_new_field"] = 1
            assert not _validator().is_valid(doc), f"{name}: a new field at {list(path)} was accepted"
            checked += 1
    assert checked > 50


def _schema_fields(schema, prefix=(), refs=None):
    """Paths of every property the schema defines ("*" for array items). A shared definition
    ($ref) is listed once, in refs: name -> the paths that use it."""
    if "$ref" in schema:
        if refs is not None:
            refs.setdefault(schema["$ref"].split("/")[-1], []).append(prefix)
        return
    for alt in schema.get("oneOf", []):
        yield from _schema_fields(alt, prefix, refs)
    for k, sub in schema.get("properties", {}).items():
        yield prefix + (k,)
        yield from _schema_fields(sub, prefix + (k,), refs)
    if isinstance(schema.get("items"), dict):
        yield from _schema_fields(schema["items"], prefix + ("*",), refs)


def _report_fields(value, prefix=()):
    if isinstance(value, dict):
        for k, v in value.items():
            yield prefix + (k,)
            yield from _report_fields(v, prefix + (k,))
    elif isinstance(value, list):
        for v in value:
            yield from _report_fields(v, prefix + ("*",))


def test_every_schema_field_occurs_in_a_real_report(reports):
    seen = set()
    for name in CASES:
        seen |= set(_report_fields(reports[name]))
    refs = {}
    missing = [".".join(p) for p in _schema_fields(SCHEMA, refs=refs) if p[0] not in VERIFY_ONLY and p not in seen]
    for name, sites in refs.items():  # a definition is covered where any of its uses is
        fields = list(_schema_fields(SCHEMA["$defs"][name]))
        if not any(all(site + f in seen for f in fields) for site in sites):
            missing.append(f"$defs/{name} (used at {['.'.join(s) for s in sites]})")
    assert not missing, f"fields in docs/report-schema.json that no report has: {missing}"
