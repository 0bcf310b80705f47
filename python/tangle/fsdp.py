"""Capture a real FSDP2 (``torch.distributed.fsdp.fully_shard``) training step for tangle.

``make_fx`` of the step (forward, loss, ``loss.backward()``) records FSDP2's own all-gather and
reduce-scatter, but in eager form: out= buffer ops (``fsdp.all_gather_copy_in``,
``fsdp.split_with_sizes_copy``, ``fsdp.chunk_cat``) and in-place c10d collectives whose process
group and reduce op are opaque script objects; parameters and gradients are views of FSDP's flat
buffers, a storage sharing the trace does not show. This module only records what the trace hides
(src/lower/fsdp.h gives the ops their meaning):
* each c10d collective's group name, and its reduce op (the one FSDP chose, recorded from
  ``_get_gradient_divide_factors``), as string arguments;
* each attribute tensor that is a view of another attribute's storage as an ``as_strided`` read of
  it; the flat sharded data as the parameter's local shard (an added attribute), flattened and
  zero padded to FSDP's padded size;
* each returned gradient (a DTensor the trace cannot follow) as the ``as_strided`` view of the
  reduce-scatter's output with its local tensor's size, stride and offset.
Every read of the unsharded parameter (one per all-gather: micro-batches accumulating without
sync all-gather again) becomes that ``as_strided`` read. Under MixedPrecisionPolicy the read has the
all-gather buffer's dtype (param_dtype); FSDP's copies between float dtypes are casts (lower/fsdp.cpp),
and ``spec_program(..., param_dtype=...)`` is the sequential step under the same casts. Profiler markers are dropped. ``fsdp_program`` returns the rank's ``pp.RankProgram``, capture it with
``pp.capture_pipeline_fake`` and write the relation with ``pp.write_relation`` (the
spec's parameters are the concatenation of the ranks' dim-0 shards; its batch that of the ranks' rows;
each rank's `expect` lines name its returned gradients, the as_strided views, whose names the buffer
pass keeps on the nodes that replace them).
"""
from __future__ import annotations

import operator

from . import ddp
from .pp import RankProgram


class CaptureError(RuntimeError):
    pass


def spec_program(model, batch, loss_fn, param_dtype=None, output_dtype=None) -> RankProgram:
    """The sequential step; with param_dtype, the step FSDP's MixedPrecisionPolicy(param_dtype=...)
    runs: each parameter cast to param_dtype at use, the floating inputs too (cast_forward_inputs),
    the output cast to output_dtype when given, the loss taken on that output, the gradients flowing
    back through the casts to the parameters."""
    prog = ddp.spec_program(model, batch, loss_fn)
    if param_dtype is not None:
        prog.step = _cast_step(model, prog.params, loss_fn, param_dtype, output_dtype)
    return prog


def _cast_step(model, params, loss_fn, dtype, output_dtype):
    import torch

    def step(*batch):
        *inputs, target = batch
        cast = {fqn: p.to(dtype) for fqn, p in params.items()}
        inputs = tuple(t.to(dtype) if t.is_floating_point() else t for t in inputs)
        out = torch.func.functional_call(model, cast, inputs)
        loss_fn(out if output_dtype is None else out.to(output_dtype), target).backward()
        return tuple(p.grad for p in params.values())

    return step


def _reduce_ops():
    """Records the reduce-scatter op FSDP picks for each gradient reduction, in order."""
    import torch.distributed as dist
    from torch.distributed.fsdp._fully_shard import _fsdp_collectives as col

    seen = []
    if not getattr(col._get_gradient_divide_factors, "_tangle", False):
        original = col._get_gradient_divide_factors

        def recording(*args, **kwargs):
            result = original(*args, **kwargs)
            op = result[2]
            name = "sum" if op == dist.ReduceOp.SUM else "avg" if op == dist.ReduceOp.AVG else "premul_sum"
            recording.seen.append(name)
            return result

        recording._tangle = True
        recording.seen = seen
        col._get_gradient_divide_factors = recording
    return col._get_gradient_divide_factors.seen


def _contiguous_strides(size):
    strides, n = [], 1
    for d in reversed(size):
        strides.append(n)
        n *= d
    return list(reversed(strides))


