#!/usr/bin/env python3
"""Mutation testing for tangle: a semantics-changing edit of one rank's FX dump
must never be reported as "refines".

For a relation file (default: examples/artifact/gpt/paral2_layer1.rel and
paral4_layer2.rel) the script reads the implementation dumps as text, makes
mutants of ONE rank's dump (--rank, default 1), checks each with
`tangle check REL --json OUT` (60 s timeout) and prints a table.

Mutation kinds (each a small textual edit of nodes that reach the checked
output, i.e. the impl tensors named on the .rel's `expect` lines; edits of dead
nodes would be equivalent by construction and are not generated):
  collective  drop a collective. all_reduce: the wait line becomes
              `w = aten.clone.default(x)` (x the all_reduce input: the
              un-reduced partial value); reduce_scatter_tensor: the wait line
              becomes this rank's dim-0 chunk of the un-reduced input
              (`aten.slice.Tensor(x, 0, r*n, (r+1)*n)`: scatter without the
              sum); all_gather_into_tensor: the wait line becomes
              `aten.cat.default([x, x, ...], 0)` (the rank's own shard
              repeated group-size times instead of all shards). Shapes are kept.
              Also: reduce op 'sum' -> 'max' on all_reduce/reduce_scatter.
              vLLM's `vllm.all_reduce.default(x, group)` (no wait node)
              becomes `aten.clone.default(x)`.
              (Not 'max' -> 'sum' on the cross-entropy max: any value common
              to all ranks cancels there, so that edit is equivalent.)
  slice       aten.slice.Tensor(x, d, start, end) with finite bounds: both
              bounds shifted by +8 and by -8 rows (length kept), when in range;
              with a symbolic start s (a Sym node): the window [s, e) becomes
              [0, s). aten.slice_scatter: the window written moved by +-8.
  dim         transpose.int: second dim moved to another dim (or the identity
              transpose for 2-D); permute: first two entries swapped;
              cat: dim changed; _softmax: dim -1 <-> -2. The mutated node's
              type annotation is updated to the new shape, so a mismatch, if
              any, shows up at a consumer. Transpose/permute edits are also
              emitted with the old annotation kept ("type kept": the dump then
              lies about the node's shape; rejecting it is fine, refining not).
  swap-inputs two live forward() parameters of the same type (consecutive in
              the signature) exchange all their uses in the body.
  rank-copy   the mutated rank's dump is replaced by another rank's dump
              (both ranks then use the same shard offsets / vocab ranges).
  scalar      a numeric literal changed (int +1, float x2, 0.0 -> 0.5): second
              argument of aten.add/sub/mul/div/rsub, `alpha =`, the eps of
              layer norms, the p of native_dropout, the value of masked_fill;
              vLLM kernels: `epsilon =` x2, rotary `is_neox` flipped.
  compare     the bound of aten.lt/le.Scalar raised by 16, of ge/gt.Scalar
              lowered by 16 (the vocab range masks: valid tokens get masked).

Outcomes: exit 0 "refines" (a soundness bug unless allow-listed), 1
"violation", 2 "bad input" (the mutant was rejected, e.g. a shape mismatch
found at import: fine), 3 "inconclusive", or "timeout". Every outcome other
than refines counts as detected. Before the mutants, the unmutated copy is
checked through the same harness and must refine (otherwise the harness is
broken and every "detection" would be meaningless).

Exact localization (computed for "violation" outcomes that name a failing spec
operator; rank-copy mutants have no single edited node and are excluded):
let E be the impl nodes whose lines the mutant edits (for swap-inputs: every
body node whose argument was renamed). The failure is exactly localized iff the
failing spec operator F (`failure.operator`) satisfies one of
  (a) F's `# File: path:line` (from `failure.source`) equals the
      `# File: path:line` comment of some node in E;
  (b) the spec graph has a node named like some e in E with the same op
      (the counterpart), and F is that node;
  (c) F directly consumes such a counterpart (its first spec consumer).
The rate is localized / eligible. Violations refused only at an `expect`
line (failure null: every spec operator found a relation, typically through
an unmutated rank, but the outputs differ) are not eligible; the table counts
them as "exp-only".

A failure shows up at the first spec operator that cannot be computed without
the mutated value; a rearrangement of a wrong tensor usually still has a clean
expression over other tensors. Hence a second, looser rate, "frontier
localization": as above, but E is widened to its frontier, i.e. E plus every
impl node reachable from E through users where each intermediate node is a
rearrangement/copy/collective (view, clone, copy, transpose, t, permute,
slice, cat, getitem, unsqueeze, _to_copy, wait_tensor, all_reduce, ...); the
first compute consumers are included but not expanded.

Value-guided localization (--replay): tangle then also runs both sides on
random inputs (at reduced sizes when the graphs are large) and names the first
implementation operator whose value agrees with no spec value
(replay.localization in the JSON report). A violation counts as localized when
that operator is on the mutated rank and is an edited node or a first
consumer of one (the consumer is where a dropped collective's wrong value is
first computed with). The table gives the rate per kind for the first
operator named, and for any operator the report lists (first or further suspects).

Exit status: 0 if no mutant refines outside ALLOW_REFINES and the baseline
refines; 1 otherwise. Python 3 standard library only.
"""
from __future__ import annotations

