"""tangle verify: capture a model and its ranks, write the relation, run ``tangle check``, present.

No verification logic here: the verdict is the C++ checker's (``tangle check REL --json``). This
module captures the graphs (each in its own spawned process, progress on stderr), writes the relation
file, runs the checker, and prints its report followed by what only the capture knows: which
parameter each placeholder named in the report holds, and the model source line of a failing operator.

Targets:

* ``hf:llama``, ``hf:qwen2``: an HF transformers causal LM (tiny config, random weights, no download)
  against the same model distributed with transformers' own tensor-parallel plan (``tangle.hf``).
  The relation is written from the placeholder maps, matched by parameter name (FQN).
* ``megatron:gpt``: Megatron-core's ``GPTModel`` (tiny config, random weights) at tensor-parallel size 1
  against the same model at size N (``tangle.megatron``); layouts from Megatron's parameter attributes.
  Megatron needs CPU patches on a machine without CUDA: ``--setup MODULE`` names a module whose
  ``setup()`` runs first in every capture process (tests/python/megatron_cpu.py is one).
* ``torchtitan:llama3``: torchtitan's own Llama-3 (tiny config, random weights, no download) against
  the same model after torchtitan's ``model.parallelize`` (``tangle.titan``): ``--sp`` for sequence
  parallel, ``--backend spmd_types`` (torchtitan's default) or ``partial_dtensor``, ``--backward`` for
  one training step.
* ``MODULE:FUNCTION`` (e.g. ``mypkg.mymodel:build``): your own code. ``FUNCTION(rank, world_size)``
  returns ``(fn, args)`` (or ``(fn, args, dynamic)``, see ``tangle.capture``) for one rank, using
  ``torch.distributed._functional_collectives`` for communication (a fake process group is set up;
  nothing is communicated). The spec is ``--spec MODULE:FUNCTION`` or the module's ``spec()``,
  returning ``(fn, args)``. The relation is ``--relation FILE`` or the module's
  ``relation(world_size) -> str``: relation-file text (docs/relations.md) without ``spec``/``impl``
  lines (they are written here; any given are replaced). Tensors are named as in the graphs
  (``S.arg0_1``, ``D*.arg2_1``) or by the argument name of ``fn`` they hold (``S.w1``, ``D*.w1``),
  which is replaced by the placeholder holding it (a name that is also a graph node's is left alone);
  ``S.output`` / ``D*.output`` (``output0``, ``output1``, ...) name what the function returns.

Command line (``tangle verify ...`` runs this with PYTHONPATH and TANGLE_BIN set):

    python -m tangle.verify hf:llama --tp 4 --layers 2 [--backward] [--out DIR] [--json FILE] [--keep]
    python -m tangle.verify megatron:gpt --tp 2 --layers 1 --setup megatron_cpu [--backward]
    python -m tangle.verify torchtitan:llama3 --tp 2 [--sp] [--backend spmd_types|partial_dtensor]
    python -m tangle.verify mypkg.mymodel:build --ranks 2 [--spec mypkg.mymodel:spec] [--relation REL]

Exit codes are the checker's: 0 refines, 1 violation, 2 bad input (one line ``tangle verify: error:
...``, nothing left half written), 3 inconclusive (4: internal error of the checker).

Python API (``import tangle``): ``tangle.verify(target, tp=..., layers=..., out=None) -> VerifyResult``
and ``tangle.check(relation_path) -> CheckResult``; bad input raises ``VerifyError``.
"""
from __future__ import annotations

import argparse
import dataclasses
import importlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

from . import binary, hf, megatron, progress, relfile

EXIT_CODES = {"refines": 0, "violation": 1, "inconclusive": 3}
BAD_INPUT = 2
NAME = re.compile(r"(?<![\w.*])(S|D\d+)\.([A-Za-z_][A-Za-z0-9_]*)")
SOURCE = re.compile(r"^File: (?P<file>.*?):(?P<line>\d+) in (?P<function>[^,]+), code: (?P<code>.*)$", re.S)


class VerifyError(ValueError):
    """Bad input (exit code 2): the message is one line."""


# ---------------------------------------------------------------- results