def _rewrite(gm, fsdp_params, grads, reduce_ops):
    """The graph edits of the module docstring; returns {FQN: node name of its local shard}."""
    import torch
    import torch.distributed as dist

    graph = gm.graph
    for node in reversed(list(graph.nodes)):
        if node.op == "call_function" and str(node.target).startswith("profiler."):
            graph.erase_node(node)
    scatters = [n for n in graph.nodes if str(n.target) == "c10d._reduce_scatter_base_.default"]
    ops = reduce_ops[len(reduce_ops) - len(scatters):] if scatters else []
    if len(ops) != len(scatters):
        raise CaptureError(f"{len(scatters)} reduce-scatters but FSDP chose {len(reduce_ops)} reduce ops")
    for node in graph.nodes:
        target = str(node.target)
        if target in ("c10d._allgather_base_.default", "c10d._reduce_scatter_base_.default"):
            pg = dist.ProcessGroup.unbox(getattr(gm, node.args[2].target))
            args = list(node.args)
            args[2] = pg.group_name
            if target.startswith("c10d._reduce"):
                args[3] = ops[scatters.index(node)]
            node.args = tuple(args)
    by_id = {}  # id of an attribute tensor -> its get_attr nodes
    for n in graph.nodes:
        if n.op == "get_attr":
            by_id.setdefault(id(getattr(gm, n.target)), []).append(n)
    first = next(iter(graph.nodes))
    aten = torch.ops.aten
    named = {}
    for i, (fqn, fp) in enumerate(fsdp_params.items()):
        local = fp.sharded_param._local_tensor
        name = f"_fsdp_shard{i}"
        setattr(gm, name, local)
        with graph.inserting_before(first):
            shard = graph.get_attr(name)
            shard.meta["val"] = local
        named[fqn] = shard.name
        data = fp._sharded_param_data
        for flat_data in _same_data(gm, data):  # FSDP's flat sharded data: the local shard, flattened and zero padded
            if not local.is_contiguous() or local.storage_offset() != data.storage_offset() or \
                    (local.numel() and local.untyped_storage().data_ptr() != data.untyped_storage().data_ptr()):
                raise CaptureError(f"{fqn}: its sharded data is not its flat padded local shard")
            with graph.inserting_before(flat_data):
                flat = graph.call_function(aten.view.default, (shard, [local.numel()]))
                flat.meta["val"] = local.reshape(-1)
                if data.numel() > local.numel():
                    flat = graph.call_function(aten.constant_pad_nd.default,
                                               (flat, [0, data.numel() - local.numel()], 0.0))
                    flat.meta["val"] = torch.zeros(data.numel(), dtype=data.dtype)
            flat_data.replace_all_uses_with(flat)
            graph.erase_node(flat_data)
        # each read of the unsharded parameter (one per micro-batch's all-gather when gradients
        # accumulate) becomes torch.as_strided(all_gather_outputs[0], orig size, contiguous, 0)
        for unsharded in by_id.get(id(fp._unsharded_param), []):
            if len(fp.all_gather_outputs) != 1 or id(fp.all_gather_outputs[0]) not in by_id:
                raise CaptureError(f"{fqn}: its unsharded parameter is not a view of one traced all-gather buffer")
            with graph.inserting_before(unsharded):
                buf = graph.get_attr(by_id[id(fp.all_gather_outputs[0])][0].target)
                buf.meta["val"] = fp.all_gather_outputs[0]
                view = graph.call_function(aten.as_strided.default, (buf, list(fp._orig_size),
                                                                      list(fp._contiguous_orig_stride), 0))
                view.meta["val"] = torch.empty(fp._orig_size, dtype=fp.all_gather_outputs[0].dtype)  # param_dtype
            unsharded.replace_all_uses_with(view)
            graph.erase_node(unsharded)
    _return_grads(gm, grads)
    graph.lint()
    gm.recompile()
    return named


def _same_data(gm, data):
    """The get_attr nodes of plain tensors that are `data` (the same object, or the same elements
    of its storage: FSDP hands its all-gather a fresh view of the flat sharded data)."""
    import torch

    ptr = data.untyped_storage().data_ptr()
    out = []
    for n in gm.graph.nodes:
        t = getattr(gm, n.target, None) if n.op == "get_attr" and not n.target.startswith("_fsdp_shard") else None
        if t is data or (type(t) is torch.Tensor and ptr and t.untyped_storage().data_ptr() == ptr
                         and t.storage_offset() == data.storage_offset() and t.shape == data.shape
                         and t.stride() == data.stride()):
            out.append(n)
    return out


def _from_reduce_scatter(node):
    """True when node is a reduce-scatter's output, through in-place ops on it (FSDP's div_) and
    its cast to the parameter's dtype (a reduce_dtype other than it, e.g. bf16 gradients)."""
    while hasattr(node, "target"):
        if str(node.target) == "c10d._reduce_scatter_base_.default":
            return True
        if node.op != "call_function" or not node.args or not (
                node.target is operator.getitem or str(node.target).split(".")[1].endswith("_")
                or str(node.target) == "aten._to_copy.default"):
            return False
        node = node.args[0]
    return False


