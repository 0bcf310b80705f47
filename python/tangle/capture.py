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
import argparse
import importlib
import multiprocessing
import os
import sys


def _writer(path):
    def compile_fw(gm, example_inputs):
        text = gm.print_readable(print_output=False)
        with open(path, "w") as f:
            f.write(text)
        return gm.forward

    return compile_fw


def capture(fn, args, path, dynamic=None):
    """Traces fn(*args) to ATen ops and writes its readable FX graph to path.

    dynamic: {argument index: [dims]} to keep symbolic (None: all static)."""
    import torch
    from torch._dynamo.backends.common import aot_autograd

    torch._dynamo.reset()
    for index, dims in (dynamic or {}).items():
        for d in dims:
            torch._dynamo.mark_dynamic(args[index], d)
    backend = aot_autograd(fw_compiler=_writer(path))
    compiled = torch.compile(fn, backend=backend, fullgraph=True)
    with torch.no_grad():
        compiled(*args)
    if not os.path.exists(path):
        raise RuntimeError(f"nothing was captured for {path}")
    return path


def _capture_rank(build_ref, rank, world_size, path):
    import torch.distributed as dist
    from torch.testing._internal.distributed.fake_pg import FakeStore

    dist.init_process_group("fake", store=FakeStore(), rank=rank, world_size=world_size)
    try:
        module, name = build_ref
        build = getattr(importlib.import_module(module), name)
        fn, args, *dynamic = build(rank, world_size)
        capture(fn, args, path, dynamic[0] if dynamic else None)
    finally:
        dist.destroy_process_group()


def capture_ranks(build_ref, world_size, out_dir, stem="impl"):
    """Writes out_dir/{stem}.r{rank}.py for every rank; build_ref = (module, function)."""
    os.makedirs(out_dir, exist_ok=True)
    paths = []
    ctx = multiprocessing.get_context("spawn")
    for rank in range(world_size):
        path = os.path.join(out_dir, f"{stem}.r{rank}.py")
        p = ctx.Process(target=_capture_rank, args=(build_ref, rank, world_size, path))
        p.start()
        p.join()
        if p.exitcode != 0 or not os.path.exists(path):
            raise RuntimeError(f"capturing rank {rank} failed (exit code {p.exitcode})")
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
