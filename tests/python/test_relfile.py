"""tangle.relfile (relation-file headers) and tangle.binary (finding the CLI)."""
import os
import re
import stat
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

from tangle import binary  # noqa: E402
from tangle.relfile import parse_relfile, read_relfile  # noqa: E402

EXAMPLES = sorted((ROOT / "examples").rglob("*.rel"))


def test_examples_are_found():
    assert len(EXAMPLES) >= 30
    assert ROOT / "examples/paper/matmul_sub_rs/check.rel" in EXAMPLES


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: str(p.relative_to(ROOT / "examples")))
def test_every_example_header_parses(path):
    rel = read_relfile(path)
    text = path.read_text()
    # The expected verdict is exactly what the comment says, when there is one.
    m = re.search(r"^#\s*expect:\s*(\w+)\s*$", text, re.M)
    assert rel.expected == (m.group(1) if m else None)
    if rel.spec is None:  # spec and impl given on the command line (inputs.rel)
        assert not re.search(r"^\s*spec\s", text, re.M)
        return
    assert rel.spec.is_absolute() and rel.impl_pattern.is_absolute()
    # Relative paths are taken from the .rel file's folder.
    words = re.search(r"^spec\s+(\S+)", text, re.M).group(1)
    assert rel.spec == Path(os.path.normpath(path.parent / words))
    n = int(re.search(r"^impl\s.*\sranks\s+(\d+)", text, re.M).group(1))
    assert rel.ranks == n == rel.rank_count
    paths = rel.impl_paths()
    assert len(paths) == n
    if "{rank}" in str(rel.impl_pattern):
        assert [p.name for p in paths] == [rel.impl_pattern.name.replace("{rank}", str(r)) for r in range(n)]
        assert len(set(paths)) == n
    else:
        assert set(paths) == {rel.impl_pattern}
    assert rel.statements and all(st.line >= 1 for st in rel.statements)


def test_matmul_sub_rs():
    rel = read_relfile(ROOT / "examples/paper/matmul_sub_rs/check.rel")
    folder = ROOT / "examples/paper/matmul_sub_rs"
    assert rel.spec == folder / "spec.py"
    assert rel.ranks == 2 and not rel.spmd
    assert rel.impl_paths() == [folder / "impl.r0.py", folder / "impl.r1.py"]
    assert all(p.is_file() for p in rel.graph_files())
    assert rel.expected is None  # "# Expected verdict: ..." is prose, not an `# expect:` line
    assert rel.lemmas == []
    assert [st.keyword for st in rel.statements][:2] == ["spec", "impl"]


def test_artifact_expectations():
    gpt = read_relfile(ROOT / "examples/artifact/gpt/paral4_layer2.rel")
    assert gpt.expected == "refines" and gpt.ranks == 4
    assert gpt.spec == ROOT.parent / "shared/data/entangle-artifact/gpt/paral1_layer2/fw.g0.r0.py"
    assert gpt.impl_path(3) == ROOT.parent / "shared/data/entangle-artifact/gpt/paral4_layer2/fw.g0.r3.py"
    bug = read_relfile(ROOT / "examples/artifact/bug_missing_layernorm_allreduce/tp2.bug.rel")
    assert bug.expected == "violation"


def test_hlo_one_program_for_all_ranks():
    rel = read_relfile(ROOT / "examples/hlo/tp_mlp/check.rel")
    impl = ROOT / "examples/hlo/tp_mlp/impl.hlo"
    assert rel.spmd and rel.ranks == 2
    assert rel.impl_paths() == [impl, impl]
    assert rel.graph_files() == [ROOT / "examples/hlo/tp_mlp/spec.hlo", impl]


def test_lemmas_statement():
    rel = read_relfile(ROOT / "tests/data/lemmas/check_with_lemmas.rel")
    assert rel.lemmas == [ROOT / "tests/data/lemmas/leaky.lemmas"]
    assert rel.lemmas[0].is_file()


def test_comments_blank_lines_and_continuations(tmp_path):
    text = (
        "# a comment\n"
        "\n"
        "   # expect: violation\n"
        "spec  sub/spec.py   # trailing comment\n"
        "impl /abs/r{rank}.py ranks 3\n"
        "lemmas ../x.lemmas\n"
        "lemmas /y.lemmas\n"
        "S.a = concat(\n"
        "   # inside an expression\n"
        "   D0.a,\n"
        "\n"
        "   D1.a, dim=0)\n"
        "expect S.b = D*.b\n"
    )
    rel = parse_relfile(text, tmp_path / "d" / "m.rel")
    assert rel.expected == "violation"
    assert rel.spec == tmp_path / "d/sub/spec.py"
    assert rel.impl_pattern == Path("/abs/r{rank}.py") and rel.ranks == 3
    assert rel.impl_paths() == [Path(f"/abs/r{r}.py") for r in range(3)]
    assert rel.lemmas == [tmp_path / "x.lemmas", Path("/y.lemmas")]
    assert [(st.line, st.keyword) for st in rel.statements] == [
        (4, "spec"), (5, "impl"), (6, "lemmas"), (7, "lemmas"), (8, "S.a"), (13, "expect")]
    assert rel.statements[4].text == "S.a = concat(\nD0.a,\nD1.a, dim=0)"


