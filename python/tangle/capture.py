"""Capture ATen-level FX graphs for tangle.

tangle reads the text that ``GraphModule.print_readable()`` prints. This module
produces it the way the Entangle artifact did: TorchDynamo traces the program,
AOTAutograd lowers it to ATen ops, and the forward graph is written as text.

* ``capture(fn, args, path)``: one graph (the sequential spec, or one rank).
* ``capture_ranks(build, world_size, out_dir)``: one graph per rank of a
  distributed program. Each rank runs in its own process with a *fake*
  process group (no communication happens; collectives are only traced), so a
  2-, 4- or 8-way implementation is captured on one CPU machine.
  ``build(rank, world_size)`` returns ``(fn, args)`` for that rank, or
  ``(fn, args, dynamic)`` (see below); ``fn``
  should use ``torch.distributed._functional_collectives`` (all_reduce,
  all_gather_tensor, reduce_scatter_tensor), which appear in the graph as
  ``_c10d_functional.*`` calls that tangle lowers to cross-rank expressions.

Dynamic shapes: ``dynamic`` maps an argument index to the dims that stay
symbolic (``{0: [0]}``: dim 0 of the first argument, e.g. the token count),
marked with ``torch._dynamo.mark_dynamic``. The graph then has ``Sym(s0)``
inputs and sizes such as ``f32[s0, 8]``; tangle reasons about them
symbolically (relation files can add ``assume`` facts).

Command line:  python -m tangle.capture MODULE:FUNCTION --ranks N --out DIR
  writes DIR/impl.r{rank}.py for N ranks (FUNCTION is ``build``), or with
  ``--ranks 0`` calls FUNCTION() -> (fn, args) once and writes DIR/spec.py.
"""
from __future__ import annotations

import argparse
import importlib
import json
import multiprocessing
import os
import re
import sys
import time
import traceback

from . import progress


def _writer(path):
    def compile_fw(gm, example_inputs):
        text = gm.print_readable(print_output=False)
        with open(path, "w") as f:
            f.write(text)
        return gm.forward

    return compile_fw


def _source_name(source) -> str | None:
    """A readable name for a Dynamo input source: L['w1'] -> w1, G['b'] -> b,
    L['self']._modules['fc']._parameters['weight'] -> self.fc.weight."""
    if source is None:
        return None
    text = source.name if isinstance(getattr(source, "name", None), str) else str(source.name())
    text = re.sub(r"^[LG]\[['\"]([^'\"]+)['\"]\]", r"\1", text)
    text = re.sub(r"\._(?:modules|parameters|buffers)\[['\"]([^'\"]+)['\"]\]", r".\1", text)
    text = re.sub(r"\[['\"]([^'\"]+)['\"]\]", r".\1", text)
    return text


