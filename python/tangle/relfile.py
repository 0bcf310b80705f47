"""Read the header of a tangle relation file (docs/relations.md).

The header is what scripts need to know before running ``tangle check``:

* ``# expect: refines|violation``: a comment line with the expected verdict
  (used by bench/artifact and the tests; tangle itself ignores it),
* ``spec PATH``: the spec graph,
* ``impl PATTERN [ranks N]``: the rank graphs; ``{rank}`` is replaced by
  0..N-1. Without ``{rank}`` every rank runs the same file (an SPMD program,
  e.g. ``impl graph.hlo ranks 2``); without ``ranks N`` the ranks are counted
  from the files that exist (as the CLI does),
* ``lemmas PATH``: lemma files (any number).

Paths are resolved against the relation file's folder unless absolute, and
normalized lexically (like the CLI: symlinks are not resolved). The other
statements are split (comments stripped, a statement continuing while a
``(`` or ``[`` is open) and kept as ``RelFile.statements``; their meaning is
left to tangle. A malformed header raises ``ValueError("FILE:LINE: ...")``.

    from tangle.relfile import read_relfile
    rel = read_relfile("examples/paper/matmul_sub_rs/check.rel")
    rel.spec, rel.ranks, rel.impl_paths(), rel.expected

Python standard library only.
"""
from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path

VERDICTS = ("refines", "violation")
# Statements whose argument is raw text, one line each (as src/relation/lexer.cpp).
RAW_KEYWORDS = ("spec", "impl", "option")
KEYWORDS = ("spec", "impl", "const", "input", "output", "expect", "group", "option", "zero")
EXPECT_COMMENT = re.compile(r"^\s*#\s*expect:(.*)$")
RANK = "{rank}"


@dataclasses.dataclass(frozen=True)
class Statement:
    line: int      # 1-based line where the statement starts
    keyword: str   # its first word ('spec', 'expect', 'S.x', ...)
    text: str      # without comments; continuation lines joined by '\n'


@dataclasses.dataclass
class RelFile:
    path: Path                      # the relation file, absolute
    text: str
    expected: str | None = None     # from '# expect: VERDICT'
    spec: Path | None = None
    impl_pattern: Path | None = None  # may contain '{rank}'
    ranks: int | None = None        # as written after 'impl ... ranks'
    lemmas: list[Path] = dataclasses.field(default_factory=list)
    statements: list[Statement] = dataclasses.field(default_factory=list)

    @property
    def spmd(self) -> bool:
        """One program for every rank (an impl pattern without {rank})."""
        return self.impl_pattern is not None and RANK not in str(self.impl_pattern)

    @property
    def rank_count(self) -> int:
        """N of `ranks N`; otherwise 1 for an SPMD program, else the number of
        consecutive rank files that exist (0, 1, 2, ...)."""
        self._need_impl()
        if self.ranks is not None:
            return self.ranks
        if self.spmd:
            return 1
        n = 0
        while n < 65536 and self.impl_path(n).exists():
            n += 1
        return n

    def impl_path(self, rank: int) -> Path:
        """The graph file of one rank ({rank} substituted)."""
        self._need_impl()
        return Path(str(self.impl_pattern).replace(RANK, str(rank)))

    def impl_paths(self) -> list[Path]:
        """One path per rank; an SPMD program repeats the same path."""
        return [self.impl_path(r) for r in range(self.rank_count)]

    def graph_files(self) -> list[Path]:
        """spec and the distinct impl files (what must exist to run a check)."""
        files = [self.spec] if self.spec else []
        if self.impl_pattern is not None:
            # With no `ranks N` and no rank file, rank 0's file is the one missing.
            for p in [self.impl_pattern] if self.spmd else (self.impl_paths() or [self.impl_path(0)]):
                if p not in files:
                    files.append(p)
        return files

    def with_paths(self, *, spec: str | os.PathLike | None = None,
                   impl: str | os.PathLike | None = None) -> str:
        """The file's text with absolute paths on its spec, impl and lemmas
        lines, so that it still works when written to another folder; `spec`
        and `impl` (a pattern or, for one program, a file) replace those paths.
        The rank count and every other line are kept."""
        new_lines = {}
        for st in self.statements:
            if st.keyword == "spec":
                new_lines[st.line] = f"spec {os.path.abspath(spec) if spec is not None else self.spec}"
            elif st.keyword == "impl":
                pattern = os.path.abspath(impl) if impl is not None else self.impl_pattern
                new_lines[st.line] = f"impl {pattern}" + (f" ranks {self.ranks}" if self.ranks is not None else "")
            elif st.keyword == "lemmas" and "\n" not in st.text:
                new_lines[st.line] = f"lemmas {_resolve(self.path, st.text[len('lemmas'):].strip())}"
        for key, value in (("spec", spec), ("impl", impl)):
            if value is not None and not any(st.keyword == key for st in self.statements):
                raise ValueError(f"{self.path}: has no `{key}` line to replace")
        lines = self.text.splitlines()
        return "\n".join(new_lines.get(i + 1, line) for i, line in enumerate(lines)) + "\n"

    def _need_impl(self):
        if self.impl_pattern is None:
            raise ValueError(f"{self.path}: no `impl` line")


