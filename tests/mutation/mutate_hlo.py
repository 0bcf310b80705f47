#!/usr/bin/env python3
"""Mutation testing on HLO workloads: a semantics-changing edit of the SPMD
implementation program must never be reported as "refines".

For a relation file of examples/artifact/aws_llama (default: tp2_layer1), the
script reads the implementation's HLO module, makes one-instruction edits of
the live part of the ENTRY computation, checks each mutant with
`tangle check` and prints a table. Live: instructions the checked output
(the tensor of the `output` line, on the implementation side: the rhs of
the `expect` line) depends on, not counting what lies behind a tensor the
relation file names (those are inputs or cut points: editing behind them
changes nothing the check reads, so such edits are not generated).

Mutation kinds:
  collective  all-reduce(x) -> copy(x) (the un-reduced partial value)
  binop       add <-> subtract, multiply <-> divide (operands kept)
  swap        operands of subtract/divide exchanged
  slice       a narrowed dim's window moved by its own length when in range
              (else by 1)
  compare     direction LE<->LT, GE<->GT, EQ<->NE
  constant    a scalar constant c -> 2c + 1
  dims        reduce over another dim; concatenate along another dim
              (shapes may then mismatch: rejected as bad input is fine)

Outcomes: exit 0 "refines" (a soundness bug), 1 "violation", 2 "bad input",
3 "inconclusive", or "timeout"; everything but refines counts as detected.
The unmutated copy must refine first. Exit status 0 iff no mutant refines.

Value-guided localization (--replay): each mutant is checked with
`--replay --json`; after a violation the report names the first
implementation operator that computes a wrong value (replay.localization).
The one HLO program runs on every rank, so the edit is on every rank: a
violation counts as localized when the operator named (first, or with "any"
also the further suspects) is, on any rank, the edited instruction or a first
consumer of it, looking through instructions that compute nothing (copy,
reshape, bitcast, transpose, broadcast), as tangle does not blame a view.
Python 3 standard library only.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))

from tangle.binary import find_binary  # noqa: E402
from tangle.relfile import read_relfile  # noqa: E402

DEFAULT_REL = REPO / "examples/artifact/aws_llama/tp2_layer1.rel"
STATUS = {0: "refines", 1: "violation", 2: "bad input", 3: "inconclusive"}
INSTR = re.compile(r"^\s*(ROOT\s+)?%(?P<name>[\w.\-]+) = (?P<shape>\S+) (?P<op>[\w\-]+)\((?P<args>[^)]*)\)(?P<attrs>.*)$")


class Rel:
    """The relation file of an SPMD program: its header and the tensors it names."""

    def __init__(self, path: Path):
        header = read_relfile(path)
        if header.spec is None or header.impl_pattern is None:
            raise ValueError(f"{path}: needs `spec` and `impl` lines")
        self.header = header
        self.path = header.path
        self.spec = header.spec
        self.impl = header.impl_path(0)  # one program for every rank (no {rank})
        self.ranks = header.rank_count
        texts = [st.text for st in header.statements]
        self.named = {n for t in texts for n in re.findall(r"\bD(?:\*|\d+)\.([\w.\-]+)", t)}
        expect = next((st.text for st in header.statements if st.keyword == "expect"), None)
        self.targets = set(re.findall(r"\bD(?:\*|\d+)\.([\w.\-]+)", expect.split("=", 1)[1])) if expect else set()

    def with_impl(self, impl: Path) -> str:
        return self.header.with_paths(impl=impl)


def entry_instructions(lines: list[str]) -> dict[str, tuple[int, re.Match]]:
    """name -> (line index, match) for the ENTRY computation's instructions."""
    out, inside = {}, False
    for i, line in enumerate(lines):
        if line.startswith("ENTRY "):
            inside = True
            continue
        if inside and line.startswith("}"):
            break
        if inside:
            m = INSTR.match(line.split(", metadata=")[0])
            if m:
                out[m.group("name")] = (i, m)
    return out


def operands(m: re.Match) -> list[str]:
    return re.findall(r"%([\w.\-]+)", m.group("args"))


def live(instrs, rel: Rel) -> set[str]:
    seen, stack = set(), list(rel.targets)
    while stack:
        n = stack.pop()
        if n in seen or n not in instrs:
            continue
        seen.add(n)
        if n in rel.named and n not in rel.targets:
            continue  # an input or cut point: what lies behind it is not read
        stack.extend(operands(instrs[n][1]))
    return seen