def capture(fn, args, path, dynamic=None, params_path=None):
    """Traces fn(*args) to ATen ops and writes its readable FX graph to path.

    dynamic: {argument index: [dims]} to keep symbolic (None: all static).
    params_path: also write a placeholder map (JSON): for each graph placeholder, the
    argument (or global, closure variable, attribute) it holds, as Dynamo names its source:
    ``{"placeholders": [{"name": "arg0_1", "kind": "input", "fqn": "w1", "source": "L['w1']",
    "global_shape": [16, 8], "dtype": "float32"}, ...], "outputs": [{"name": "cat"}]}`` (kind ``symint`` for
    a symbolic size)."""
    import torch
    from torch._dynamo.backends.common import aot_autograd

    torch._dynamo.reset()
    # nonzero / boolean indexing: traced with an unbacked size (u0) instead of a graph break
    torch._dynamo.config.capture_dynamic_output_shape_ops = True
    for index, dims in (dynamic or {}).items():
        for d in dims:
            torch._dynamo.mark_dynamic(args[index], d)
    sources = {}

    def fw_compiler(gm, example_inputs):
        _writer(path)(gm, example_inputs)
        if params_path:
            aot = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
            dyn = sources.get("inputs", [])
            entries = []
            if len(aot) == len(dyn):  # plain tensors and sizes: one AOT placeholder per Dynamo input
                for name, (src, ex) in zip(aot, dyn):
                    if isinstance(ex, torch.Tensor):
                        entries.append(dict(name=name, kind="input", fqn=_source_name(src),
                                            source=str(getattr(src, "name", src)) if src is not None else None,
                                            global_shape=[str(d) if not isinstance(d, int) else d for d in ex.shape],
                                            dtype=str(ex.dtype).removeprefix("torch.")))
                    else:
                        entries.append(dict(name=name, kind="symint", fqn=_source_name(src)))
            out_node = next(n for n in gm.graph.nodes if n.op == "output")
            outputs = [dict(name=getattr(a, "name", str(a))) for a in out_node.args[0]]
            with open(params_path, "w") as f:
                json.dump(dict(graph=os.path.basename(path), placeholders=entries, outputs=outputs), f, indent=1)
                f.write("\n")
        return gm.forward

    inner = aot_autograd(fw_compiler=fw_compiler)

    def backend(gm, example_inputs):
        phs = [n for n in gm.graph.nodes if n.op == "placeholder"]
        grapharg = [n.meta.get("grapharg") for n in phs]
        sources["inputs"] = [(getattr(g, "source", None), ex) for g, ex in zip(grapharg, example_inputs)]
        return inner(gm, example_inputs)

    compiled = torch.compile(fn, backend=backend, fullgraph=True)
    with torch.no_grad():
        compiled(*args)
    if not os.path.exists(path):
        raise RuntimeError(f"nothing was captured for {path}")
    return path


def _error_path(path):
    return path + ".error"


def _log_path(path):
    return path + ".log"


def one_line(e: BaseException) -> str:
    """What went wrong, in one line: the exception's own first line, or for a Dynamo failure the
    error it wraps (``got RuntimeError('...')``), then the user source line it points at."""
    text = str(e).strip()
    message = text.splitlines()[0] if text else ""
    inner = re.search(r"got (\w+(?:Error|Exception))\((['\"])(.*?)\2\)", text, re.S)
    if inner:
        message = f"{inner.group(1)}: {inner.group(3).strip()}"
    else:
        message = f"{type(e).__name__}: {message}" if message else type(e).__name__
    frames = re.findall(r'File "([^"]+)", line (\d+), in (\S+)', text.split("from user code:", 1)[1]) \
        if "from user code:" in text else []
    model_frames = [f for f in frames if f"{os.sep}torch{os.sep}" not in f[0]] or frames  # not torch.nn's
    if model_frames:  # the innermost two: the model's line and the layer code it called
        message += " (at " + " -> ".join(f"{file}:{line} in {fn}" for file, line, fn in model_frames[-2:]) + ")"
    return message