def test_ranks_counted_from_files_when_not_given(tmp_path):
    for r in range(3):
        (tmp_path / f"g.r{r}.py").write_text("")
    (tmp_path / "g.r4.py").write_text("")  # not consecutive: not counted
    rel = parse_relfile("spec s.py\nimpl g.r{rank}.py\n", tmp_path / "m.rel")
    assert rel.ranks is None and rel.rank_count == 3
    spmd = parse_relfile("impl one.hlo\n", tmp_path / "m.rel")
    assert spmd.spmd and spmd.rank_count == 1 and spmd.spec is None


def test_with_paths_makes_the_file_portable(tmp_path):
    src = ROOT / "tests/data/lemmas/check_with_lemmas.rel"
    rel = read_relfile(src)
    moved = tmp_path / "elsewhere" / "check.rel"
    moved.parent.mkdir()
    moved.write_text(rel.with_paths(impl=tmp_path / "impl.r{rank}.py"))
    again = read_relfile(moved)
    assert again.spec == rel.spec
    assert again.impl_pattern == tmp_path / "impl.r{rank}.py" and again.ranks == 2
    assert again.lemmas == rel.lemmas
    assert [st.text for st in again.statements][3:] == [st.text for st in rel.statements][3:]


@pytest.mark.parametrize("text, line, message", [
    ("spec a.py\nspec b.py\n", 2, "spec given twice (first on line 1)"),
    ("spec a.py\n\nimpl r{rank}.py ranks two\n", 3, "impl ranks must be a positive integer, got 'two'"),
    ("impl r{rank}.py ranks 0\n", 1, "impl ranks must be a positive integer"),
    ("# x\nimpl r{rank}.py ranks\n", 2, "ranks needs a rank count"),
    ("impl a{rank}.py\nimpl b{rank}.py\n", 2, "impl given twice (first on line 1)"),
    ("spec\n", 1, "spec needs a path"),
    ("impl ranks 2\n", 1, "impl needs a path pattern"),
    ("lemmas   # none\n", 1, "lemmas needs the path"),
    ("# expect: refines\n# expect: refines\n", 2, "`# expect:` given twice (first on line 1)"),
    ("spec a.py\n#expect: maybe\n", 2, "got 'maybe'"),
    ("S.a = concat(D0.a,\n  D1.a\nexpect S.b = D0.b\n", 1, "unclosed '(' (line 3 starts a new statement)"),
    ("S.a = D0.a)\n", 1, "unmatched ')'"),
    ("spec a.py\nS.a = concat(D0.a, D1.a]\n", 2, "']' closes the '(' opened on line 2"),
    ("spec a.py\n\nS.a = shard(D*.a,\n", 3, "unclosed '(' (never closed before end of file)"),
])
def test_malformed_header_names_file_and_line(tmp_path, text, line, message):
    path = tmp_path / "bad.rel"
    path.write_text(text)
    with pytest.raises(ValueError) as e:
        read_relfile(path)
    assert str(e.value).startswith(f"{path}:{line}: "), str(e.value)
    assert message in str(e.value)


def test_missing_impl_is_an_error_only_when_asked(tmp_path):
    rel = parse_relfile("spec s.py\n", tmp_path / "m.rel")
    assert rel.impl_pattern is None and rel.graph_files() == [tmp_path / "s.py"]
    with pytest.raises(ValueError, match="no `impl` line"):
        rel.impl_paths()


# ---------------------------------------------------------------- binary


def _executable(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_binary_lookup_order(tmp_path, monkeypatch):
    explicit = _executable(tmp_path / "explicit" / "tangle")
    from_env = _executable(tmp_path / "env" / "tangle")
    monkeypatch.setenv("TANGLE_BIN", str(from_env))
    assert binary.find_binary(explicit) == explicit
    assert binary.find_binary(str(explicit)) == explicit
    assert binary.find_binary() == from_env
    assert binary.locate_binary() == (from_env, "TANGLE_BIN")
    monkeypatch.setenv("TANGLE_BIN", "")  # empty counts as unset
    assert binary.locate_binary() == (ROOT / "build/bin/tangle", "default")
    monkeypatch.delenv("TANGLE_BIN")
    assert binary.locate_binary() == (ROOT / "build/bin/tangle", "default")
    # The old bench variable is not consulted any more.
    monkeypatch.setenv("TANGLE", str(explicit))
    assert binary.locate_binary()[1] == "default"


def test_binary_missing_gives_none_or_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("TANGLE_BIN", str(tmp_path / "nope"))
    assert binary.find_binary() is None
    with pytest.raises(FileNotFoundError, match=r"no tangle binary at .*nope \(missing; from \$TANGLE_BIN\)"):
        binary.find_binary(required=True)
    # A missing explicit path is not replaced by the environment variable.
    _executable(tmp_path / "nope")
    assert binary.find_binary(tmp_path / "absent") is None
    assert binary.find_binary() == tmp_path / "nope"
    plain = tmp_path / "plain"
    plain.write_text("")
    with pytest.raises(FileNotFoundError, match="not executable; given explicitly"):
        binary.find_binary(plain, required=True)


def test_env_mapping_can_be_passed(tmp_path):
    fake = _executable(tmp_path / "t")
    assert binary.find_binary(env={"TANGLE_BIN": str(fake)}) == fake
    assert binary.locate_binary(env={})[0] == binary.DEFAULT_BINARY
