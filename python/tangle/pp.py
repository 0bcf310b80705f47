"""Capture pipeline-parallel training steps (torch.distributed.pipelining) for tangle.

A pipeline schedule (ScheduleGPipe, Schedule1F1B) runs eagerly: its stages exchange activations
and gradients with ``isend``/``irecv`` and accumulate ``.grad`` in place, which Dynamo cannot
trace in one graph. ``make_fx`` can: in real mode it runs the schedule's step while recording
every ATen and c10d call, the point-to-point ``c10d.send``/``c10d.recv_`` included. So each rank
runs in its own process with the real ``gloo`` backend (the messages travel for real, the
captured graph holds real peers), runs one warm-up step (the schedule's shape exchange calls
``.item()``, which a trace cannot), clears the grads, and traces the next step. tangle pairs
sends with receives itself (src/lower/p2p.h); this module only records.

``build(rank, world_size)`` (in an importable module) returns a ``RankProgram``; ``spec()``
returns one for the sequential model. The graph's parameters are ``self._param_constantK``
reads; they are named back to FQNs by identity with the module's parameters.
"""
from __future__ import annotations

import dataclasses
import datetime
import importlib
import json
import multiprocessing
import os
import re
import tempfile
import time

from . import capture as _capture


@dataclasses.dataclass
class RankProgram:
    step: object                 # step(*args) -> tuple of tensors (the gradients, in `outputs` order)
    args: tuple
    params: dict                 # FQN (in the full model) -> parameter tensor of this rank
    outputs: list                # FQN of each returned gradient
    inputs: dict = dataclasses.field(default_factory=dict)  # arg name -> (spec arg name, chunk index)
    shards: dict = dataclasses.field(default_factory=dict)  # FQN -> (dim, index, count): a tensor-parallel shard
    replica: int = 0             # ranks of one replica together hold each sharded parameter whole
    buffers: dict = dataclasses.field(default_factory=dict)  # FQN -> buffer (RoPE tables): named like params
    decompose: dict = dataclasses.field(default_factory=dict)  # ATen op -> function make_fx traces it as
    # rewrite(gm) -> {FQN: node name}: edits the traced graph before the grads are cleared (tangle.fsdp
    # writes what the trace hides); the names it returns override the parameters found by identity
    rewrite: object = None
    # warmup(): run once before the trace instead of a whole step (the default); it must leave the
    # program as a step would (e.g. init_schedule: a pipeline schedule's buffers allocated)
    warmup: object = None
    # sizes from data (nonzero, boolean indexing): the args are fake tensors of tensors(data_dependent=True)
    # and the trace runs in their fake mode, so factories in the backward (zeros of an unbacked size) are
    # fake too and each such size is an unbacked symbol of this graph (no warm-up step unless `warmup`)
    data_dependent: bool = False
    # each node's model line in the graph (make_fx's record_stack_traces), so a report names the line of
    # its failing operator; off by default: extracting a stack per operator slows large captures
    stack_traces: bool = False


def _peer_to_global(gm):
    """c10d send/recv_ name their peer by its rank in the group; tangle wants global ranks."""
    import torch.distributed as dist

    for node in gm.graph.nodes:
        if node.op != "call_function" or str(node.target) not in ("c10d.send.default", "c10d.recv_.default"):
            continue
        group_node, peer = node.args[1], node.args[2]
        obj = getattr(gm, group_node.target)
        pg = dist.ProcessGroup.unbox(obj) if hasattr(dist.ProcessGroup, "unbox") else obj
        global_peer = dist.get_global_rank(pg, peer) if pg is not dist.group.WORLD else peer
        if global_peer != peer:
            node.args = (node.args[0], group_node, global_peer, *node.args[3:])


def _flat_outputs(gm):
    out = next(n for n in gm.graph.nodes if n.op == "output")
    import torch.utils._pytree as pytree

    flat, _ = pytree.tree_flatten(out.args[0])
    out.args = (tuple(flat),)