@dataclasses.dataclass
class Parameter:
    """A graph placeholder named in a report, and what it holds."""
    name: str                      # "S.arg7_1", "D0.arg12_1"
    fqn: str | None                # "model.layers.0.self_attn.o_proj.weight", or an argument name
    kind: str | None = None        # input, parameter, buffer, opaque, symint; grad (a gradient output)
    placement: str | None = None   # on the ranks: Shard(d), Replicate, Partial(sum) (HF targets)
    shape: list | None = None      # global shape
    local_shape: list | None = None
    relation: str | None = None    # the relation-file line that relates it (spec placeholders)

    def __str__(self) -> str:
        what = self.fqn or "(no recorded name)"
        if self.kind == "grad":
            what = f"gradient of {what}"
        rank = re.match(r"D(\d+)\.", self.name)
        details = []
        if self.kind == "opaque":
            details.append("device mesh of the DTensor, no data")
        if self.placement:
            details.append(self.placement)
        if rank and self.local_shape is not None and self.local_shape != self.shape:
            details.append(f"local {_shape(self.local_shape)} of {_shape(self.shape)}")
        elif self.shape is not None:
            details.append(_shape(self.shape))
        if self.relation and not self.placement:
            details.append(f"related by: {self.relation}")
        where = f" on rank {rank.group(1)}" if rank else ""
        return f"{self.name} = {what}{where}" + (f" ({', '.join(details)})" if details else "")


@dataclasses.dataclass
class Failure:
    """The failing spec operator of a violation (or of an inconclusive search)."""
    operator: str                  # "S.add"
    op: str                        # "aten.add.Tensor"
    location: str                  # where in the spec graph file
    source: str                    # the "File: ... code: ..." comment the capture left, or ""
    source_file: str | None
    source_line: int | None
    code: str | None
    reason: str
    input_relations: dict          # spec tensor -> [clean expressions over the implementation]
    inputs_read: list              # graph inputs read directly or through single-operand ops
    input_sources: list            # [{"tensor", "producer", "op", "inputs_read"}]: what computes each input
    nearby_impl: list              # [{"tensor", "op", "location"}]
    parameters: list               # [Parameter] of the placeholders this failure names


@dataclasses.dataclass
class CheckResult:
    verdict: str                   # refines, violation, inconclusive
    exit_code: int
    relation: str                  # the relation file checked
    output_relation: list          # [(spec tensor, expression)] (refines)
    failure: Failure | None
    expectations: list             # [{"expectation", "holds", "known", "location"}]
    parameters: list               # [Parameter] for every placeholder named in the report
    report: str                    # the text printed: the checker's report and the parameter section
    checker_report: str            # the checker's own text report
    json: dict                     # the checker's JSON report, plus "parameters_involved"
    stats: dict = dataclasses.field(default_factory=dict)  # seconds, spec_ops, operators_checked, e-nodes, ...
    html: str | None = None        # the HTML report written (html_out), else None

    @property
    def refines(self) -> bool:
        return self.verdict == "refines"


@dataclasses.dataclass
class VerifyResult(CheckResult):
    target: str = ""
    ranks: int = 0
    layers: int | None = None
    out_dir: str | None = None     # graphs, *.params.json, check.rel, report.json (None: removed)
    spec: str | None = None
    impls: list = dataclasses.field(default_factory=list)


def _shape(s):
    return "[" + ", ".join(map(str, s)) + "]" if s is not None else "?"


# ---------------------------------------------------------------- targets

@dataclasses.dataclass
class Target:
    text: str
    family: str | None = None      # hf:FAMILY, megatron:gpt or torchtitan:llama3
    framework: str = "hf"          # hf, megatron, torchtitan (with family)
    module: str | None = None      # MODULE:FUNCTION
    build: str | None = None


def parse_target(text: str) -> Target:
    if text.startswith("hf:"):
        family = text[3:]
        if family not in hf.FAMILIES:
            raise VerifyError(f"unknown model family {family!r} in {text!r} (known: "
                              f"{', '.join('hf:' + f for f in hf.FAMILIES)})")
        return Target(text, family=family)
    if text.startswith("megatron:"):
        if text != "megatron:gpt":
            raise VerifyError(f"unknown Megatron model {text[9:]!r} in {text!r} (known: megatron:gpt)")
        return Target(text, family="gpt", framework="megatron")
    if text.startswith("torchtitan:"):
        if text != "torchtitan:llama3":
            raise VerifyError(f"unknown torchtitan model {text[11:]!r} in {text!r} (known: torchtitan:llama3)")
        return Target(text, family="llama3", framework="torchtitan")
    module, sep, function = text.partition(":")
    if not sep or not module or not function or not all(p.isidentifier() for p in module.split(".")) \
            or not function.isidentifier():
        raise VerifyError(f"target {text!r} is neither hf:FAMILY ({', '.join(hf.FAMILIES)}), megatron:gpt, "
                          f"torchtitan:llama3 nor MODULE:FUNCTION")
    return Target(text, module=module, build=function)


# The versions the capture was written against: how a DTensor becomes graph placeholders, and the TP
# plans' code, change between releases. Others are refused (TANGLE_ALLOW_UNTESTED_VERSIONS=1 tries anyway).
TESTED_VERSIONS = {"torch": "2.13", "transformers": "5.23"}


def _findable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package is missing
        return False