def mutants(lines: list[str], rel: Rel):
    """(kind, description, line index, new line)."""
    instrs = entry_instructions(lines)
    for name in sorted(live(instrs, rel), key=lambda n: instrs[n][0]):
        i, m = instrs[name]
        line, op, args = lines[i], m.group("op"), operands(m)

        def edit(kind, what, new):
            if new != line:
                yield kind, f"{name}: {what}", i, new

        if op == "all-reduce":
            dropped = re.sub(r"all-reduce\((%[\w.\-]+)\)(, replica_groups=\{[^ ]*?\}+)?(, to_apply=%[\w.\-]+)?",
                             r"copy(\1)", line, count=1)
            yield from edit("collective", "all-reduce dropped", dropped)
        swaps = {"add": "subtract", "subtract": "add", "multiply": "divide", "divide": "multiply"}
        if op in swaps:
            yield from edit("binop", f"{op} -> {swaps[op]}", line.replace(f" {op}(", f" {swaps[op]}(", 1))
        if op in ("subtract", "divide") and len(args) == 2 and args[0] != args[1]:
            yield from edit("swap", "operands exchanged",
                            line.replace(f"(%{args[0]}, %{args[1]})", f"(%{args[1]}, %{args[0]})", 1))
        if op == "slice":
            dims = re.findall(r"\[(\d+):(\d+)\]", m.group("attrs"))
            src = instrs.get(args[0])
            shape = src[1].group("shape") if src else ""
            full = [int(x) for x in re.findall(r"\d+", shape[shape.find("[") + 1:].split("]")[0])] if src else []
            for d, (s, e) in enumerate(dims):
                s, e = int(s), int(e)
                if d < len(full) and (s, e) != (0, full[d]):
                    step = (e - s) if e + (e - s) <= full[d] else (1 if e + 1 <= full[d] else -(min(s, 1)))
                    if step:
                        new = line.replace(f"[{s}:{e}]", f"[{s + step}:{e + step}]", 1)
                        yield from edit("slice", f"dim {d} [{s}:{e}] -> [{s + step}:{e + step}]", new)
                    break
        flips = {"LE": "LT", "LT": "LE", "GE": "GT", "GT": "GE", "EQ": "NE", "NE": "EQ"}
        cm = re.search(r"direction=(\w+)", line)
        if op == "compare" and cm and cm.group(1) in flips:
            yield from edit("compare", f"{cm.group(1)} -> {flips[cm.group(1)]}",
                            line.replace(f"direction={cm.group(1)}", f"direction={flips[cm.group(1)]}", 1))
        if op == "constant":
            cv = re.match(r"\s*(-?[\d.e+-]+)\s*$", m.group("args"))
            if cv:
                v = float(cv.group(1))
                new_v = repr(2 * v + 1) if "." in cv.group(1) or "e" in cv.group(1) else str(int(2 * v + 1))
                yield from edit("constant", f"{cv.group(1)} -> {new_v}", line.replace(f"({cv.group(1)})", f"({new_v})", 1))
        if op in ("reduce", "concatenate"):
            dm = re.search(r"dimensions=\{(\d+)\}", line)
            if dm:
                d = int(dm.group(1))
                other = d - 1 if d > 0 else d + 1
                yield from edit("dims", f"dimension {d} -> {other}",
                                line.replace(f"dimensions={{{d}}}", f"dimensions={{{other}}}", 1))


VIEW_OPS = {"copy", "reshape", "bitcast", "transpose", "broadcast"}


def check(tangle: Path, rel: Rel, impl_text: str, work: Path, replay: bool = False) -> tuple[str, dict | None]:
    """The outcome, and with replay the report's replay.localization (None if absent)."""
    work.mkdir(parents=True, exist_ok=True)
    impl = work / "graph.0.hlo"
    impl.write_text(impl_text)
    (work / "check.rel").write_text(rel.with_impl(impl))
    cmd = [str(tangle), "check", str(work / "check.rel")]
    if replay:
        cmd += ["--replay", "--json", str(work / "report.json")]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return "timeout", None
    loc = None
    if replay and (work / "report.json").is_file():
        try:
            loc = (json.loads((work / "report.json").read_text()).get("replay") or {}).get("localization")
        except json.JSONDecodeError:
            pass
    return STATUS.get(p.returncode, f"error (exit {p.returncode})"), loc