def trace_program(prog: RankProgram, path: str, params_path: str):
    """Warm-up step, then make_fx of the next; writes the graph text and a JSON naming its tensors."""
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx

    import contextlib

    from torch._guards import detect_fake_mode

    mode = detect_fake_mode(prog.args) if prog.data_dependent else None
    if prog.data_dependent and (mode is None or mode.shape_env is None):
        # real tensors would bake this input's counts into the graph as numbers: a check of one routing
        raise ValueError("a data_dependent RankProgram needs fake arguments made in pp.tensors(data_dependent=True) "
                         "(a shapes-only capture: capture_pipeline_fake)")
    with mode or contextlib.nullcontext():
        if prog.warmup is not None:
            prog.warmup()
        elif not mode:  # a whole step would leave its unbacked sizes pending in the trace's shape env
            prog.step(*prog.args)
    for p in prog.params.values():
        p.grad = None
    gm = make_fx(prog.step, decomposition_table=prog.decompose,
                 tracing_mode="fake" if mode else "real", record_stack_traces=prog.stack_traces)(*prog.args)
    # these edit the graph only: print_readable below writes the graph's code, so the module's own
    # code is regenerated (a second of CPU per codegen at ~2000 nodes) only for a rewrite that runs it
    _peer_to_global(gm)
    _flat_outputs(gm)
    if prog.rewrite:
        gm.recompile()
    named = prog.rewrite(gm) if prog.rewrite else {}
    for p in prog.params.values():
        p.grad = None
    by_id = {id(p): fqn for fqn, p in list(prog.params.items()) + list(prog.buffers.items())}
    params = {}
    for node in gm.graph.nodes:
        if node.op == "get_attr" and isinstance(getattr(gm, node.target, None), torch.Tensor):
            fqn = by_id.get(id(getattr(gm, node.target)))
            if fqn and fqn not in params:
                params[fqn] = node.name
    params.update(named)
    placeholders = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
    arg_names = [re.sub(r"_\d+$", "", n) for n in placeholders]
    inputs = {ph: list(prog.inputs[a]) for ph, a in zip(placeholders, arg_names) if a in prog.inputs}
    out_node = next(n for n in gm.graph.nodes if n.op == "output")
    outputs = [getattr(a, "name", None) for a in out_node.args[0]]
    with open(path, "w") as f:
        f.write(gm.print_readable(print_output=False))
    with open(params_path, "w") as f:
        json.dump(dict(params=params, inputs=inputs, outputs=dict(zip(prog.outputs, outputs)),
                       shards={k: list(v) for k, v in prog.shards.items()}, replica=prog.replica), f, indent=1)
        f.write("\n")


def _rank_main(build_ref, rank, world_size, store, path):
    def work():
        import torch.distributed as dist

        dist.init_process_group("gloo", init_method="file://" + store, rank=rank, world_size=world_size,
                                timeout=datetime.timedelta(seconds=120))
        try:
            module, name = build_ref
            prog = getattr(importlib.import_module(module), name)(rank, world_size)
            trace_program(prog, path, path.replace(".py", ".pp.json"))
        finally:
            dist.destroy_process_group()

    _capture._run_reporting(path, work)


def _spec_main(spec_ref, path):
    def work():
        module, name = spec_ref
        trace_program(getattr(importlib.import_module(module), name)(), path, path.replace(".py", ".pp.json"))

    _capture._run_reporting(path, work)


def capture_pipeline(build_ref, spec_ref, world_size, out_dir, timeout=600):
    """Captures out_dir/spec.py and out_dir/impl.r{rank}.py (all ranks at once: they talk over gloo),
    each with a .pp.json; returns the seconds it took."""
    os.makedirs(out_dir, exist_ok=True)
    t0 = time.time()
    ctx = multiprocessing.get_context("spawn")
    store = tempfile.mktemp(prefix="tangle-pp-store-", dir=out_dir)
    paths = [os.path.join(out_dir, f"impl.r{r}.py") for r in range(world_size)]
    spec_path = os.path.join(out_dir, "spec.py")
    procs = [ctx.Process(target=_rank_main, args=(build_ref, r, world_size, store, paths[r]))
             for r in range(world_size)]
    procs.append(ctx.Process(target=_spec_main, args=(spec_ref, spec_path)))
    for p in procs:
        p.start()
    deadline = time.time() + timeout
    for p in procs:
        p.join(max(1.0, deadline - time.time()))
    hung = [p for p in procs if p.is_alive()]
    for p in hung:
        p.kill()
        p.join()
    if os.path.exists(store):
        os.remove(store)
    failures = []
    for label, path, p in [(f"rank {r}/{world_size}", paths[r], procs[r]) for r in range(world_size)] + \
                          [("the spec", spec_path, procs[-1])]:
        message = _capture.failure_message(path)
        if p.exitcode != 0 or not os.path.exists(path):
            why = message or ("timed out (a send or receive without its partner?)" if p in hung
                              else f"exit code {p.exitcode}")
            failures.append(f"capturing {label} failed: {why}")
    if failures:  # a rank's own error rather than its peers' lost connections
        failures.sort(key=lambda f: "Connection closed by peer" in f)
        raise _capture.CaptureError(failures[0])
    return time.time() - t0