def _need(module: str, why: str):
    if not _findable(module):
        raise VerifyError(f"{why} needs the Python package {module!r}, which is not installed "
                          f"(scripts/install-deps.sh installs torch==2.13.0, transformers==5.23.0, "
                          f"megatron-core==0.16.1 and torchtitan==0.3.0 with what it imports)")
    tested = TESTED_VERSIONS.get(module)
    if tested is None or os.environ.get("TANGLE_ALLOW_UNTESTED_VERSIONS"):
        return
    from importlib.metadata import PackageNotFoundError, version
    try:
        have = version(module)
    except PackageNotFoundError:
        return  # importable but not installed as a distribution (a source checkout): nothing to compare
    if have.split("+")[0].split(".")[:2] != tested.split("."):
        raise VerifyError(f"{why} needs {module} {tested}.x, found {have} (scripts/install-deps.sh installs the "
                          f"tested version; TANGLE_ALLOW_UNTESTED_VERSIONS=1 tries this one anyway)")


def _import(module: str):
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # like `python -m`: the current folder's modules are importable
    try:
        return importlib.import_module(module)
    except Exception as e:  # noqa: BLE001 -- reported as bad input
        message = str(e).strip().splitlines()[0] if str(e).strip() else ""
        raise VerifyError(f"cannot import module {module!r}: {type(e).__name__}: {message}") from None


def _function(ref: str, what: str):
    module, sep, name = ref.partition(":")
    if not sep or not name:
        raise VerifyError(f"{what} must be MODULE:FUNCTION, got {ref!r}")
    fn = getattr(_import(module), name, None)
    if not callable(fn):
        raise VerifyError(f"module {module!r} has no function {name!r} ({what} {ref})")
    return module, name, fn


# ---------------------------------------------------------------- relation for user code

def _node_names(graph_path) -> set:
    names = set()
    with open(graph_path) as f:
        for line in f:
            m = re.match(r"\s+([A-Za-z_]\w*)(?::| =)", line)
            if m:
                names.add(m.group(1))
    return names


def _user_relation(body: str, ranks: int, spec_params: dict, rank_params: list, spec_nodes: set,
                   rank_nodes: list, options: dict) -> str:
    """check.rel for a user target: our spec/impl header, the body with argument names replaced."""
    def by_arg(params):
        names = {p["fqn"]: p["name"] for p in params.get("placeholders", []) if p.get("fqn")}
        outputs = [o["name"] for o in params.get("outputs", [])]
        for k, o in enumerate(outputs):  # output0, output1, ...; `output` for the first
            names.setdefault(f"output{k}", o)
        if outputs:
            names.setdefault("output", outputs[0])
        return names

    spec_args = by_arg(spec_params)
    rank_args = [by_arg(p) for p in rank_params]

    def replace(m):
        owner, name = m.group(1), m.group(2)
        if owner == "S":
            if name in spec_args and name not in spec_nodes:
                return f"S.{spec_args[name]}"
            return m.group(0)
        if owner == "D*":
            if all(name in a for a in rank_args) and not any(name in n for n in rank_nodes):
                placeholders = {a[name] for a in rank_args}
                if len(placeholders) != 1:
                    raise VerifyError(f"argument {name!r} is a different placeholder on each rank "
                                      f"({', '.join(a[name] for a in rank_args)}): name it D0./D1./... in the relation")
                return f"D*.{placeholders.pop()}"
            return m.group(0)
        r = int(owner[1:])
        if r < ranks and name in rank_args[r] and name not in rank_nodes[r]:
            return f"{owner}.{rank_args[r][name]}"
        return m.group(0)

    lines = ["# written by tangle verify", "spec spec.py", f"impl impl.r{{rank}}.py ranks {ranks}"]
    lines += [f"option {k} = {v}" for k, v in options.items()]
    for line in body.splitlines():
        code = line.split("#", 1)[0]
        if re.match(r"\s*(spec|impl)\b", code):
            lines.append(f"# (replaced) {line}")
            continue
        comment = line[len(code):]
        lines.append(re.sub(r"(?<![\w.])(S|D\*|D\d+)\.([A-Za-z_]\w*)", replace, code) + comment)
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- presenting a check

def _load_params(graph_path) -> dict | None:
    p = Path(graph_path)
    path = p.with_name(p.name[:-len(p.suffix)] + ".params.json") if p.suffix else Path(str(p) + ".params.json")
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _relation_lines(relation_path) -> dict:
    """Spec tensor -> the first relation statement that defines it (for user targets)."""
    out = {}
    try:
        rel = relfile.read_relfile(relation_path)
    except (OSError, ValueError):
        return out
    for st in rel.statements:
        if st.keyword.startswith("S.") and "=" in st.text:
            out.setdefault(st.keyword, " ".join(st.text.split()))
    return out


