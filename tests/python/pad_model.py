"""Sizes not divisible by the TP degree, padded with zeros: an MLP of width 10 over 4
ranks padded to 12 (3 columns of W1 / rows of W2 per rank; rank 3 holds 1 real + 2 zero
ones), column-parallel up projection, row-parallel down projection, all-reduce."""
import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol

HIDDEN, WIDTH, TOKENS = 4, 10, 3


def weights():
    g = torch.Generator().manual_seed(0)
    return (torch.randn(TOKENS, HIDDEN, generator=g), torch.randn(WIDTH, HIDDEN, generator=g),
            torch.randn(HIDDEN, WIDTH, generator=g))


def mlp(x, w1, w2):
    return torch.relu(x @ w1.t()) @ w2.t()


def spec():
    return mlp, weights()


def padded(world_size, pad_value=0.0):
    """W1 rows and W2 columns padded to a multiple of world_size (pad_value: 0, or the bug)."""
    x, w1, w2 = weights()
    n = -(-WIDTH // world_size) * world_size
    w1p = torch.cat([w1, torch.full((n - WIDTH, HIDDEN), pad_value)], 0)
    w2p = torch.cat([w2, torch.full((HIDDEN, n - WIDTH), pad_value)], 1)
    return x, w1p, w2p, n // world_size


def build(rank, world_size, pad_value=0.0):
    x, w1p, w2p, per = padded(world_size, pad_value)

    def tp_mlp(x, w1, w2):
        return funcol.all_reduce(mlp(x, w1, w2), "sum", dist.group.WORLD)

    return tp_mlp, (x, w1p[rank * per:(rank + 1) * per].contiguous(), w2p[:, rank * per:(rank + 1) * per].contiguous())