def write_relation(out_dir, world_size, name="check.rel", expect=True):
    """The relation of a captured pipeline: each stage parameter is the spec's; the spec's batch is
    the concatenation of the ranks' chunks (data-parallel replicas); outputs are the gradients.
    expect (the default) also states what each rank must end with (an `expect` per gradient it
    returns): the spec's gradient of a replicated parameter, its shard's rows of a sharded one.
    Without it a gradient the ranks never reduced still refines (the spec's is their sum, a clean
    expression), which is true of the outputs together but not what a training step needs."""
    def load(stem):
        with open(os.path.join(out_dir, stem + ".pp.json")) as f:
            return json.load(f)

    spec = load("spec")
    lines = ["# pipeline parallel training step (tangle.pp)", "spec spec.py",
             f"impl impl.r{{rank}}.py ranks {world_size}"]
    chunks, pieces = {}, {}
    for r in range(world_size):
        meta = load(f"impl.r{r}")
        for fqn, node in meta["params"].items():
            if fqn not in spec["params"]:
                raise ValueError(f"rank {r}: parameter {fqn} is not in the spec")
            if fqn in meta.get("shards", {}):
                dim, index, count = meta["shards"][fqn]
                pieces.setdefault((fqn, meta.get("replica", 0), dim, count), {})[index] = f"D{r}.{node}"
            else:
                lines.append(f"S.{spec['params'][fqn]} = D{r}.{node}")
        for ph, (arg, index) in meta["inputs"].items():
            chunks.setdefault(arg, {}).setdefault(index, []).append(f"D{r}.{ph}")
    for (fqn, _, dim, count), by_index in sorted(pieces.items()):
        if sorted(by_index) != list(range(count)):
            raise ValueError(f"the shards of {fqn} are incomplete: {sorted(by_index)} of {count}")
        parts = ", ".join(by_index[i] for i in range(count))
        lines.append(f"S.{spec['params'][fqn]} = concat({parts}, dim={dim})")
    for ph, (arg, _) in spec["inputs"].items():
        by_index = chunks.get(arg, {})
        if not by_index:
            raise ValueError(f"no rank holds the spec input {arg}")
        # every rank holding a chunk (the tensor-parallel ranks of a replica) appears in one relation
        for j in range(max(len(v) for v in by_index.values())):
            parts = [by_index[i][min(j, len(by_index[i]) - 1)] for i in sorted(by_index)]
            lines.append(f"S.{ph} = " + (parts[0] if len(parts) == 1 else f"concat({', '.join(parts)}, dim=0)"))
    if expect:
        lines += _expectations(spec, [load(f"impl.r{r}") for r in range(world_size)])
    path = os.path.join(out_dir, name)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def _expectations(spec, metas):
    lines, pieces = [], {}
    for r, meta in enumerate(metas):
        for fqn, node in meta["outputs"].items():
            if fqn not in spec["outputs"]:
                raise ValueError(f"rank {r}: gradient {fqn} is not in the spec")
            if fqn in meta.get("shards", {}):
                dim, index, count = meta["shards"][fqn]
                pieces.setdefault((fqn, meta.get("replica", 0), dim, count), {})[index] = f"D{r}.{node}"
            else:
                lines.append(f"expect S.{spec['outputs'][fqn]} = D{r}.{node}")
    for (fqn, _, dim, count), by_index in sorted(pieces.items()):
        parts = ", ".join(by_index[i] for i in range(count))
        lines.append(f"expect S.{spec['outputs'][fqn]} = concat({parts}, dim={dim})")
    return lines


# ---- shapes-only capture: fake tensors under the fake process group ------------------------------
# Real tensors over gloo cost the model's full memory on every rank (a hidden-4096 Llama-3 layer is
# ~1 GB of weights plus gradients per rank). tangle's check reads only the graph and its shapes, so
# the ranks can instead hold fake tensors (FakeTensorMode: CPU tensors without storage, so the CPU
# kernels are chosen as in a real run) under the "fake" backend, one after the other in one process:
# sends and receives are recorded with their (global) peers but carry nothing, and the schedule's
# runtime shape exchange is skipped by giving each stage its microbatch shapes (pipeline_stage).
# The graphs are those of the real run; values (--replay) are not defined.

