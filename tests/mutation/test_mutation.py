"""Fast mutation subset: one-ish mutant per kind of gpt/paral2_layer1 (rank 1);
tangle must not say "refines" for any of them. The full run is
`python3 tests/mutation/mutate.py` (see its docstring)."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import mutate  # noqa: E402  (puts <repo>/python on sys.path)
from tangle.binary import find_binary, locate_binary  # noqa: E402

REL = mutate.REPO / "examples/artifact/gpt/paral2_layer1.rel"
TANGLE = find_binary()
SKIP_NO_BINARY = f"tangle binary not found at {locate_binary()[0]} (build it, or set TANGLE_BIN)"


def _rel_or_skip():
    if TANGLE is None:
        pytest.skip(SKIP_NO_BINARY)
    if not REL.is_file():
        pytest.skip(f"relation file {REL} is missing")
    rel = mutate.read_rel(REL)
    missing = [p for p in [rel.spec] + [rel.impl(r) for r in range(rel.ranks)] if not p.is_file()]
    if missing:
        pytest.skip(f"artifact data folder absent: {missing[0]} not found")
    return rel


def _select(mutants):
    """First mutant of every kind, plus each drop-collective variant and a
    second scalar edit (dropout p): 11 mutants."""
    picked, kinds = [], set()
    for m in mutants:
        if m.kind not in kinds:
            picked.append(m)
            kinds.add(m.kind)
    for needle in ("drop all_reduce", "own chunk", "own shard", "native_dropout arg"):
        m = next((m for m in mutants if needle in m.edit), None)
        if m is not None and m not in picked:
            picked.append(m)
    return picked


MUTANT_IDS = list(range(11))


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    rel = _rel_or_skip()
    mutants = _select(mutate.Generator(rel, 1).generate())
    return rel, mutants, tmp_path_factory.mktemp("mutation")


def test_subset_covers_every_kind(setup):
    _, mutants, _ = setup
    assert {m.kind for m in mutants} == set(mutate.KINDS)
    assert len(mutants) == len(MUTANT_IDS)
    assert all(m.diff for m in mutants), "every mutant must differ from the original dump"


def test_unmutated_copy_refines(setup):
    # Guards the harness: if the copied files or the rewritten .rel were broken,
    # every mutant would "fail" and the test below would prove nothing.
    rel, _, tmp = setup
    out = mutate.run_tangle(TANGLE, rel, {}, tmp / "baseline")
    assert out.status == "refines", out.message


@pytest.mark.parametrize("i", MUTANT_IDS)
def test_mutant_does_not_refine(setup, i):
    rel, mutants, tmp = setup
    m = mutants[i]
    out = mutate.run_tangle(TANGLE, rel, m.files, tmp / f"m{i}")
    assert out.status != "refines", f"semantics-changing mutant judged refines: {m.ident}\n{m.diff}"
    assert out.status in ("violation", "bad input", "inconclusive"), f"{m.ident}: {out.status}: {out.message}"


@pytest.mark.parametrize("name", ["sp", "split_even"])
def test_symbolic_example_mutants_do_not_refine(tmp_path, name):
    """Dynamic-shape examples (no data folder needed): every mutant, including
    a moved symbolic slice window, is detected and the original refines."""
    if TANGLE is None:
        pytest.skip(SKIP_NO_BINARY)
    rel = mutate.read_rel(mutate.REPO / f"examples/symbolic/{name}.rel")
    assert mutate.run_tangle(TANGLE, rel, {}, tmp_path / "baseline").status == "refines"
    mutants = mutate.Generator(rel, 1).generate()
    assert mutants, "the generator found nothing to mutate"
    for i, m in enumerate(mutants):
        out = mutate.run_tangle(TANGLE, rel, m.files, tmp_path / f"m{i}")
        assert out.status != "refines", f"semantics-changing mutant judged refines: {m.ident}\n{m.diff}"


def test_hlo_mutants_do_not_refine():
    """Llama-3 HLO (tp2_layer1): two mutants per kind, none may refine."""
    import mutate_hlo

    if TANGLE is None:
        pytest.skip(SKIP_NO_BINARY)
    rel = mutate_hlo.Rel(mutate_hlo.DEFAULT_REL)
    if not rel.impl.is_file() or not rel.spec.is_file():
        pytest.skip(f"artifact data folder absent: {rel.impl} not found")
    assert mutate_hlo.main([str(mutate_hlo.DEFAULT_REL), "--tangle", str(TANGLE), "--limit", "2"]) == 0


def test_hlo_replay_localizes_a_dropped_all_reduce(tmp_path):
    """mutate_hlo --replay's scoring on one mutant (Llama-3 HLO tp2_layer1,
    replayed at reduced sizes): the attention all-reduce replaced by a copy
    of the partial sum is named at its first consumer, the residual add."""
    import mutate_hlo

    if TANGLE is None:
        pytest.skip(SKIP_NO_BINARY)
    rel = mutate_hlo.Rel(mutate_hlo.DEFAULT_REL)
    if not rel.impl.is_file() or not rel.spec.is_file():
        pytest.skip(f"artifact data folder absent: {rel.impl} not found")
    lines = rel.impl.read_text().splitlines()
    kind, what, i, new = next(m for m in mutate_hlo.mutants(lines, rel) if m[0] == "collective")
    mutated = lines[:i] + [new] + lines[i + 1:]
    out, loc = mutate_hlo.check(TANGLE, rel, "\n".join(mutated) + "\n", tmp_path, replay=True)
    assert out == "violation", out
    targets = mutate_hlo.first_consumers(mutated, what.split(":")[0])
    assert mutate_hlo.value_localized(loc, targets, any_suspect=False), (targets, loc)
    assert loc["first"]["op"] == "hlo.add", loc["first"]