import argparse
import dataclasses
import difflib
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))

from tangle.binary import find_binary  # noqa: E402
from tangle.relfile import RelFile, read_relfile  # noqa: E402

DEFAULT_RELS = [REPO / "examples/artifact/gpt/paral2_layer1.rel",
                REPO / "examples/artifact/gpt/paral4_layer2.rel"]
TIMEOUT_S = 60
KINDS = ["collective", "slice", "dim", "swap-inputs", "rank-copy", "scalar", "compare"]

# Mutants that are allowed to refine, keyed by Mutant.ident, each with the
# argument why the edit is semantically equivalent. Keep empty unless such an
# argument exists.
ALLOW_REFINES: dict[str, str] = {}

INT64_MAX = 9223372036854775807


# ---------------------------------------------------------------- FX dump text

@dataclasses.dataclass
class Node:
    name: str
    lineno: int           # index into the file's lines
    indent: str
    type: str | None      # annotation text, e.g. 'f32[8, 16]'
    rhs: str              # text after ' = ' up to the clean-up tail
    tail: str             # ';  a = b = None' or ''
    source: str | None    # 'path:line' of the preceding '# File:' comment
    op: str               # 'aten.mm.default', 'getitem', 'get_attr'
    args: list[str]       # top-level argument texts (positional and kw)

    def render(self) -> str:
        ann = f': "{self.type}"' if self.type is not None else ""
        return f"{self.indent}{self.name}{ann} = {self.rhs}{self.tail}"

    def positional(self) -> list[str]:
        return [a for a in self.args if not re.match(r"^\w+ = ", a)]

    def kwarg(self, key: str) -> str | None:
        for a in self.args:
            if a.startswith(key + " = "):
                return a[len(key) + 3:]
        return None


NODE_RE = re.compile(r'^(\s+)(\w+)(?:: "([^"]*)")? = (.*)$')
FILE_RE = re.compile(r"#\s*File: (\S+:\d+)")
IDENT_RE = re.compile(r"\b[A-Za-z_]\w*\b")
NUM_RE = re.compile(r"^-?\d+(\.\d*)?([eE][-+]?\d+)?$")


def split_args(s: str) -> list[str]:
    """Top-level comma split, respecting brackets and quotes."""
    out, depth, cur, quote = [], 0, [], None
    for ch in s:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = None
            continue
        if ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def parse_type(t: str | None) -> tuple[str, list[int]] | None:
    m = re.match(r"^(\w+)\[(.*)\]$", t or "")
    if not m:
        return None
    dims = [d.strip() for d in m.group(2).split(",") if d.strip()]
    if not all(re.match(r"^\d+$", d) for d in dims):
        return None
    return m.group(1), [int(d) for d in dims]


def fmt_type(dtype: str, shape: list[int]) -> str:
    return f"{dtype}[{', '.join(map(str, shape))}]"