def _resolve(rel_path: Path, p: str) -> Path:
    return Path(os.path.normpath(os.path.join(rel_path.parent, p)))


def split_statements(text: str, path: str | os.PathLike = "<relation>") -> list[Statement]:
    """The statements of a relation file, as the CLI splits them: `#` starts a
    comment; spec/impl/option take one line; any other statement continues
    while a `(` or `[` is open. Unbalanced brackets raise ValueError."""
    out: list[Statement] = []
    open_: list[tuple[str, int]] = []
    cur: list[str] = []
    start = 0
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not cur:
            if not line:
                continue
            word = line.split()[0]
            if word in RAW_KEYWORDS:
                out.append(Statement(lineno, word, line))
                continue
            cur, start = [line], lineno
        else:
            if not line:
                continue
            if _starts_statement(line):
                ch, at = open_[-1]
                raise ValueError(f"{path}:{at}: unclosed '{ch}' (line {lineno} starts a new statement)")
            cur.append(line)
        for c in line:
            if c in "([":
                open_.append((c, lineno))
            elif c in ")]":
                if not open_:
                    raise ValueError(f"{path}:{lineno}: unmatched '{c}'")
                ch, at = open_.pop()
                if c != {"(": ")", "[": "]"}[ch]:
                    raise ValueError(f"{path}:{lineno}: '{c}' closes the '{ch}' opened on line {at}")
        if not open_:
            joined = "\n".join(cur)
            out.append(Statement(start, re.split(r"[\s=(]", joined, 1)[0], joined))
            cur = []
    if open_:
        ch, at = open_[-1]
        raise ValueError(f"{path}:{at}: unclosed '{ch}' (never closed before end of file)")
    return out


def _starts_statement(line: str) -> bool:
    """A continuation line that can only begin a new statement: a keyword with
    an argument, or `X.name =`."""
    words = line.split(None, 1)
    if words[0] in KEYWORDS and len(words) > 1:
        return True
    m = re.match(r"^([^\s()\[\],=]+)\s*=", line)
    return bool(m and "." in m.group(1))


def parse_relfile(text: str, path: str | os.PathLike) -> RelFile:
    """Parse relation-file text; `path` names the file (relative paths in it
    are resolved against its folder) and is used in error messages."""
    rel = RelFile(path=Path(os.path.abspath(path)), text=text)
    where = lambda line: f"{path}:{line}"
    expect_line = spec_line = impl_line = None
    for lineno, raw in enumerate(text.splitlines(), 1):
        m = EXPECT_COMMENT.match(raw)
        if not m:
            continue
        value = m.group(1).strip()
        if value not in VERDICTS:
            raise ValueError(f"{where(lineno)}: `# expect:` needs one of {', '.join(VERDICTS)}, got '{value}'")
        if expect_line is not None:
            raise ValueError(f"{where(lineno)}: `# expect:` given twice (first on line {expect_line})")
        rel.expected, expect_line = value, lineno
    rel.statements = split_statements(text, path)
    for st in rel.statements:
        rest = st.text[len(st.keyword):].strip()
        if st.keyword == "spec":
            if not rest:
                raise ValueError(f"{where(st.line)}: spec needs a path")
            if spec_line is not None:
                raise ValueError(f"{where(st.line)}: spec given twice (first on line {spec_line})")
            rel.spec, spec_line = _resolve(rel.path, rest), st.line
        elif st.keyword == "impl":
            if impl_line is not None:
                raise ValueError(f"{where(st.line)}: impl given twice (first on line {impl_line})")
            words = rest.split()
            if len(words) >= 2 and words[-2] == "ranks":
                if not re.fullmatch(r"\d+", words[-1]) or not 1 <= int(words[-1]) <= 1_000_000:
                    raise ValueError(f"{where(st.line)}: impl ranks must be a positive integer, got '{words[-1]}'")
                rel.ranks = int(words[-1])
                rest = rest[:rest.rindex(words[-2])].strip()
            elif words and words[-1] == "ranks":
                raise ValueError(f"{where(st.line)}: impl ... ranks needs a rank count")
            if not rest:
                raise ValueError(f"{where(st.line)}: impl needs a path pattern such as fw.g0.r{{rank}}.py")
            rel.impl_pattern, impl_line = _resolve(rel.path, rest), st.line
        elif st.keyword == "lemmas":
            if not rest:
                raise ValueError(f"{where(st.line)}: lemmas needs the path of a lemma file")
            rel.lemmas.append(_resolve(rel.path, rest))
    return rel


def read_relfile(path: str | os.PathLike) -> RelFile:
    """Read and parse a relation file (see parse_relfile)."""
    with open(path) as f:
        return parse_relfile(f.read(), path)