def parameters_named(names, spec_graph, impl_graphs, relation_path) -> list:
    """Parameter records for the placeholders among `names` ("S.arg7_1", "D0.arg12_1"), from the
    *.params.json maps written beside the graphs (names without a map entry are left out)."""
    spec_map = _load_params(spec_graph) if spec_graph else None
    rank_maps = [_load_params(g) for g in impl_graphs]
    rank_placement = {}
    for m in rank_maps[:1]:
        for ph in (m or {}).get("placeholders", []):
            if ph.get("fqn") and ph.get("kind") in ("input", "parameter", "buffer") and "placement" in ph:
                rank_placement[ph["fqn"]] = ph["placement"]
    relations = _relation_lines(relation_path)
    out = []
    for name in names:
        owner, _, local = name.partition(".")
        pmap = spec_map if owner == "S" else (rank_maps[int(owner[1:])] if int(owner[1:]) < len(rank_maps) else None)
        entry = next((ph for ph in (pmap or {}).get("placeholders", []) if ph.get("name") == local), None)
        if entry is None:  # a training step's gradient output: the parameter it belongs to
            grad = next((o for o in (pmap or {}).get("outputs", []) if o.get("name") == local and o.get("fqn")), None)
            if grad is not None:
                out.append(Parameter(name=name, fqn=grad["fqn"], kind=grad.get("what"), placement=grad.get("layout"),
                                     shape=grad.get("shape")))
            continue
        placement = rank_placement.get(entry.get("fqn")) if owner == "S" else entry.get("placement")
        if entry.get("kind") == "opaque":
            placement = None
        out.append(Parameter(name=name, fqn=entry.get("fqn"), kind=entry.get("kind"), placement=placement,
                             shape=entry.get("global_shape"), local_shape=entry.get("local_shape"),
                             relation=relations.get(name) if owner == "S" else None))
    return out


def _names_in(text: str, extra=()) -> list:
    seen = []
    for m in NAME.finditer(text):
        if m.group(0) not in seen:
            seen.append(m.group(0))
    for n in extra:
        if n not in seen:
            seen.append(n)
    return seen


def _failure(j: dict, params: list) -> Failure | None:
    f = j.get("failure")
    if not f:
        return None
    src = (f.get("source") or "").strip()
    m = SOURCE.match(src)
    reads = [r["tensor"] for r in f.get("inputs_read", [])]
    named = set(_names_in(json.dumps(f), reads))
    return Failure(operator=f["operator"], op=f["op"], location=f["location"], source=src,
                   source_file=m.group("file") if m else None, source_line=int(m.group("line")) if m else None,
                   code=m.group("code").strip() if m else None, reason=f.get("reason", ""),
                   input_relations={r["tensor"]: r["expressions"] for r in f.get("input_relations", [])},
                   inputs_read=reads, input_sources=f.get("input_sources", []), nearby_impl=f.get("nearby_impl", []),
                   parameters=[p for p in params if p.name in named])


def present(checker_text: str, j: dict, params: list) -> str:
    """The checker's report followed by the parameters it names and the failing operator's source."""
    extra = []
    if params:
        extra.append("parameters involved (placeholders named above):")
        extra += [f"  {p}" for p in params]
    f = j.get("failure")
    if f and f.get("source"):
        m = SOURCE.match(f["source"].strip())
        if m:
            extra.append(f"model source of {f['operator']}: {m.group('file')}:{m.group('line')} in "
                         f"{m.group('function')}: {m.group('code').strip()}")
        else:
            extra.append(f"model source of {f['operator']}: {f['source'].strip()}")
    text = checker_text if checker_text.endswith("\n") or not checker_text else checker_text + "\n"
    return text + ("\n".join(extra) + "\n" if extra else "")


def _run_checker(relation_path, json_path, tangle=None, extra_args=(), log=None):
    try:
        exe = binary.find_binary(tangle, required=True)
    except FileNotFoundError as e:
        raise VerifyError(str(e)) from None
    cmd = [str(exe), "check", str(relation_path), "--json", str(json_path), *extra_args]
    try:
        return progress.run_checker(cmd, log)
    finally:
        if log is not None and hasattr(log, "clear"):
            log.clear()


