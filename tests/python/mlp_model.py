"""A tensor-parallel MLP (Megatron style) and its sequential spec, for the capture test."""
import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol

HIDDEN, FFN, TOKENS = 8, 16, 4


def weights():
    g = torch.Generator().manual_seed(0)
    return (torch.randn(FFN, HIDDEN, generator=g), torch.randn(HIDDEN, FFN, generator=g),
            torch.randn(TOKENS, HIDDEN, generator=g), torch.randn(HIDDEN, generator=g))


def spec():
    w1, w2, x, b2 = weights()

    def mlp(x, w1, w2, b2):
        return torch.nn.functional.gelu(x @ w1.t()) @ w2.t() + b2

    return mlp, (x, w1, w2, b2)


def build(rank, world_size, drop_all_reduce=False):
    w1, w2, x, b2 = weights()
    rows = FFN // world_size
    w1r = w1[rank * rows:(rank + 1) * rows].contiguous()     # column-parallel: shard(0)
    w2r = w2[:, rank * rows:(rank + 1) * rows].contiguous()  # row-parallel: shard(1)

    def mlp(x, w1, w2, b2):
        partial = torch.nn.functional.gelu(x @ w1.t()) @ w2.t()
        if not drop_all_reduce:
            partial = funcol.all_reduce(partial, "sum", dist.group.WORLD)
        return partial + b2  # row-parallel bias: added once, after the reduction

    return mlp, (x, w1r, w2r, b2)


def build_buggy(rank, world_size):
    return build(rank, world_size, drop_all_reduce=True)


def relation(world_size):
    """The input relation of `tangle verify mlp_model:build` (argument names of `mlp`; S.output / D*.output
    are the graphs' outputs)."""
    return """S.x = D*.x
S.w1 = shard(D*.w1, dim=0)
S.w2 = shard(D*.w2, dim=1)
S.b2 = D*.b2
expect S.output = D*.output   # every rank holds the full output
"""