_FAKE = "TANGLE_PP_FAKE"
_MODE = []


def fake_mode() -> bool:
    """True while capture_pipeline_fake traces: build() makes its model and data inside tensors()
    and its stages with pipeline_stage (no shape exchange)."""
    return os.environ.get(_FAKE) == "1"


def tensors(data_dependent=False):
    """Context in which build() creates its model and example tensors: fake ones in fake mode.
    data_dependent: the fake mode has a shape environment, so an operator whose output size comes
    from the data (nonzero, boolean indexing) gets an unbacked size (u0, u1, ...) instead of
    failing; the tensors made here still have static sizes."""
    import contextlib

    if not fake_mode():
        return contextlib.nullcontext()
    if not _MODE:
        from torch._subclasses.fake_tensor import FakeTensorMode
        _MODE.append(FakeTensorMode(allow_non_fake_inputs=True))
    if data_dependent:
        # a fresh environment per call: each rank's graph numbers its own unbacked sizes from u0
        from torch._subclasses.fake_tensor import FakeTensorMode
        from torch.fx.experimental.symbolic_shapes import ShapeEnv
        return FakeTensorMode(allow_non_fake_inputs=True, shape_env=ShapeEnv(), static_shapes=True)
    return _MODE[0]


def as_input(t):
    """A real tensor (data) as the step's argument: its fake copy in fake mode."""
    if not fake_mode():
        return t
    mode = tensors()
    return mode.from_tensor(t)


def init_schedule(sched, *args, target=None):
    """What a single-stage pipeline schedule's step() sets up before its first microbatch runs (the
    stage's receive buffers and metadata, from the first microbatch's shapes), without the step:
    a RankProgram.warmup for a shapes-only capture, where the whole warm-up step would run every
    operator once more on fake tensors for nothing (a quarter of a rank's capture). Uses the
    schedule's private initializer; without it (another torch) the whole step runs."""
    from torch.distributed.pipelining import schedules

    if not all(hasattr(sched, a) for a in ("_initialize_stage", "_split_inputs", "_stage", "_has_backward")) or \
            not all(hasattr(schedules, a) for a in ("_split_tensor", "_TARGET_CHUNK_SPEC")):
        return sched.step(*args, **({} if target is None else dict(target=target, losses=[])))
    sched._stage.has_backward = sched._has_backward
    sched._stage.clear_runtime_states()
    args_split, kwargs_split = sched._split_inputs(args, {})
    targets = None if target is None else \
        list(schedules._split_tensor(target, schedules._TARGET_CHUNK_SPEC, sched._n_microbatches))
    sched._initialize_stage(args_split[0], kwargs_split[0], targets[0] if targets else None)


def pipeline_stage(module, stage_index, num_stages, group, input_args, output_args):
    """A PipelineStage on the CPU; in fake mode with its microbatch input/output shapes given
    (example tensors made inside tensors()), so no shapes travel over the (fake) process group."""
    from torch.distributed.pipelining import PipelineStage

    import torch

    if not fake_mode():
        return PipelineStage(module, stage_index, num_stages, torch.device("cpu"), group=group)
    stage = PipelineStage(module, stage_index, num_stages, torch.device("cpu"), input_args=input_args,
                          output_args=output_args, group=group)
    # The schedule's first step votes over the stages whether shapes are static (a tensor sent
    # along the pipeline and read with .item(), which meta tensors cannot). Nothing travels here
    # and the shapes are given: every stage votes static, without messages.
    if hasattr(stage, "_warmup_forward_vote") and hasattr(stage, "_warmup_backward_result"):
        stage._warmup_forward_vote = lambda *a, **k: torch.ones(1, dtype=torch.int32)
        stage._warmup_backward_result = lambda *a, **k: torch.ones(1, dtype=torch.int32)
    return stage


def _fake_main(build_ref, spec_ref, world_size, out_dir, ranks, with_spec):
    """The given ranks (and the spec) traced in turn in this process (torch imported once)."""
    import torch.distributed as dist
    from torch.testing._internal.distributed.fake_pg import FakeStore

    os.environ[_FAKE] = "1"
    module = importlib.import_module(build_ref[0])
    for r in ranks:
        path = os.path.join(out_dir, f"impl.r{r}.py")
        dist.init_process_group("fake", store=FakeStore(), rank=r, world_size=world_size)
        try:
            prog = getattr(module, build_ref[1])(r, world_size)
            trace_program(prog, path, path.replace(".py", ".pp.json"))
        except Exception as e:
            raise RuntimeError(f"rank {r}/{world_size}: {str(e).splitlines()[0] if str(e) else type(e).__name__}") \
                from e
        finally:
            dist.destroy_process_group()
    if not with_spec:
        return
    spec_path = os.path.join(out_dir, "spec.py")
    trace_program(getattr(importlib.import_module(spec_ref[0]), spec_ref[1])(), spec_path,
                  spec_path.replace(".py", ".pp.json"))


