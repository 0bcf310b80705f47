"""Trace a model step to ATen with aot_autograd directly, without Dynamo's bytecode tracer.

``torch.compile(fn, backend=b, fullgraph=True)`` first symbolically interprets the Python bytecode
of `fn` (Dynamo), then hands the resulting FX graph to `b` (aot_autograd). At full size the
bytecode interpretation is most of the capture time and it grows with every layer. Here `fn` runs
as ordinary Python instead, with the model's parameters and buffers swapped for the tensors
aot_autograd traces (``_reparametrize_module``, what ``torch.func.functional_call`` does); the same
aot_autograd backend then records the ATen program the dispatcher sees. It is still the real
program: every ATen call the model makes lands in the graph, collectives included (the fake
process group runs them as functional collectives when traced).

The backend is called as Dynamo would call it: ``backend(module, example_inputs)`` with the
example inputs the step's own tensors followed by the model's parameters and buffers (the very
objects, so callers can map them back to names by ``id``), and the returned callable runs the step.
"""
from __future__ import annotations

import contextlib
import inspect
import os

# "dynamo" (torch.compile) or "eager" (this module); read at every capture so a test can switch it.
# Unset: eager for weightless (FakeTensorMode) models only, see frontend().
ENV = "TANGLE_CAPTURE_FRONTEND"


def frontend(model=None) -> str:
    """$TANGLE_CAPTURE_FRONTEND, else "eager" for a model without weights (FakeTensorMode: the full-size
    captures) and "dynamo" otherwise: the eager frontend does not yet localize everything Dynamo does (the
    source line of a backward node, the model line of a capture error), which the tiny captures' tests use."""
    value = os.environ.get(ENV)
    if value is None:
        from torch._subclasses.fake_tensor import is_fake
        weightless = model is not None and any(is_fake(p) for p in model.parameters())
        return "eager" if weightless else "dynamo"
    if value not in ("dynamo", "eager"):
        raise ValueError(f"{ENV}={value!r}: expected dynamo or eager")
    return value


def compile(fn, backend, model=None):
    """A callable running `fn(*inputs)` through `backend`: torch.compile (Dynamo) or the eager frontend
    below, per frontend(model). `model`: the module whose parameters and buffers `fn` reads (the eager
    frontend lifts them to graph inputs; Dynamo finds them itself)."""
    import torch
    if model is None or frontend(model) == "dynamo":
        torch._dynamo.reset()
        return torch.compile(fn, backend=backend, fullgraph=True)
    return _EagerCompiled(fn, backend, model)


class _EagerCompiled:
    def __init__(self, fn, backend, model):
        self.fn, self.backend, self.model = fn, backend, model
        self.compiled = None

    def __call__(self, *inputs):
        import torch
        import torch.utils._pytree as pytree
        model = self.model
        state = list(model.named_parameters()) + list(model.named_buffers())
        names = [n for n, _ in state]
        fn, n_inputs = self.fn, len(inputs)
        spec = self.__dict__.setdefault("out_spec", [])

        class Step(torch.nn.Module):  # holds no state of its own: everything arrives as an argument
            def forward(self, *flat):
                from torch.nn.utils.stateless import _reparametrize_module
                with _reparametrize_module(model, dict(zip(names, flat[n_inputs:])), tie_weights=True):
                    out = fn(*flat[:n_inputs])
                leaves, tree = pytree.tree_flatten(out)  # aot_autograd wants a flat tuple of outputs
                spec[:] = [tree]
                return tuple(leaves)

        if self.compiled is None:
            # The model takes its torch.compile code paths (transformers skips data-dependent checks
            # then), as in torch.export's non-strict tracing, which sets the same flag.
            with torch.compiler._compile_session_context(), _functional_collectives(), _source_lines():
                self.compiled = self.backend(Step(), [*inputs, *(t for _, t in state)])
        leaves = self.compiled(*inputs, *(t for _, t in state))
        return pytree.tree_unflatten(list(leaves), spec[0])


@contextlib.contextmanager
def _functional_collectives():
    """torch.distributed's in-place collectives (dist.all_reduce, ...) called as the traceable functional
    versions Dynamo rewrites them to (torch's own table, traceable_collective_remaps), so the graph holds
    the same _c10d_functional calls as under torch.compile. A call site holding its own reference to a
    legacy function still traces the c10d op, which tangle refuses as unknown (never a silent pass)."""
    import torch.distributed as dist
    import torch.distributed.distributed_c10d as c10d
    from torch.distributed._functional_collectives import REDUCE_OP_TO_STR, traceable_collective_remaps

    reducing = {dist.all_reduce, getattr(dist, "reduce_scatter_tensor", None),
                getattr(dist, "_reduce_scatter_base", None), getattr(dist, "reduce_scatter_single", None)}
    p2p = {dist.isend, dist.irecv, dist.batch_isend_irecv}

    def remapped(legacy, new):
        # What Dynamo's CollectiveFunctionRewriteVariable does: bind to the legacy signature, refuse
        # async_op=True, pass a reduce op as its string name.
        signature = inspect.signature(legacy)

        def call(*args, **kwargs):
            if legacy in p2p:
                raise RuntimeError(f"{legacy.__name__}: point-to-point calls are not traced (Dynamo's default)")
            bound = dict(signature.bind(*args, **kwargs).arguments)
            if bound.get("async_op"):
                raise RuntimeError(f"{legacy.__name__}(async_op=True) cannot be traced (torch.compile refuses it too)")
            if legacy in reducing:
                op = bound.get("op", signature.parameters["op"].default)
                if op not in REDUCE_OP_TO_STR:
                    raise ValueError(f"{legacy.__name__}: unsupported reduce op {op}")
                bound["op"] = REDUCE_OP_TO_STR[op]
            return new(**bound)
        return call

    saved = []
    for legacy, new in traceable_collective_remaps.items():
        for module in (dist, c10d):
            if getattr(module, legacy.__name__, None) is legacy:
                saved.append((module, legacy.__name__, legacy))
                setattr(module, legacy.__name__, remapped(legacy, new))
    try:
        yield
    finally:
        for module, name, legacy in saved:
            setattr(module, name, legacy)


@contextlib.contextmanager
def _source_lines():
    """Record each node's Python stack, innermost frame outside torch (as Dynamo's source lines), so the
    printed graph carries the `# File: ..., code: ...` lines tangle's reports quote. aot_autograd's make_fx
    call records none by default; it is asked to, with torch's own frames (and this module's) left out."""
    import functools
    import traceback
    import torch
    from torch._functorch._aot_autograd import graph_capture
    from torch.fx.experimental.proxy_tensor import PythonKeyTracer, make_fx
    torch_dir = os.path.dirname(torch.__file__) + os.sep

    def user_frames(self, summary):
        return traceback.StackSummary.from_list(
            [f for f in summary if not f.filename.startswith(torch_dir) and f.filename != __file__])

    saved = graph_capture.make_fx
    graph_capture.make_fx = functools.partial(make_fx, record_stack_traces=True)
    PythonKeyTracer._filter_traceback_frames = user_frames
    try:
        yield
    finally:
        graph_capture.make_fx = saved
        del PythonKeyTracer._filter_traceback_frames  # the base class's again