def _run_reporting(path, work):
    """Runs work() in a capture process; an exception becomes one line in path.error and exit code 3
    (the traceback too with TANGLE_DEBUG=1), so the parent can say what went wrong. The process's own
    stderr (PyTorch's logging) goes to path.log unless TANGLE_DEBUG is set."""
    if not os.environ.get("TANGLE_DEBUG"):
        log = os.open(_log_path(path), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(log, 2)
        os.close(log)
    try:
        work()
    except BaseException as e:  # noqa: BLE001 -- reported to the parent process
        traceback.print_exc()  # into the log (or the terminal with TANGLE_DEBUG=1)
        with open(_error_path(path), "w") as f:
            f.write(one_line(e))
        sys.exit(3)
    try:
        os.remove(_log_path(path))  # nothing to keep when the capture worked
    except OSError:
        pass


def failure_message(path) -> str | None:
    """The one-line error a capture process left for path (and removes it), or None."""
    err = _error_path(path)
    if not os.path.exists(err):
        return None
    with open(err) as f:
        text = f.read().strip()
    os.remove(err)
    if os.path.exists(_log_path(path)):  # the traceback and PyTorch's own messages
        text += " (TANGLE_DEBUG=1 shows the traceback)"
    return text


def _capture_rank(build_ref, rank, world_size, path, params_path=None):
    def work():
        import torch.distributed as dist
        from torch.testing._internal.distributed.fake_pg import FakeStore

        dist.init_process_group("fake", store=FakeStore(), rank=rank, world_size=world_size)
        try:
            module, name = build_ref
            build = getattr(importlib.import_module(module), name)
            fn, args, *dynamic = _unpack(build(rank, world_size), f"{module}:{name}(rank, world_size)")
            capture(fn, args, path, dynamic[0] if dynamic else None, params_path)
        finally:
            dist.destroy_process_group()

    _run_reporting(path, work)


def _capture_spec(spec_ref, path, params_path=None):
    def work():
        module, name = spec_ref
        fn, args, *dynamic = _unpack(getattr(importlib.import_module(module), name)(), f"{module}:{name}()")
        capture(fn, args, path, dynamic[0] if dynamic else None, params_path)

    _run_reporting(path, work)


def _unpack(result, what):
    if not isinstance(result, (tuple, list)) or len(result) not in (2, 3) or not callable(result[0]):
        raise TypeError(f"{what} must return (fn, args) or (fn, args, dynamic), got {type(result).__name__}")
    fn, args, *rest = result
    return (fn, tuple(args), *rest)


class CaptureError(RuntimeError):
    """A capture process failed; the message is one line (what the user code raised)."""


def _run_capture(target, args, path, label):
    p = multiprocessing.get_context("spawn").Process(target=target, args=args)
    p.start()
    p.join()
    message = failure_message(path)
    if p.exitcode != 0 or not os.path.exists(path):
        raise CaptureError(f"capturing {label} failed: {message}" if message
                           else f"capturing {label} failed (exit code {p.exitcode})")


def capture_spec(spec_ref, path, params_path=None):
    """Captures spec_ref = (module, function), function() -> (fn, args), in a spawned process."""
    _run_capture(_capture_spec, (spec_ref, path, params_path), path, "the spec")
    return path


def capture_ranks(build_ref, world_size, out_dir, stem="impl", params=False, log=None):
    """Writes out_dir/{stem}.r{rank}.py for every rank; build_ref = (module, function).
    params: also write out_dir/{stem}.r{rank}.params.json (see capture). log: progress lines."""
    os.makedirs(out_dir, exist_ok=True)
    paths = []
    for rank in range(world_size):
        path = os.path.join(out_dir, f"{stem}.r{rank}.py")
        params_path = os.path.join(out_dir, f"{stem}.r{rank}.params.json") if params else None
        t0 = time.time()
        if log:
            progress.status(log, f"capturing rank {rank}/{world_size} ... ({rank}/{world_size} captured)")
        _run_capture(_capture_rank, (build_ref, rank, world_size, path, params_path), path,
                     f"rank {rank}/{world_size}")
        if log:
            log(f"rank {rank}/{world_size}: captured {os.path.basename(path)} in {time.time() - t0:.1f} s")
        paths.append(path)
    return paths


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m tangle.capture", description=__doc__.split("\n\n")[0])
    ap.add_argument("target", help="MODULE:FUNCTION")
    ap.add_argument("--ranks", type=int, default=0, help="world size; 0 captures the sequential spec")
    ap.add_argument("--out", required=True, help="output folder")
    a = ap.parse_args(argv)
    module, _, name = a.target.partition(":")
    if not name:
        ap.error("target must be MODULE:FUNCTION")
    if a.ranks <= 0:
        fn, args, *dynamic = getattr(importlib.import_module(module), name)()
        print(capture(fn, args, os.path.join(a.out, "spec.py"), dynamic[0] if dynamic else None))
    else:
        for p in capture_ranks((module, name), a.ranks, a.out):
            print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