def capture_fake_cases(cases, world_size, root, timeout=3600):
    """Several captures of capture_pipeline_fake in ONE child process (torch imported once):
    cases maps NAME -> (build_ref, spec_ref), written under root/NAME; returns the seconds it took."""
    os.makedirs(root, exist_ok=True)
    t0 = time.time()
    marker = os.path.join(root, "capture.cases")
    p = multiprocessing.get_context("spawn").Process(target=_fake_cases_entry, args=(cases, world_size, root, marker))
    p.start()
    p.join(timeout)
    if p.is_alive():
        p.kill()
        p.join()
        raise _capture.CaptureError(f"capturing {len(cases)} cases timed out after {timeout} s")
    message = _capture.failure_message(marker)
    if p.exitcode != 0:
        raise _capture.CaptureError(f"capturing failed: {message or f'exit code {p.exitcode}'}")
    return time.time() - t0


def _fake_cases_entry(cases, world_size, root, marker):
    def work():
        for name, (build_ref, spec_ref) in cases.items():
            out = os.path.join(root, name)
            os.makedirs(out, exist_ok=True)
            try:
                _fake_main(build_ref, spec_ref, world_size, out, range(world_size), True)
            except Exception as e:
                raise RuntimeError(f"{name}: {str(e).splitlines()[0] if str(e) else type(e).__name__}") from e

    _capture._run_reporting(marker, work)


def _fake_entry(build_ref, spec_ref, world_size, out_dir, ranks, with_spec, marker):
    _capture._run_reporting(marker, lambda: _fake_main(build_ref, spec_ref, world_size, out_dir, ranks, with_spec))


def _captured(out_dir, stem):
    """A rank (or the spec) an earlier capture finished: its .pp.json is written after its graph."""
    return os.path.exists(os.path.join(out_dir, stem + ".pp.json")) and \
        os.path.exists(os.path.join(out_dir, stem + ".py"))


def capture_pipeline_fake(build_ref, spec_ref, world_size, out_dir, timeout=3600, workers=1, resume=False):
    """capture_pipeline on fake tensors under the fake process group: the ranks split over `workers`
    child processes (each traces its ranks in turn; the first also the spec); writes the same files;
    returns the seconds it took. resume: ranks (and the spec) out_dir already holds from an
    interrupted capture of the SAME program are kept, the others traced (each still from its own
    code); the caller answers for out_dir holding nothing else."""
    os.makedirs(out_dir, exist_ok=True)
    t0 = time.time()
    ctx = multiprocessing.get_context("spawn")
    todo = [r for r in range(world_size) if not (resume and _captured(out_dir, f"impl.r{r}"))]
    with_spec = not (resume and _captured(out_dir, "spec"))
    if not todo and not with_spec:
        return time.time() - t0
    workers = max(1, min(workers, len(todo)))
    jobs = []
    for w in range(workers):
        marker = os.path.join(out_dir, "spec.py" if w == 0 and with_spec else f"capture.w{w}")
        p = ctx.Process(target=_fake_entry, args=(build_ref, spec_ref, world_size, out_dir,
                                                  todo[w::workers], w == 0 and with_spec, marker))
        p.start()
        jobs.append((p, marker))
    failures = []
    for p, marker in jobs:
        p.join(max(1.0, t0 + timeout - time.time()))
        if p.is_alive():
            p.kill()
            p.join()
            failures.append(f"capturing {world_size} ranks timed out after {timeout} s")
            continue
        message = _capture.failure_message(marker)
        if p.exitcode != 0 or (marker.endswith("spec.py") and not os.path.exists(marker)):
            failures.append(f"capturing failed: {message or f'exit code {p.exitcode}'}")
        elif not marker.endswith("spec.py") and os.path.exists(_capture._log_path(marker)):
            os.remove(_capture._log_path(marker))
    if failures:
        raise _capture.CaptureError(failures[0])
    return time.time() - t0