def _check(relation_path, json_path, tangle=None, extra_args=(), result_cls=CheckResult, html_out=None, log=None,
           **extra) -> CheckResult:
    if html_out:
        extra_args = [*extra_args, "--html", str(html_out)]
    proc = _run_checker(relation_path, json_path, tangle, extra_args, log)
    if proc.returncode == BAD_INPUT:
        lines = [line for line in proc.stderr.splitlines() if line.strip()]
        raise VerifyError(lines[-1] if lines else f"tangle check {relation_path}: bad input (exit code 2)")
    try:
        with open(json_path) as f:
            j = json.load(f)
    except (OSError, ValueError):
        raise RuntimeError(f"tangle check {relation_path} exited with {proc.returncode} and wrote no JSON report: "
                           f"{proc.stderr.strip()}") from None
    names = _names_in(proc.stdout, [r["tensor"] for r in (j.get("failure") or {}).get("inputs_read", [])])
    params = parameters_named(names, j.get("spec"), j.get("impl") or [], relation_path)
    j["parameters_involved"] = [dataclasses.asdict(p) for p in params]
    return result_cls(verdict=j["verdict"], exit_code=proc.returncode, relation=str(relation_path),
                      output_relation=[(o["tensor"], o["expression"]) for o in j.get("output_relation", [])],
                      failure=_failure(j, params), expectations=j.get("expectations", []), parameters=params,
                      report=present(proc.stdout, j, params), checker_report=proc.stdout, json=j,
                      stats=j.get("stats", {}), html=str(html_out) if html_out else None, **extra)


def check(relation_path, tangle=None, json_out=None, extra_args=(), html_out=None, log=None) -> CheckResult:
    """Runs `tangle check RELATION --json` and returns the parsed result. Placeholders named in the
    report are looked up in the *.params.json files beside the graphs, when there are any.
    `html_out`: also write the HTML report there. `log`: a tangle.progress.Progress shows the checker's
    progress line on a terminal (default: none)."""
    if not os.path.isfile(relation_path):
        raise VerifyError(f"{relation_path}: no such relation file")
    with tempfile.TemporaryDirectory(prefix="tangle-check-") as tmp:
        result = _check(relation_path, os.path.join(tmp, "report.json"), tangle, extra_args, html_out=html_out,
                        log=log)
    if json_out:
        _write_json(json_out, result.json)
    return result


