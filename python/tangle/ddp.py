"""Capture a real ``DistributedDataParallel`` training step for tangle.

DDP's C++ reducer averages gradients from autograd hooks that no tracer sees (under make_fx its
communication hook returns nothing). With ``torch._dynamo.config.optimize_ddp = "python_reducer"``
DDP instead reduces each gradient in Python from a post-accumulate-grad hook: divided by the world
size, all-reduced with the functional collectives, waited on and copied into ``.grad``. ``make_fx``
of the step (forward, loss, ``loss.backward()``) then records all of it in one graph per rank, so
what is checked is DDP's own reduction, ``no_sync`` and all, not a functional stand-in.

``ddp_program(model, batch, loss_fn, rank, world_size)`` returns the rank's ``pp.RankProgram`` (its
batch rows, its DDP-wrapped copy of the model); ``spec_program(model, batch, loss_fn)`` the
sequential step on the whole batch. Capture them with ``pp.capture_pipeline_fake`` and write the
relation with ``pp.write_relation`` (parameters replicated, the spec's batch the concatenation of
the ranks' rows); the checker then rebuilds every spec gradient from the ranks' ``.grad``.
"""
from __future__ import annotations

import contextlib

from .pp import RankProgram


def _losses():
    """mse_loss and its backward as plain ATen ops, traced in the spec and the ranks alike. The fused
    backward folds 2/numel into one constant (2/32 in the spec, 2/16 on a rank), which no lemma splits;
    written as 2 * (x - y) * (grad / numel) the seed's division is the mean's own, whose per-rank share
    tangle relates (as for ``.pow(2).mean()``)."""
    import torch
    a = torch.ops.aten

    def reduce(t, reduction):
        return t if reduction == 0 else t.mean() if reduction == 1 else t.sum()

    def forward(x, y, reduction=1):
        return reduce((x - y) * (x - y), reduction)

    def backward(grad, x, y, reduction):
        if reduction == 1:
            grad = grad / x.numel()
        return (x - y) * 2 * grad

    return {a.mse_loss.default: forward, a.mse_loss_backward.default: backward}


def _step(model, params, loss_fn, sync=True):
    def step(*batch):
        *inputs, target = batch
        with contextlib.nullcontext() if sync else model.no_sync():
            loss = loss_fn(model(*inputs), target)
            loss.backward()
        return tuple(p.grad for p in params.values())

    return step


def _rows(t, rank, world_size):
    if t.shape[0] % world_size:
        raise ValueError(f"a batch of {t.shape[0]} rows does not split over {world_size} ranks")
    n = t.shape[0] // world_size
    return t[rank * n:(rank + 1) * n].contiguous()


def _names(batch):
    # make_fx names the placeholders of a *args step arg0_1, arg1_1, ... (pp strips the _1)
    return [f"arg{i}" for i in range(len(batch))]


def spec_program(model, batch, loss_fn) -> RankProgram:
    """The sequential step: loss over the whole batch (its last tensor is the target), backward."""
    params = dict(model.named_parameters())
    return RankProgram(step=_step(model, params, loss_fn), args=tuple(batch), params=params, outputs=list(params),
                       inputs={a: (a, 0) for a in _names(batch)}, decompose=_losses())


def ddp_program(model, batch, loss_fn, rank, world_size, sync=True, **ddp_kwargs) -> RankProgram:
    """Rank `rank`'s step: `model` wrapped in DistributedDataParallel (python reducer) on its rows of
    every batch tensor. sync=False runs it under no_sync() (a planted bug: nothing is reduced).
    Needs an initialized process group (the fake one for capture)."""
    import torch
    from torch.nn.parallel import DistributedDataParallel

    torch._dynamo.config.optimize_ddp = "python_reducer"
    wrapped = DistributedDataParallel(model, **ddp_kwargs)
    params = dict(model.named_parameters())  # FQNs of the unwrapped model: the spec's names
    names = _names(batch)
    return RankProgram(step=_step(wrapped, params, loss_fn, sync), args=tuple(_rows(t, rank, world_size) for t in batch),
                       params=params, outputs=list(params), inputs={a: (a, rank) for a in names}, decompose=_losses())
