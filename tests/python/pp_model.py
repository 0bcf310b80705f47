"""A tiny Llama-style MLP stack trained with torch.distributed.pipelining (for test_pp.py).

The full model is split by hand into consecutive stage modules (pipelining's manual split); each
rank runs a PipelineStage under ScheduleGPipe or Schedule1F1B. With dp > 1 the ranks form a
dp x pp grid (rank = replica * pp + stage) and each replica's gradients are summed over the
data-parallel group after the step, as DDP does (which averages; a minimal DP of our own). Planted bugs:
* ``wrong_peer`` (TrainVerify 6): the send/recv topology does not follow the layer placement:
  the input enters the rank holding layer 1, which sends to the rank holding layer 0, which sends
  on to the last stage (send/recv between the wrong ranks);
* ``early_reduce`` (TrainVerify 14): the data-parallel reduction runs after the next-to-last
  microbatch's backward, on a partially accumulated gradient, not after the last.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from tangle.pp import RankProgram

D, VOCAB, BATCH = 8, 16, 8


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = torch.nn.Linear(D, 2 * D, bias=False)
        self.up = torch.nn.Linear(D, 2 * D, bias=False)
        self.down = torch.nn.Linear(2 * D, D, bias=False)

    def forward(self, x):
        return x + self.down(F.silu(self.gate(x)) * self.up(x))


def full_model(n_blocks):
    torch.manual_seed(0)
    return torch.nn.Sequential(*[Block() for _ in range(n_blocks)], torch.nn.Linear(D, VOCAB, bias=False))


def batch():
    g = torch.Generator().manual_seed(1)
    return torch.randn(BATCH, D, generator=g), torch.randint(0, VOCAB, (BATCH,), generator=g)


def loss_fn(logits, target):
    # Summed, and the schedule does not rescale (scale_grads=False): the step's gradients are the
    # sums over microbatches, the spec's the gradient of the summed loss of the whole batch.
    # (Means do not compose: F.cross_entropy's mean divides by the number of targets that are not
    # ignore_index, and a mean of microbatch means equals the batch mean only if every microbatch
    # ignores as many targets; constant loss scales would need scalar lemmas through the backward.)
    return F.cross_entropy(logits, target, reduction="sum")


def stage_layers(n_stages, per_stage):
    """Layer indices of each stage: per_stage blocks each, the head with the last stage."""
    out = [list(range(s * per_stage, (s + 1) * per_stage)) for s in range(n_stages)]
    out[-1].append(n_stages * per_stage)
    return out


def build(rank, world_size, pp, nm=2, per_stage=1, schedule="gpipe", bug=None):
    import torch.distributed as dist
    import torch.distributed._functional_collectives as funcol
    from torch.distributed.pipelining import PipelineStage, Schedule1F1B, ScheduleGPipe

    dp = world_size // pp
    replica, stage_index = divmod(rank, pp)
    pp_groups = [dist.new_group([r * pp + s for s in range(pp)]) for r in range(dp)]
    dp_groups = [dist.new_group([r * pp + s for r in range(dp)]) for s in range(pp)]
    model = full_model(pp * per_stage)
    layers = stage_layers(pp, per_stage)
    placed = list(range(pp))
    if bug == "wrong_peer":  # the ranks of stages 0 and 1 hold each other's layers
        placed[0], placed[1] = placed[1], placed[0]
    mine = layers[placed[stage_index]]
    submod = torch.nn.Sequential(*[model[i] for i in mine])
    params = {f"{i}.{n}": p for i in mine for n, p in model[i].named_parameters()}
    stage = PipelineStage(submod, stage_index, pp, torch.device("cpu"), group=pp_groups[replica])
    kind = {"gpipe": ScheduleGPipe, "1f1b": Schedule1F1B}[schedule]
    sched = kind(stage, n_microbatches=nm, loss_fn=loss_fn, scale_grads=False)
    x, tgt = batch()
    per = BATCH // dp
    x, tgt = x[replica * per:(replica + 1) * per], tgt[replica * per:(replica + 1) * per]
    group = dp_groups[stage_index]

    def reduce_grads():
        for p in params.values():
            p.grad = funcol.all_reduce(p.grad, "sum", group)

    if bug == "early_reduce" and dp > 1:
        backward = stage.backward_one_chunk

        def backward_then_reduce(bwd_chunk_id, *a, **k):
            out = backward(bwd_chunk_id, *a, **k)
            if bwd_chunk_id == nm - 2:
                reduce_grads()
            return out

        stage.backward_one_chunk = backward_then_reduce

    def step(x, tgt):
        if stage_index == 0:
            sched.step(x)
        elif stage_index == pp - 1:
            sched.step(target=tgt, losses=[])
        else:
            sched.step()
        if dp > 1 and bug != "early_reduce":
            reduce_grads()
        return tuple(p.grad for p in params.values())

    inputs = {}
    if stage_index == 0:
        inputs["x"] = ("x", replica)
    if stage_index == pp - 1:
        inputs["tgt"] = ("tgt", replica)
    return RankProgram(step, (x, tgt), params, list(params), inputs)


def spec_program(n_blocks):
    model = full_model(n_blocks)
    params = dict(model.named_parameters())

    def step(x, tgt):
        loss_fn(model(x), tgt).backward()
        return tuple(p.grad for p in params.values())

    return RankProgram(step, batch(), params, list(params), {"x": ("x", 0), "tgt": ("tgt", 0)})


def gpipe2(rank, world_size):
    return build(rank, world_size, pp=2)


def onef1b3(rank, world_size):
    return build(rank, world_size, pp=3, nm=4, schedule="1f1b")


def wrong_peer3(rank, world_size):
    return build(rank, world_size, pp=3, bug="wrong_peer")


def dp2pp2(rank, world_size):
    return build(rank, world_size, pp=2)


def early_reduce(rank, world_size):
    return build(rank, world_size, pp=2, bug="early_reduce")


def spec2():
    return spec_program(2)


def spec3():
    return spec_program(3)