class Dump:
    """One FX dump: its lines, forward() parameters and body nodes."""

    def __init__(self, text: str):
        self.lines = text.split("\n")
        self.params: dict[str, str] = {}          # name -> annotation
        self.param_order: list[str] = []
        self.nodes: dict[str, Node] = {}
        self.order: list[str] = []
        self.returns: list[str] = []
        source = None
        in_body = False
        for i, line in enumerate(self.lines):
            s = line.strip()
            if s.startswith("def forward("):
                for m in re.finditer(r'(\w+): "([^"]*)"', s):
                    self.params[m.group(1)] = m.group(2)
                    self.param_order.append(m.group(1))
                in_body = True
                continue
            if not in_body:
                continue
            if s.startswith("#"):
                m = FILE_RE.search(s)
                source = m.group(1) if m else None
                continue
            if s.startswith("return"):
                self.returns = IDENT_RE.findall(s[len("return"):])
                break
            m = NODE_RE.match(line)
            if not m:
                continue
            indent, name, typ, rest = m.groups()
            rhs, sep, tail = rest.partition(";  ")
            tail = sep + tail if sep else ""
            if rhs.startswith("torch.ops.") and rhs.endswith(")"):
                op, _, a = rhs[len("torch.ops."):].partition("(")
                args = split_args(a[:-1])
            elif re.match(r"^\w+\[\d+\]$", rhs):
                op, args = "getitem", [rhs.split("[")[0], rhs.split("[")[1][:-1]]
            elif rhs.startswith("self."):
                op, args = "get_attr", [rhs[5:]]
            else:
                op, args = rhs, []
            self.nodes[name] = Node(name, i, indent, typ, rhs, tail, source, op, args)
            self.order.append(name)

    def type_of(self, name: str) -> str | None:
        if name in self.params:
            return self.params[name]
        n = self.nodes.get(name)
        return n.type if n else None

    def operands(self, node: Node) -> list[str]:
        if node.op == "get_attr":
            return []
        refs = []
        for a in node.args:
            a = re.sub(r"'[^']*'", "", a)
            for ident in IDENT_RE.findall(a):
                if ident in self.nodes or ident in self.params:
                    refs.append(ident)
        return refs

    def users(self) -> dict[str, list[str]]:
        u: dict[str, list[str]] = defaultdict(list)
        for name in self.order:
            for o in self.operands(self.nodes[name]):
                u[o].append(name)
        return u

    def live(self, roots: list[str], cuts: frozenset = frozenset()) -> set[str]:
        """Nodes the roots depend on, stopping at cut tensors: an implementation
        intermediate that the relation file equates with a spec tensor is taken as
        given by tangle, so edits at or above it are not checked (by design)."""
        seen, stack = set(), [r for r in roots if r in self.nodes or r in self.params]
        while stack:
            n = stack.pop()
            if n in seen or n in cuts:
                continue
            seen.add(n)
            if n in self.nodes:
                stack.extend(self.operands(self.nodes[n]))
        return seen

    def text_with(self, edits: dict[int, str]) -> str:
        return "\n".join(edits.get(i, l) for i, l in enumerate(self.lines))


# ---------------------------------------------------------------- relation file

@dataclasses.dataclass
class RelInfo:
    header: RelFile
    roots: list[str]     # impl tensors named on expect lines
    cuts: frozenset = frozenset()  # impl tensors named in input relations (given, not checked)

    @property
    def path(self) -> Path:
        return self.header.path

    @property
    def spec(self) -> Path:
        return self.header.spec

    @property
    def impl_pattern(self) -> Path:  # contains '{rank}'
        return self.header.impl_pattern

    @property
    def ranks(self) -> int:
        return self.header.rank_count

    def impl(self, r: int) -> Path:
        return self.header.impl_path(r)


def read_rel(path: Path) -> RelInfo:
    try:
        header = read_relfile(path)
    except ValueError as e:
        raise SystemExit(str(e))
    if header.spec is None or header.impl_pattern is None or header.spmd:
        raise SystemExit(f"{path}: need `spec` and `impl ...{{rank}}... ranks N` lines")
    roots: list[str] = []
    cuts_found: set[str] = set()
    for st in header.statements:
        if st.keyword == "expect":
            roots += re.findall(r"\bD(?:\*|\d+)\.(\w+)", st.text)
        elif st.keyword.startswith("S.") and "=" in st.text:
            cuts_found.update(re.findall(r"\bD(?:\*|\d+)\.([\w.]+)", st.text.split("=", 1)[1]))
    return RelInfo(header, sorted(set(roots)), frozenset(cuts_found))


def mutant_rel_text(rel: RelInfo, impl_dir: Path) -> str:
    return rel.header.with_paths(impl=impl_dir / rel.impl_pattern.name)


# ---------------------------------------------------------------- mutants

@dataclasses.dataclass
class Mutant:
    kind: str
    rank: int
    node: str                  # main edited node (or description for rank-copy)
    edit: str                  # human-readable edit
    files: dict[int, str]      # rank -> new text of that rank's dump
    edited: list[str]          # impl nodes whose lines were edited (localization set E)
    diff: str = ""
    ident: str = ""


def bump(lit: str) -> str:
    if re.match(r"^-?\d+$", lit):
        return str(int(lit) + 1)
    v = float(lit)
    return repr(0.5 if v == 0.0 else v * 2)


def replace_arg(node: Node, index: int, new: str) -> str:
    args = list(node.args)
    args[index] = new
    head = node.rhs[: node.rhs.index("(") + 1]
    return head + ", ".join(args) + ")"