def _write_json(path, j):
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(j, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


# ---------------------------------------------------------------- verify

def _stderr(msg):
    print(msg, file=sys.stderr, flush=True)


def _parse_options(options) -> dict:
    if isinstance(options, dict):
        return dict(options)
    try:
        return hf.parse_options(options)
    except ValueError as e:
        raise VerifyError(str(e)) from None


def _check_fqns(spec_params_path, impl_params_paths):
    """Spec and ranks must hold the same inputs, parameters and buffers (by FQN)."""
    def fqns(path):
        with open(path) as f:
            p = json.load(f)
        return {ph["fqn"] for ph in p["placeholders"] if ph["kind"] in ("input", "parameter", "buffer") and ph["fqn"]}

    spec = fqns(spec_params_path)
    for r, path in enumerate(impl_params_paths):
        mine = fqns(path)
        if spec - mine:
            raise VerifyError(f"rank {r} has no parameter named {sorted(spec - mine)[0]!r} of the spec "
                              f"({len(spec - mine)} spec name(s) missing): spec and implementation parameter names "
                              f"must match")
        if mine - spec:
            raise VerifyError(f"rank {r} has a parameter {sorted(mine - spec)[0]!r} that the spec does not have: "
                              f"spec and implementation parameter names must match")


def _capture(target: Target, ranks: int, layers, workdir: str, spec_ref, relation_file, attn, options, log,
             plan=None, shape="tiny", setup=None, backward=False, sp=False, backend=None, fake=False):
    """Captures into workdir and writes workdir/check.rel. Returns (spec, impls, user_relation), where
    user_relation is (where the relation text came from, lines added above it) for user targets."""
    from . import capture
    try:
        if target.framework == "megatron":
            out = megatron.capture_megatron(ranks, layers, workdir, setup, options=options or None, log=log,
                                            backward=backward, shape=shape, fake=fake or None)
            _check_fqns(out.spec_params, out.impl_params)
            return out.spec, out.impls, None
        if target.framework == "torchtitan":
            from . import titan
            out = titan.capture_titan(ranks, workdir, sp=sp, backend=backend or "spmd_types", layers=layers,
                                      options=options or None, log=log, backward=backward)
            _check_fqns(out.spec_params, out.impl_params)
            return out.spec, out.impls, None
        if target.family:
            out = hf.capture_hf(target.family, ranks, layers, workdir, attn, options or None, log=log, plan=plan,
                                shape=shape, backward=backward)
            _check_fqns(out.spec_params, out.impl_params)
            return out.spec, out.impls, None
        # user code: import first, so a missing module or function is one line before any process starts
        _, _, build = _function(f"{target.module}:{target.build}", "the target")
        spec_module, spec_name, _ = _function(spec_ref or f"{target.module}:spec", "--spec")
        if relation_file:
            try:
                body = Path(relation_file).read_text()
            except OSError as e:
                raise VerifyError(f"cannot read the relation file {relation_file}: {e.strerror}") from None
        else:
            rel_fn = getattr(_import(target.module), "relation", None)
            if not callable(rel_fn):
                raise VerifyError(f"no relation for {target.text}: pass --relation FILE or define "
                                  f"relation(world_size) -> str in {target.module}")
            try:
                body = rel_fn(ranks)
            except Exception as e:  # noqa: BLE001 -- user code
                raise VerifyError(f"{target.module}.relation({ranks}) raised {type(e).__name__}: {e}") from None
            if not isinstance(body, str):
                raise VerifyError(f"{target.module}.relation({ranks}) must return the relation text (a str)")
        spec = os.path.join(workdir, "spec.py")
        t0 = time.time()
        progress.status(log, "capturing the spec ...")
        capture.capture_spec((spec_module, spec_name), spec, os.path.join(workdir, "spec.params.json"))
        log(f"spec: captured spec.py in {time.time() - t0:.1f} s")
        impls = capture.capture_ranks((target.module, target.build), ranks, workdir, params=True, log=log)
        spec_params = _load_params(spec) or {}
        rank_params = [_load_params(p) or {} for p in impls]
        text = _user_relation(body, ranks, spec_params, rank_params, _node_names(spec),
                              [_node_names(p) for p in impls], options)
        Path(workdir, "check.rel").write_text(text)
        log("wrote check.rel")
        origin = relation_file or f"{target.module}.relation({ranks})"
        return spec, impls, (origin, 3 + len(options))
    except capture.CaptureError as e:
        raise VerifyError(str(e)) from None
    except ValueError as e:  # hf.write_relation and capture_hf refuse what they cannot relate
        if isinstance(e, VerifyError):
            raise
        raise VerifyError(str(e).splitlines()[0] if str(e) else type(e).__name__) from None


def verify(target: str, tp: int = 2, layers: int | None = None, out=None, relation=None, spec=None,
           keep: bool = False, json_out=None, attn: str = "sdpa", options=None, tangle=None,
           log=None, plan=None, shape: str = "tiny", setup=None, backward: bool = False, sp: bool = False,
           backend: str | None = None, html_out=None, jobs: int = 1, fake: bool = False) -> VerifyResult:
    """Captures `target` (hf:llama, hf:qwen2, megatron:gpt, torchtitan:llama3, or MODULE:FUNCTION) with `tp`
    ranks, writes the relation, runs `tangle check` and returns the parsed result. `plan`: overrides of an hf: model's TP plan
    ({module pattern: style} or ["PATTERN=STYLE", ...]). `shape`: "tiny" (random weights) or a released
    model's full shape from tangle.hf.SHAPES, captured without weights. `setup` (megatron:gpt): a module
    whose setup() runs first in each capture process. `backward` (hf:, megatron:): one training step (the
    loss and every parameter gradient) instead of the forward. `out`: keep the files in that folder (else a
    temporary folder, removed unless `keep`). `relation`/`spec`: for user targets. Bad input raises
    VerifyError; nothing is left in `out` then. `log`: progress lines (default: stderr). `backward`: an hf:
    target's training step (the loss and every parameter gradient, tangle.hf_train), not its forward.
    `sp`, `backend` (torchtitan:llama3): sequence parallel; torchtitan's spmd backend (spmd_types, its
    default, or partial_dtensor). `html_out`: also write the HTML report there. `jobs`: threads of the check
    (`tangle check --jobs`; the same report for any value). `fake` (megatron:gpt): capture without weights
    (FakeTensorMode) at any shape; a `shape` other than "tiny" always is (tangle.megatron.SHAPES)."""
    log = log or progress.Progress()
    t = parse_target(target)
    if tp is None or int(tp) < 1 or (t.family and int(tp) < 2):
        raise VerifyError(f"the number of ranks must be at least {2 if t.family else 1}, got {tp}")
    tp = int(tp)
    if t.family:
        if spec or relation:
            raise VerifyError("--spec and --relation are for MODULE:FUNCTION targets; hf:, megatron: and "
                              "torchtitan: targets write their own")
        layers = 1 if layers is None else int(layers)
        if layers < 1:
            raise VerifyError(f"--layers must be at least 1, got {layers}")
    elif layers is not None:
        raise VerifyError("--layers applies to hf:, megatron: and torchtitan: targets only")
    if t.family and t.framework == "hf":
        try:
            plan = plan if isinstance(plan, dict) else hf.parse_plan(plan)
        except ValueError as e:
            raise VerifyError(str(e)) from None
        if shape not in hf.SHAPES:
            raise VerifyError(f"unknown --shape {shape!r} (known: {', '.join(hf.SHAPES)})")
    elif t.framework == "megatron" and not plan:
        if shape not in megatron.SHAPES:
            raise VerifyError(f"unknown --shape {shape!r} for megatron:gpt (known: {', '.join(megatron.SHAPES)})")
    elif plan or shape != "tiny":
        raise VerifyError(f"{'--plan' if plan else '--shape'} applies to hf: targets only"
                          + ("" if plan else " and megatron:gpt"))
    if fake and t.framework != "megatron":
        raise VerifyError("--fake applies to megatron: targets only (hf: captures without weights at a --shape)")
    if setup and t.framework != "megatron":
        raise VerifyError("--setup applies to megatron: targets only")
    if (sp or backend) and t.framework != "torchtitan":
        raise VerifyError(f"{'--sp' if sp else '--backend'} applies to torchtitan: targets only")
    if backend is not None and backend not in ("spmd_types", "partial_dtensor"):
        raise VerifyError(f"unknown --backend {backend!r} (spmd_types, partial_dtensor)")
    if backward and not (t.family and t.framework in ("hf", "torchtitan", "megatron")):
        raise VerifyError("--backward applies to hf:, megatron: and torchtitan: targets only")
    if relation and not os.path.isfile(relation):
        raise VerifyError(f"{relation}: no such relation file")
    _need("torch", "capturing graphs")
    if t.framework == "megatron":
        _need("megatron.core", t.text)
        if setup:
            if "" not in sys.path and os.getcwd() not in sys.path:
                sys.path.insert(0, os.getcwd())  # like `python -m`; spawned capture processes inherit sys.path
            if not _findable(setup):
                raise VerifyError(f"--setup module {setup!r} is not importable (put its folder on PYTHONPATH)")
    elif t.framework == "torchtitan":
        for module in ("torchtitan", "spmd_types", "tyro", "triton"):
            _need(module, t.text)
    elif t.family:
        _need("transformers", f"hf:{t.family}")
    try:
        binary.find_binary(tangle, required=True)
    except FileNotFoundError as e:
        raise VerifyError(str(e)) from None
    options = _parse_options(options)
    out = os.path.abspath(out) if out else None
    if out and os.path.exists(out) and not os.path.isdir(out):
        raise VerifyError(f"--out {out} exists and is not a folder")
    parent = os.path.dirname(out) if out else None
    if parent:
        os.makedirs(parent, exist_ok=True)
    workdir = tempfile.mkdtemp(prefix=".tangle-verify-" if out else "tangle-verify-", dir=parent)
    final = workdir
    try:
        spec_path, impls, user_relation = _capture(t, tp, layers, workdir, spec, relation, attn, options, log,
                                                   plan, shape, setup, backward, sp=sp, backend=backend, fake=fake)
        if out:  # move the finished set into place; files of other names already there are kept
            os.makedirs(out, exist_ok=True)
            for name in os.listdir(workdir):
                os.replace(os.path.join(workdir, name), os.path.join(out, name))
            os.rmdir(workdir)
            final = out
        rel = os.path.join(final, "check.rel")
        log(f"checking {rel}")
        progress.status(log, "checking ...")
        try:
            result = _check(rel, os.path.join(final, "report.json"), tangle, result_cls=VerifyResult,
                            extra_args=["--jobs", str(int(jobs))] if int(jobs) > 1 else (),
                            html_out=html_out, log=log,
                            target=target, ranks=tp, layers=layers, out_dir=final if (out or keep) else None,
                            spec=os.path.join(final, "spec.py"),
                            impls=[os.path.join(final, os.path.basename(p)) for p in impls])
        except VerifyError as e:  # the checker refused check.rel: point at the user's relation when it is theirs
            m = re.match(re.escape(rel) + r":(\d+): (?:error: )?(.*)$", str(e))
            if m and user_relation and int(m.group(1)) > user_relation[1]:
                raise VerifyError(f"{user_relation[0]}:{int(m.group(1)) - user_relation[1]}: {m.group(2)}") from None
            if m:
                raise VerifyError(f"check.rel:{m.group(1)}: {m.group(2)}" +
                                  ("" if out or keep else " (--keep to inspect the files)")) from None
            raise
        result.json["verify"] = dict(target=target, ranks=tp, layers=layers, out_dir=result.out_dir,
                                     backward=bool(backward))
        if out or keep:
            _write_json(os.path.join(final, "report.json"), result.json)
        if json_out:
            _write_json(json_out, result.json)
        return result
    finally:
        if not out and not keep:
            shutil.rmtree(workdir, ignore_errors=True)
        elif out and final != out:  # failed before the move: leave nothing behind
            shutil.rmtree(workdir, ignore_errors=True)


# ---------------------------------------------------------------- command line

class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit code 2 (see main)
        raise VerifyError(message)


def main(argv=None) -> int:
    ap = _Parser(
        prog="tangle verify",
        description="Capture a model and its tensor-parallel ranks, write the relation, check the refinement.",
        epilog="Targets: hf:llama, hf:qwen2 (HF transformers, tiny random config, transformers' TP plan), "
               "megatron:gpt (Megatron-core GPTModel, tiny random config; --setup for its CPU patches), "
               "torchtitan:llama3 (torchtitan's Llama-3, tiny config, its own parallelize; --sp, --backend), or "
               "MODULE:FUNCTION with FUNCTION(rank, world_size) -> (fn, args), a spec() -> (fn, args) "
               "(--spec to name another) and a relation (--relation FILE, or relation(world_size) -> str in the "
               "module). Exit codes: 0 refines, 1 violation, 2 bad input, 3 inconclusive.")
    ap.add_argument("target", help="hf:FAMILY, megatron:gpt, torchtitan:llama3 or MODULE:FUNCTION")
    ap.add_argument("--tp", "--ranks", dest="ranks", type=int, default=2, help="number of ranks (default 2)")
    ap.add_argument("--layers", type=int, default=None, help="decoder layers of an hf:/megatron: model (default 1)")
    ap.add_argument("--setup", metavar="MODULE",
                    help="megatron: a module whose setup() runs first in each capture process (e.g. CPU patches)")
    ap.add_argument("--out", help="write graphs, placeholder maps, check.rel and report.json here "
                                  "(default: a temporary folder, removed unless --keep)")
    ap.add_argument("--json", dest="json_out", help="also write the JSON report (with parameters_involved) here")
    ap.add_argument("--html", dest="html_out", help="also write the report as one self-contained HTML page here")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder and print its path")
    ap.add_argument("--spec", help="MODULE:FUNCTION returning the spec's (fn, args) (user targets; default MODULE:spec)")
    ap.add_argument("--relation", help="relation file for a user target (default: the module's relation(world_size))")
    ap.add_argument("--attn", default="sdpa", help="attn_implementation of an hf: model (sdpa, the default, or eager)")
    ap.add_argument("--backward", action="store_true",
                    help="hf:, megatron: and torchtitan: targets: verify one training step (the loss and every parameter "
                         "gradient)")
    ap.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                    help="an `option KEY = VALUE` line for check.rel (repeatable)")
    ap.add_argument("--shape", default="tiny",
                    help="an hf: model's dimensions: tiny (random weights, default), or a released model's full "
                         "shape (llama3-8b, llama3-70b, llama3-405b), captured without weights; megatron:gpt: "
                         "gpt3-6.7b, gpt3-175b")
    ap.add_argument("--fake", action="store_true",
                    help="megatron: capture without weights (FakeTensorMode) at any shape")
    ap.add_argument("--plan", action="append", default=[], metavar="PATTERN=STYLE",
                    help="override a rule of an hf: model's TP plan (transformers parallel style), e.g. "
                         "model.layers.*.self_attn.o_proj=colwise (repeatable)")
    ap.add_argument("--sp", action="store_true", help="sequence parallel (torchtitan: targets)")
    ap.add_argument("--backend", default=None, help="torchtitan's spmd backend: spmd_types (default) or "
                                                    "partial_dtensor (torchtitan: targets)")
    ap.add_argument("--tangle", help="the tangle binary (default: $TANGLE_BIN, else build/bin/tangle)")
    ap.add_argument("--jobs", "-j", type=int, default=1, help="threads of the check (tangle check --jobs)")
    ap.add_argument("--quiet", "-q", action="store_true",
                    help="no progress on stderr (log lines; on a terminal, a status line redrawn in place)")
    log = None
    try:
        a = ap.parse_args(argv)
        log = progress.Progress(quiet=a.quiet)
        r = verify(a.target, tp=a.ranks, layers=a.layers, out=a.out, relation=a.relation, spec=a.spec,
                   keep=a.keep, json_out=a.json_out, attn=a.attn, options=a.option, tangle=a.tangle,
                   log=log, plan=a.plan, shape=a.shape,
                   setup=a.setup, backward=a.backward, sp=a.sp, backend=a.backend, html_out=a.html_out,
                   jobs=a.jobs, fake=a.fake)
    except VerifyError as e:
        if log:
            log.clear()
        print(f"tangle verify: error: {e}", file=sys.stderr)
        return BAD_INPUT
    except KeyboardInterrupt:
        if log:
            log.clear()
        print("tangle verify: interrupted", file=sys.stderr)
        return 130
    sys.stdout.write(r.report)
    if r.out_dir and not a.quiet:
        _stderr(f"files: {r.out_dir}")
    return r.exit_code


class _CallableModule(types.ModuleType):
    """`import tangle.verify` rebinds the package attribute `tangle.verify` to this module; calling
    it still runs verify()."""

    def __call__(self, *args, **kwargs):
        return verify(*args, **kwargs)


if __name__ != "__main__":
    sys.modules[__name__].__class__ = _CallableModule

if __name__ == "__main__":
    sys.exit(main())