def first_consumers(lines: list[str], name: str) -> set[str]:
    """The edited instruction and the first instructions that compute with it
    (users, looking through VIEW_OPS), in the mutated program."""
    instrs = entry_instructions(lines)
    users: dict[str, list[str]] = {}
    for n, (_, m) in instrs.items():
        for o in operands(m):
            users.setdefault(o, []).append(n)
    out, stack = {name}, [name]
    while stack:
        for u in users.get(stack.pop(), []):
            if u not in out:
                out.add(u)
                if instrs[u][1].group("op") in VIEW_OPS:
                    stack.append(u)
    return out


def value_localized(loc: dict | None, targets: set[str], any_suspect: bool) -> bool:
    loc = loc or {}
    named = [loc.get("first")] + ((loc.get("others") or []) if any_suspect else [])
    return any(n and (n.get("tensor") or "").partition(".")[2] in targets for n in named)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rel", nargs="?", type=Path, default=DEFAULT_REL)
    ap.add_argument("--tangle", type=Path, default=None, help="tangle binary (default: $TANGLE_BIN, build/bin/tangle)")
    ap.add_argument("--limit", type=int, default=None, help="at most N mutants per kind")
    ap.add_argument("--replay", action="store_true",
                    help="check with --replay and rate the value-guided localization (first wrong impl operator)")
    ap.add_argument("-v", "--verbose", action="store_true", help="one line per mutant")
    a = ap.parse_args(argv)
    try:
        tangle = find_binary(a.tangle, required=True)
    except FileNotFoundError as e:
        print(e, file=sys.stderr)
        return 2
    rel = Rel(a.rel)
    if not rel.impl.is_file():
        print(f"skipped: {rel.impl} is absent")
        return 0
    lines = rel.impl.read_text().splitlines()
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        base, _ = check(tangle, rel, "\n".join(lines) + "\n", Path(tmp) / "baseline", a.replay)
        if base != "refines":
            print(f"FAIL: the unmutated program does not refine ({base})")
            return 1
        rows, per_kind = [], Counter()
        for k, (kind, what, i, new) in enumerate(mutants(lines, rel)):
            if a.limit is not None and per_kind[kind] >= a.limit:
                continue
            per_kind[kind] += 1
            mutated = lines[:i] + [new] + lines[i + 1:]
            out, loc = check(tangle, rel, "\n".join(mutated) + "\n", Path(tmp) / f"m{k}", a.replay)
            first = any_ = None
            if a.replay and out == "violation":
                targets = first_consumers(mutated, what.split(":")[0])
                first, any_ = value_localized(loc, targets, False), value_localized(loc, targets, True)
            rows.append((kind, what, out, first, any_))
            if a.verbose:
                named = ((loc or {}).get("first") or {}).get("tensor")
                tag = {True: "named", False: "missed", None: "-"}[first]
                print(f"  [{kind:10}] {what[:44]:44} -> {out:10} {tag:6} {named}", flush=True)
    table = Counter((kind, out) for kind, _, out, _, _ in rows)
    kinds = sorted({kind for kind, *_ in rows})
    cols = ["violation", "bad input", "inconclusive", "timeout", "refines"]
    head = f"{'kind':12s} {'count':>5s} " + " ".join(f"{c:>12s}" for c in cols)
    print(head + ("  value-guided (first / any suspect)" if a.replay else ""))

    def rate(sel):
        elig = [r for r in rows if sel(r[0]) and r[3] is not None]
        if not elig:
            return "n/a"
        f, y = sum(r[3] for r in elig), sum(r[4] for r in elig)
        return f"{f}/{len(elig)} ({100 * f / len(elig):.0f}%) / {y}/{len(elig)} ({100 * y / len(elig):.0f}%)"
    for kind in kinds:
        print(f"{kind:12s} {sum(v for (k, _), v in table.items() if k == kind):5d} " +
              " ".join(f"{table[(kind, c)]:12d}" for c in cols) + (f"  {rate(lambda k: k == kind)}" if a.replay else ""))
    print(f"{'total':12s} {len(rows):5d} " + " ".join(f"{sum(table[(k, c)] for k in kinds):12d}" for c in cols) +
          (f"  {rate(lambda k: True)}" if a.replay else ""))
    print(f"time: {time.monotonic() - t0:.1f} s")
    bad = [(kind, what) for kind, what, out, _, _ in rows if out == "refines"]
    for kind, what in bad:
        print(f"REFINES (soundness bug?): {kind}: {what}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