class Generator:
    def __init__(self, rel: RelInfo, rank: int):
        self.rel, self.rank = rel, rank
        self.texts = {r: rel.impl(r).read_text() for r in range(rel.ranks)}
        self.dump = Dump(self.texts[rank])
        roots = rel.roots or self.dump.returns[:1]
        # Placeholders named in relations are ordinary inputs; only intermediates cut the graph.
        self.live = self.dump.live(roots, frozenset(c for c in rel.cuts if c in self.dump.nodes))
        self.users = self.dump.users()
        self.out: list[Mutant] = []

    def add(self, kind, node, edit, edits: dict[int, str], edited):
        new = self.dump.text_with(edits)
        if new == self.texts[self.rank]:
            return
        self.out.append(Mutant(kind, self.rank, node, edit, {self.rank: new}, list(edited)))

    def edit_node(self, kind, node: Node, rhs: str, edit: str, type_: str | None = "keep"):
        n2 = dataclasses.replace(node, rhs=rhs, type=node.type if type_ == "keep" else type_)
        self.add(kind, node.name, edit, {node.lineno: n2.render()}, [node.name])

    def live_nodes(self):
        return [self.dump.nodes[n] for n in self.dump.order if n in self.live]

    def generate(self) -> list[Mutant]:
        for node in self.live_nodes():
            self.collective(node)
            self.slice(node)
            self.dim(node)
            self.scalar(node)
            self.compare(node)
        self.swap_inputs()
        self.rank_copy()
        for m in self.out:
            m.ident = f"{self.rel.path.stem}:r{m.rank}:{m.kind}:{m.node}:{m.edit}"
            old = self.texts[m.rank].splitlines()
            new = m.files[m.rank].splitlines()
            m.diff = "\n".join(difflib.unified_diff(old, new, f"r{m.rank}", f"r{m.rank}.mutant", n=0, lineterm=""))
        return self.out

    # -- kinds

    def collective(self, w: Node):
        if w.op == "vllm.all_reduce.default" and w.args:  # vLLM's own all-reduce: no wait node
            x = w.positional()[0]
            self.edit_node("collective", w, f"torch.ops.aten.clone.default({x})", f"drop vllm all_reduce {w.name}")
            return
        if w.op != "_c10d_functional.wait_tensor.default" or not w.args:
            return
        c = self.dump.nodes.get(w.args[0])
        if c is None:
            return
        pos = c.positional()
        if c.op in ("_c10d_functional.all_reduce.default", "_c10d_functional.reduce_scatter_tensor.default") \
                and pos[1] == "'sum'":
            self.edit_node("collective", c, replace_arg(c, c.args.index(pos[1]), "'max'"), f"{c.name} reduce op sum -> max")
        if c.op == "_c10d_functional.all_reduce.default":
            rhs = f"torch.ops.aten.clone.default({pos[0]})"
            self.edit_node("collective", w, rhs, f"drop all_reduce({pos[1]}) {c.name}")
        elif c.op == "_c10d_functional.reduce_scatter_tensor.default":
            t = parse_type(w.type)
            if not t or not t[1]:
                return
            n = t[1][0]
            rhs = f"torch.ops.aten.slice.Tensor({pos[0]}, 0, {self.rank * n}, {(self.rank + 1) * n})"
            self.edit_node("collective", w, rhs, f"reduce_scatter {c.name} -> own chunk, no sum")
        elif c.op == "_c10d_functional.all_gather_into_tensor.default":
            g = int(pos[1])
            rhs = f"torch.ops.aten.cat.default([{', '.join([pos[0]] * g)}], 0)"
            self.edit_node("collective", w, rhs, f"all_gather {c.name} -> own shard x{g}")

    def slice(self, node: Node):
        if node.op == "aten.slice_scatter.default":
            self.slice_scatter(node)
            return
        if node.op != "aten.slice.Tensor":
            return
        pos = node.positional()
        if len(pos) >= 4 and re.match(r"^[A-Za-z_]\w*$", pos[2]) and re.match(r"^-?\d+$", pos[1]):
            # A symbolic window [s, e) (s a Sym node, dynamic shapes) moved to the front: [0, s).
            shifted = replace_arg(dataclasses.replace(node, args=node.args[:2] + ["0"] + node.args[3:]), 3, pos[2])
            self.edit_node("slice", node, shifted, f"slice [{pos[2]}:{pos[3]}] -> [0:{pos[2]}]")
            return
        if len(pos) < 4 or not all(re.match(r"^-?\d+$", p) for p in pos[1:4]):
            return
        d, start, end = int(pos[1]), int(pos[2]), int(pos[3])
        t = parse_type(self.dump.type_of(pos[0]))
        if not t or end >= INT64_MAX or start < 0 or end < 0:
            return
        size = t[1][d]
        for delta in (8, -8):
            if 0 <= start + delta and end + delta <= size:
                shifted = dataclasses.replace(node, args=node.args[:2] + [str(start + delta)] + node.args[3:])
                rhs = replace_arg(shifted, 3, str(end + delta))
                self.edit_node("slice", node, rhs, f"slice [{start}:{end}] -> [{start + delta}:{end + delta}]")

    def slice_scatter(self, node: Node):
        """slice_scatter(x, src, dim, start, end): the window written moved by 8 (length kept)."""
        pos = node.positional()
        if len(pos) < 5 or not all(re.match(r"^-?\d+$", p) for p in pos[2:5]):
            return
        d, start, end = int(pos[2]), int(pos[3]), int(pos[4])
        t = parse_type(self.dump.type_of(pos[0]))
        if not t or start < 0 or end >= INT64_MAX:
            return
        size = t[1][d]
        for delta in (8, -8):
            if 0 <= start + delta and end + delta <= size:
                rhs = replace_arg(dataclasses.replace(node, args=node.args[:3] + [str(start + delta)] + node.args[4:]),
                                  4, str(end + delta))
                self.edit_node("slice", node, rhs, f"slice_scatter [{start}:{end}] -> [{start + delta}:{end + delta}]")

    def dim(self, node: Node):
        pos = node.positional()
        t_in = parse_type(self.dump.type_of(pos[0])) if pos else None
        t_out = parse_type(node.type)
        if node.op == "aten.transpose.int" and t_in:
            rank = len(t_in[1])
            a, b = int(pos[1]) % rank, int(pos[2]) % rank
            others = [c for c in range(rank) if c not in (a, b)]
            c = others[0] if others else a
            shape = list(t_in[1])
            shape[a], shape[c] = shape[c], shape[a]
            rhs = replace_arg(node, 2, str(c))
            self.edit_node("dim", node, rhs, f"transpose({a}, {b}) -> ({a}, {c})", fmt_type(t_in[0], shape))
            self.edit_node("dim", node, rhs, f"transpose({a}, {b}) -> ({a}, {c}), type kept")
        elif node.op == "aten.permute.default" and t_in:
            perm = [int(x) for x in re.findall(r"-?\d+", pos[1])]
            if len(perm) < 2:
                return
            perm2 = [perm[1], perm[0]] + perm[2:]
            shape = [t_in[1][p] for p in perm2]
            rhs = replace_arg(node, 1, str(perm2))
            self.edit_node("dim", node, rhs, f"permute {perm} -> {perm2}", fmt_type(t_in[0], shape))
            self.edit_node("dim", node, rhs, f"permute {perm} -> {perm2}, type kept")
        elif node.op == "aten.cat.default" and t_out:
            d = int(pos[1]) if len(pos) > 1 else 0
            rank = len(t_out[1])
            d2 = (d + 1) % rank
            rhs = replace_arg(node, 1, str(d2)) if len(pos) > 1 else node.rhs[:-1] + f", {d2})"
            self.edit_node("dim", node, rhs, f"cat dim {d} -> {d2}")
        elif node.op == "aten._softmax.default" and t_in and len(t_in[1]) >= 2:
            d = int(pos[1])
            d2 = -2 if d % len(t_in[1]) == len(t_in[1]) - 1 else -1
            self.edit_node("dim", node, replace_arg(node, 1, str(d2)), f"softmax dim {d} -> {d2}")

    SCALAR_OPS = re.compile(r"^aten\.(add|sub|rsub|mul|div)\.")

    def scalar(self, node: Node):
        pos = node.positional()
        idx = None
        if self.SCALAR_OPS.match(node.op) and len(pos) > 1 and NUM_RE.match(pos[1]):
            idx = node.args.index(pos[1], 1)
        elif node.op == "aten.native_dropout.default" and len(pos) > 1:
            idx = 1
        elif node.op == "aten.masked_fill.Scalar" and len(pos) > 2:
            idx = 2
        elif node.op in ("apex.fused_layer_norm_affine_fwd.default", "aten.native_layer_norm.default") and len(pos) > 4:
            idx = 4
        if idx is not None and NUM_RE.match(node.args[idx]):
            old = node.args[idx]
            self.edit_node("scalar", node, replace_arg(node, idx, bump(old)), f"{node.op.split('.')[1]} arg {old} -> {bump(old)}")
        for key in ("alpha", "eps", "epsilon"):  # epsilon: vLLM's rms_norm kernels (auto_functionalized)
            v = node.kwarg(key)
            if v is not None and NUM_RE.match(v):
                i = node.args.index(f"{key} = {v}")
                self.edit_node("scalar", node, replace_arg(node, i, f"{key} = {bump(v)}"), f"{key} {v} -> {bump(v)}")
        v = node.kwarg("is_neox")  # vLLM's rotary kernel: NeoX (rotate halves) <-> GPT-J (interleaved) style
        if v in ("True", "False"):
            i = node.args.index(f"is_neox = {v}")
            flip = "False" if v == "True" else "True"
            self.edit_node("scalar", node, replace_arg(node, i, f"is_neox = {flip}"), f"is_neox {v} -> {flip}")

    def compare(self, node: Node):
        m = re.match(r"^aten\.(lt|le|ge|gt)\.Scalar$", node.op)
        pos = node.positional()
        if not m or len(pos) < 2 or not re.match(r"^-?\d+$", pos[1]):
            return
        v = int(pos[1])
        v2 = v + 16 if m.group(1) in ("lt", "le") else v - 16
        self.edit_node("compare", node, replace_arg(node, 1, str(v2)), f"{m.group(1)} bound {v} -> {v2}")

    def swap_inputs(self):
        d = self.dump
        live = [p for p in d.param_order if p in self.live]
        for a, b in zip(live, live[1:]):
            if d.params[a] != d.params[b]:
                continue
            edits, edited = {}, []
            for name in d.order:
                n = d.nodes[name]
                ops = d.operands(n)
                if a not in ops and b not in ops:
                    continue
                rhs = re.sub(rf"\b({a}|{b})\b", lambda m: b if m.group(1) == a else a, n.rhs)
                tail = re.sub(rf"\b({a}|{b})\b", lambda m: b if m.group(1) == a else a, n.tail)
                edits[n.lineno] = dataclasses.replace(n, rhs=rhs, tail=tail).render()
                edited.append(name)
            self.add("swap-inputs", f"{a}<->{b}", f"swap {a} and {b} ({d.params[a]})", edits, edited)

    def rank_copy(self):
        # Device placement is not semantics: compare the live nodes without it.
        strip = lambda line: re.sub(r"device\(type='\w+'(, index=\d+)?\)", "device", line)
        mine = [strip(self.dump.nodes[n].render()) for n in self.dump.order if n in self.live]
        for r in range(self.rel.ranks):
            other = Dump(self.texts[r])
            theirs = [strip(other.nodes[n].render()) for n in other.order if n in self.live and n in other.nodes]
            # Only a copy that differs where tangle checks is a semantics-changing mutant.
            if r != self.rank and self.texts[r] != self.texts[self.rank] and theirs != mine:
                self.out.append(Mutant("rank-copy", self.rank, f"r{r}", f"rank {self.rank} := copy of rank {r}",
                                       {self.rank: self.texts[r]}, []))