def _return_grads(gm, grads):
    """Each returned gradient DTensor becomes the as_strided view of the reduce-scatter output
    that has its local tensor's size, stride and offset (refused when not exactly one)."""
    import torch

    graph = gm.graph
    out = next(n for n in graph.nodes if n.op == "output")
    views = [n for n in graph.nodes if str(n.target) == "aten.as_strided.default" and _from_reduce_scatter(n.args[0])]
    new = []
    for i, arg in enumerate(out.args[0]):
        g = grads[i]
        if g is None:
            raise CaptureError(f"gradient {i} is None: no reduce-scatter produced it (gradient sync off?)")
        local = g._local_tensor if hasattr(g, "_local_tensor") else g
        key = (list(local.shape), list(local.stride()), local.storage_offset())
        match = [v for v in views if (list(v.args[1]), list(v.args[2]), v.args[3] if len(v.args) > 3 else 0) == key]
        if len(match) != 1:
            raise CaptureError(f"gradient {i}: {len(match)} reduce-scatter views have its size, stride and offset")
        new.append(match[0])
    out.args = (tuple(new),)
    for n in list(graph.nodes):  # the DTensor constants are no longer returned
        if n.op == "get_attr" and not n.users and isinstance(getattr(gm, n.target, None), torch.Tensor):
            graph.erase_node(n)


def _fsdp_params(model, params):
    """FQN -> FSDPParam (FSDP2's per-parameter state: shard, flat data, all-gather buffer)."""
    by_param = {}
    for module in model.modules():
        state = module._get_fsdp_state() if hasattr(module, "_get_fsdp_state") else None
        for group in getattr(state, "_fsdp_param_groups", []) if state else []:
            for fp in group.fsdp_params:
                by_param[id(fp.sharded_param)] = fp
    missing = [fqn for fqn, p in params.items() if id(p) not in by_param]
    if missing:
        raise CaptureError(f"parameters not managed by fully_shard: {', '.join(missing)}")
    return {fqn: by_param[id(p)] for fqn, p in params.items()}


def _accumulating_step(model, params, loss_fn, micro, sync_at):
    """`micro` micro-batches (args x0, y0, x1, y1, ...): each loss divided by `micro`, backward; gradient
    sync (set_requires_gradient_sync) on for micro-batch `sync_at` only (the last, when correct): the
    others accumulate FSDP's unsharded gradients, which the synced backward reduce-scatters."""
    def step(*args):
        # a step from zero gradients: drop the unsharded gradients a previous step left unreduced
        # (the warm-up step, when sync is off on its last micro-batch)
        for fp in _fsdp_params(model, params).values():
            fp.unsharded_accumulated_grad = None
            if hasattr(fp, "_unsharded_param"):
                fp._unsharded_param.grad = None
        for m in range(micro):
            model.set_requires_gradient_sync(m == sync_at)
            *inputs, target = args[m * len(args) // micro:(m + 1) * len(args) // micro]
            (loss_fn(model(*inputs), target) / micro).backward()
        return tuple(p.grad for p in params.values())

    return step


def fsdp_program(model, batch, loss_fn, rank, world_size, per_layer=False, force_sum=False, divide_factor=None,
                 micro=1, sync_at=-1, **fsdp_kwargs) -> RankProgram:
    """Rank `rank`'s step: `model` under fully_shard (each child with parameters too, when
    per_layer) on its rows of every batch tensor; force_sum and divide_factor set FSDP's
    set_force_sum_reduction_for_comms / set_gradient_divide_factor; micro > 1 accumulates over that many
    micro-batches of the rank's rows, syncing gradients on micro-batch sync_at only (the last by
    default). Needs an initialized process group."""
    from torch.distributed.fsdp import fully_shard

    if per_layer:
        for child in model.children():
            if any(True for _ in child.parameters()):
                fully_shard(child, **fsdp_kwargs)
    fully_shard(model, **fsdp_kwargs)
    if force_sum:
        model.set_force_sum_reduction_for_comms(True)
    if divide_factor is not None:
        model.set_gradient_divide_factor(divide_factor)
    params = dict(model.named_parameters())
    reduce_ops = _reduce_ops()
    names = ddp._names(batch)
    rows = [ddp._rows(t, rank, world_size) for t in batch]
    if micro == 1:
        step, args, inputs = ddp._step(model, params, loss_fn), rows, {a: (a, rank) for a in names}
    else:  # micro-batch m of rank r is chunk r * micro + m of the spec's batch
        step = _accumulating_step(model, params, loss_fn, micro, sync_at % micro)
        args = [ddp._rows(t, m, micro) for m in range(micro) for t in rows]
        inputs = {f"arg{m * len(names) + i}": (a, rank * micro + m) for m in range(micro) for i, a in enumerate(names)}
    prog = RankProgram(step=step, args=tuple(args), params=params, outputs=list(params), inputs=inputs,
                       shards={fqn: (fp.fsdp_placement.dim, rank, world_size)
                               for fqn, fp in _fsdp_params(model, params).items()}, decompose=ddp._losses())

    def rewrite(gm):
        return _rewrite(gm, _fsdp_params(model, params), [p.grad for p in params.values()], reduce_ops)

    prog.rewrite = rewrite
    return prog
