"""A training step (forward, loss, backward) of the expert-parallel MoE layer of moe_model.py.

The spec is the layer on all tokens, one rank: squared error against a target summed and divided by the
global element count, ``loss.backward()``; the outputs are the gradients of the router, the grouped expert
weights w1/w2/w3 and the shared expert. Each EP rank holds its tokens and its experts' rows of w1/w2/w3
(Shard(0)); the all_to_all_single dispatch and combine are differentiable (the backward of each is the
all_to_all_single with the splits swapped), so an expert's gradient collects the contributions of every rank's
tokens on the expert's owner. The replicated router and shared expert are all-reduced (sum) over the EP ranks;
the expert shards are not reduced (each rank owns different experts).

Planted bug, silent in a real run: ``build_experts_reduced`` all-reduces the expert gradients too (the
replicated-parameter reduction applied to every parameter, as when data parallelism is wrapped around the EP
ranks without excluding the experts): every rank's expert gradient is the sum of two different experts'.
"""
import torch
import torch.distributed._functional_collectives as funcol

import moe_model

REPLICATED = ("router", "s1", "s2", "s3")
EXPERT = ("w1", "w2", "w3")


class MoE(torch.nn.Module):
    def __init__(self, world_size=1, rank=0):
        super().__init__()
        _, router, w1, w2, w3, s1, s2, s3 = moe_model._weights(moe_model.SPEC_WORLD)
        local = moe_model.EXPERTS // world_size
        mine = slice(rank * local, (rank + 1) * local)
        for name, w in (("router", router), ("s1", s1), ("s2", s2), ("s3", s3)):
            setattr(self, name, torch.nn.Parameter(w))
        for name, w in (("w1", w1), ("w2", w2), ("w3", w3)):
            setattr(self, name, torch.nn.Parameter(w[mine].contiguous()))
        group = torch.distributed.group.WORLD if world_size > 1 else None
        self.layer = moe_model.moe_layer(world_size, group)

    def forward(self, x):
        return self.layer(x, self.router, self.w1, self.w2, self.w3, self.s1, self.s2, self.s3)


def _batch():
    x = moe_model._weights(moe_model.SPEC_WORLD)[0]
    return x, torch.randn(*x.shape, generator=torch.Generator().manual_seed(1))


def _program(rank, world_size, reduce_experts=False):
    from tangle import pp

    # Fake tensors (shapes only): eager one_hot checks its indices' range with .item(), which make_fx
    # cannot trace on real tensors; on fake ones it is the comparison with arange that it computes.
    with pp.tensors():
        m = MoE(world_size, rank)
        x, y = _batch()
    params = dict(m.named_parameters())
    count = x.numel()  # global normalization: the ranks' losses add up to the spec's

    def step(*batch):  # *batch: make_fx names the placeholders arg0_1, arg1_1 as tangle.pp expects
        x, y = batch
        (((m(x) - y) ** 2).sum() / count).backward()
        grads = []
        for name, p in params.items():
            g = p.grad
            if world_size > 1 and (name in REPLICATED or reduce_experts):
                g = funcol.wait_tensor(funcol.all_reduce(g, "sum", list(range(world_size))))
            grads.append(g)
        return tuple(grads)

    n = x.shape[0] // world_size
    rows = tuple(t[rank * n:(rank + 1) * n].contiguous() for t in (x, y))
    shards = {name: (0, rank, world_size) for name in EXPERT} if world_size > 1 else {}
    return pp.RankProgram(step=step, args=rows, params=params, outputs=list(params),
                          inputs={a: (a, rank) for a in ("arg0", "arg1")}, shards=shards)


def spec():
    return _program(0, 1)


def build(rank, world_size):
    return _program(rank, world_size)


def build_experts_reduced(rank, world_size):
    return _program(rank, world_size, reduce_experts=True)