# ---------------------------------------------------------------- running

@dataclasses.dataclass
class Outcome:
    status: str            # refines | violation | bad input | inconclusive | timeout | error
    seconds: float
    failure: dict | None
    message: str           # first line of stderr / report for context
    localization: dict | None = None  # --replay: report.json's replay.localization
    replay_status: str | None = None


STATUS = {0: "refines", 1: "violation", 2: "bad input", 3: "inconclusive"}


def run_tangle(tangle: Path, rel: RelInfo, files: dict[int, str], work: Path, replay: bool = False) -> Outcome:
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    for r in range(rel.ranks):
        dst = work / rel.impl(r).name
        if r in files:
            dst.write_text(files[r])
        else:
            shutil.copyfile(rel.impl(r), dst)
    rel_path = work / rel.path.name
    rel_path.write_text(mutant_rel_text(rel, work))
    out_json = work / "report.json"
    t0 = time.monotonic()
    try:
        p = subprocess.run([str(tangle), "check", str(rel_path), "--json", str(out_json)] + (["--replay"] if replay else []),
                           capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return Outcome("timeout", time.monotonic() - t0, None, f"no answer in {TIMEOUT_S} s")
    dt = time.monotonic() - t0
    status = STATUS.get(p.returncode, f"error (exit {p.returncode})")
    failure, report = None, {}
    if out_json.exists():
        try:
            report = json.loads(out_json.read_text())
            failure = report.get("failure")
        except json.JSONDecodeError:
            pass
    msg = (p.stderr.strip() or p.stdout.strip()).splitlines()
    rep = report.get("replay") or {}
    return Outcome(status, dt, failure, msg[0] if msg else "", rep.get("localization"), rep.get("status"))


IDENTITY_RE = re.compile(r"^(aten\.(clone|copy|alias|contiguous|view|reshape|_unsafe_view|unsqueeze|squeeze|"
                         r"expand|transpose|t|permute)\.|_c10d_functional\.wait_tensor\.)")
REARRANGE_RE = re.compile(
    r"^(aten\.(view|reshape|_unsafe_view|clone|copy|transpose|t|permute|slice|cat|split|split_with_sizes|"
    r"unsqueeze|squeeze|expand|alias|_to_copy|contiguous)\.|getitem$|_c10d_functional\.)")


def frontier(mdump: Dump, edited: list[str]) -> list[str]:
    users = mdump.users()
    seen, stack = [], list(edited)
    while stack:
        n = stack.pop()
        if n in seen or n not in mdump.nodes:
            continue
        seen.append(n)
        if n in edited or REARRANGE_RE.match(mdump.nodes[n].op):
            stack.extend(users.get(n, []))
    return seen


def localized(m: Mutant, o: Outcome, mdump: Dump, spec: Dump, spec_users, wide=False) -> bool | None:
    """Exact (or with wide=True, frontier) localization per the module
    docstring; None when not eligible."""
    if o.status != "violation" or not o.failure or m.kind == "rank-copy":
        return None
    f = o.failure
    fop = (f.get("operator") or "").removeprefix("S.")
    fm = FILE_RE.search("# " + (f.get("source") or ""))
    fline = fm.group(1) if fm else None
    for e in (frontier(mdump, m.edited) if wide else m.edited):
        n = mdump.nodes.get(e)
        if n is None:
            continue
        if fline and n.source == fline:
            return True
        counterpart = spec.nodes.get(e)
        if counterpart is not None and counterpart.op == n.op and (fop == e or fop in spec_users.get(e, [])):
            return True
    return False


def value_localized(m: Mutant, o: Outcome, mdump: Dump, any_suspect=False) -> bool | None:
    """Value-guided localization (--replay): the first wrong implementation
    operator the report names is, on the mutated rank, an edited node or a
    first consumer of one (a user in the mutated dump; for an edit that makes
    a node an alias, such as a dropped collective, the consumer is the first
    operator that computes with the wrong value). With any_suspect, the
    further suspects the report lists count too. None when not eligible: not
    a violation, or a rank-copy mutant."""
    if o.status != "violation" or m.kind == "rank-copy":
        return None
    loc = o.localization or {}
    named = [loc.get("first")] + (loc.get("others") or [] if any_suspect else [])
    users = mdump.users()
    targets = set(m.edited)
    # First consumers, looking through ops that compute nothing (copies and
    # views: a dropped all-reduce's wait becomes a clone read through `copy`
    # and a view), as tangle does not blame a view either: the first operator
    # that computes with the edited value.
    stack = list(m.edited)
    while stack:
        for u in users.get(stack.pop(), []):
            if u in targets:
                continue
            targets.add(u)
            node = mdump.nodes.get(u)
            if node is not None and IDENTITY_RE.match(node.op):
                stack.append(u)
    for n in named:
        if n and n.get("rank") == m.rank and n.get("tensor", "").partition(".")[2] in targets:
            return True
    return False


def run_rel(tangle: Path, rel_path: Path, rank: int, kinds: list[str], limit_per_kind: int | None,
            verbose: bool, tmp: Path, replay: bool = False) -> list[tuple[Mutant, Outcome, bool | None, bool | None]]:
    rel = read_rel(rel_path)
    rank = min(rank, rel.ranks - 1)
    base = run_tangle(tangle, rel, {}, tmp / "baseline", replay)
    if base.status != "refines":
        raise SystemExit(f"{rel_path}: the unmutated copy does not refine ({base.status}: {base.message}); "
                         "the harness or tangle is broken, mutants would prove nothing")
    gen = Generator(rel, rank)
    mutants = [m for m in gen.generate() if m.kind in kinds]
    if limit_per_kind:
        seen: dict[str, int] = defaultdict(int)
        kept = []
        for m in mutants:
            if seen[m.kind] < limit_per_kind:
                kept.append(m)
                seen[m.kind] += 1
        mutants = kept
    spec = Dump(rel.spec.read_text())
    spec_users = spec.users()
    results = []
    for i, m in enumerate(mutants):
        o = run_tangle(tangle, rel, m.files, tmp / f"m{i}", replay)
        mdump = Dump(m.files[m.rank])
        o.value_loc = value_localized(m, o, mdump) if replay else None
        o.value_any = value_localized(m, o, mdump, any_suspect=True) if replay else None
        loc = localized(m, o, mdump, spec, spec_users)
        wide = localized(m, o, mdump, spec, spec_users, wide=True)
        results.append((m, o, loc, wide))
        if verbose:
            f = o.failure or {}
            where = f"{f.get('operator')} @ {f.get('location')}" if f else o.message.partition("error: ")[2][:120] or o.message[:120]
            tag = {True: "exact", False: "front" if wide else "off", None: "-"}[loc]
            print(f"  [{m.kind:11}] {m.node:28} {m.edit[:48]:48} -> {o.status:12} {o.seconds:5.2f}s {tag:5} {where}",
                  flush=True)
            if replay:
                first = (o.localization or {}).get("first") or {}
                vtag = {True: "named", False: "missed", None: "-"}[o.value_loc]
                print(f"      value-guided: {vtag:6} {first.get('tensor')} @ {first.get('location')} "
                      f"(replay {o.replay_status})", flush=True)
        if o.status == "refines":
            print(f"\n!!! MUTANT REFINES: {m.ident}\n{m.diff}\n", file=sys.stderr, flush=True)
    return results


def table(results) -> str:
    rows = defaultdict(lambda: defaultdict(int))
    for m, o, loc, wide in results:
        r = rows[m.kind]
        r["n"] += 1
        r[o.status] += 1
        r["exp-only"] += int(o.status == "violation" and not o.failure)
        if loc is not None:
            r["elig"] += 1
            r["exact"] += int(loc)
            r["wide"] += int(wide)
        if getattr(o, "value_loc", None) is not None:
            r["velig"] += 1
            r["value"] += int(o.value_loc)
            r["value-any"] += int(o.value_any)
    hdr = (f"{'kind':12} {'count':>5} {'viol':>5} {'(exp-only)':>10} {'bad':>4} {'inconcl':>7} {'timeout':>7} "
           f"{'refines':>7}  {'exact-localization':18}  {'frontier-localization':21}  value-guided (first / any suspect)")
    lines = [hdr, "-" * len(hdr)]
    tot = defaultdict(int)
    for k in KINDS + sorted(set(rows) - set(KINDS)):
        if k not in rows:
            lines.append(f"{k:12} {0:>5}")
            continue
        r = rows[k]
        for key, v in r.items():
            tot[key] += v
        lines.append(fmt_row(k, r))
    lines.append("-" * len(hdr))
    lines.append(fmt_row("total", tot))
    return "\n".join(lines)


def fmt_row(k, r) -> str:
    def rate(key, of="elig"):
        return f"{r[key]}/{r[of]} ({100 * r[key] / r[of]:.0f}%)" if r[of] else "n/a"
    return (f"{k:12} {r['n']:>5} {r['violation']:>5} {r['exp-only']:>10} {r['bad input']:>4} {r['inconclusive']:>7} "
            f"{r['timeout']:>7} {r['refines']:>7}  {rate('exact'):18}  {rate('wide'):21}  "
            f"{rate('value', 'velig')} / {rate('value-any', 'velig')}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rels", nargs="*", type=Path, help="relation files (default: gpt paral2_layer1, paral4_layer2)")
    ap.add_argument("--rank", type=int, default=1, help="rank whose dump is mutated (default 1, capped)")
    ap.add_argument("--kinds", default=",".join(KINDS), help="comma-separated kinds to run")
    ap.add_argument("--limit-per-kind", type=int, default=None, help="at most N mutants per kind and file")
    ap.add_argument("--tangle", type=Path, default=None, help="tangle binary (default: $TANGLE_BIN, build/bin/tangle)")
    ap.add_argument("--json", type=Path, default=None, help="write per-mutant results here")
    ap.add_argument("-q", "--quiet", action="store_true", help="only the tables")
    ap.add_argument("--replay", action="store_true",
                    help="check with --replay and rate the value-guided localization (first wrong impl operator)")
    args = ap.parse_args(argv)
    try:
        tangle = find_binary(args.tangle, required=True)
    except FileNotFoundError as e:
        print(e, file=sys.stderr)
        return 2
    rels = args.rels or DEFAULT_RELS
    kinds = args.kinds.split(",")
    t0 = time.monotonic()
    all_results, bad = [], []
    with tempfile.TemporaryDirectory(prefix="tangle-mutation-") as tmp:
        for rel_path in rels:
            print(f"== {rel_path} (mutating rank {args.rank})", flush=True)
            t1 = time.monotonic()
            res = run_rel(tangle, rel_path.resolve(), args.rank, kinds, args.limit_per_kind, not args.quiet,
                          Path(tmp) / rel_path.stem, args.replay)
            print(table(res))
            print(f"time: {time.monotonic() - t1:.1f} s\n")
            all_results += res
            bad += [m for m, o, _, _ in res if o.status == "refines" and m.ident not in ALLOW_REFINES]
    if len(rels) > 1:
        print("== all files")
        print(table(all_results))
    print(f"total time: {time.monotonic() - t0:.1f} s, mutants: {len(all_results)}")
    if args.json:
        args.json.write_text(json.dumps([{
            "id": m.ident, "kind": m.kind, "rank": m.rank, "node": m.node, "edit": m.edit, "status": o.status,
            "seconds": round(o.seconds, 3), "failure_operator": (o.failure or {}).get("operator"),
            "failure_location": (o.failure or {}).get("location"), "exact_localization": loc,
            "frontier_localization": wide,
            "value_localization": getattr(o, "value_loc", None),
            "localized_operator": ((o.localization or {}).get("first") or {}).get("tensor"),
            "message": o.message, "diff": m.diff} for m, o, loc, wide in all_results], indent=1))
    if bad:
        print(f"\nFAIL: {len(bad)} semantics-changing mutant(s) judged 'refines' (soundness bug?):", file=sys.stderr)
        for m in bad:
            print(f"  {m.ident}\n{m.diff}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
