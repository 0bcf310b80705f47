"""Attention heads not divisible by the TP degree, padded with zero heads: 6 heads over 4
ranks padded to 8 (2 per rank), eager attention (bmm / softmax / bmm). Ranks 0-2 hold real
heads, rank 3 holds padding only: its q/k/v weight rows and its o_proj columns are zero.
Its scores are zero, its softmax uniform, its attention output uniform @ V = 0, and its
o_proj columns are zero: its all-reduce term vanishes.

Variants (the graphs are the same, only the weights differ):
* ``pad="zero"``: every pad row / column zero (correct).
* ``pad="o_zero"``: q/k/v pad rows random, o_proj pad columns zero: still correct (the zero
  columns kill whatever the pad heads compute).
* ``pad="random"``: every pad row / column random (the bug: pad heads leak into the output).
``HEADS_ODD`` = 5 gives ranks 2 (one real head, one pad head) and 3 (padding only).
"""
import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol

HIDDEN, HEAD_DIM, TOKENS = 8, 2, 4
HEADS = 6


def weights(heads=HEADS):
    g = torch.Generator().manual_seed(0)
    return (torch.randn(1, TOKENS, HIDDEN, generator=g),
            torch.randn(heads * HEAD_DIM, HIDDEN, generator=g),
            torch.randn(heads * HEAD_DIM, HIDDEN, generator=g),
            torch.randn(heads * HEAD_DIM, HIDDEN, generator=g),
            torch.randn(HIDDEN, heads * HEAD_DIM, generator=g))


def attn(x, wq, wk, wv, wo):
    b, s, _ = x.shape
    q = (x @ wq.t()).view(b, s, -1, HEAD_DIM).transpose(1, 2)
    k = (x @ wk.t()).view(b, s, -1, HEAD_DIM).transpose(1, 2)
    v = (x @ wv.t()).view(b, s, -1, HEAD_DIM).transpose(1, 2)
    w = torch.softmax(q @ k.transpose(2, 3) * HEAD_DIM ** -0.5, dim=-1)
    return (w @ v).transpose(1, 2).reshape(b, s, -1) @ wo.t()


def spec(heads=HEADS):
    return attn, weights(heads)


def padded_heads(heads, world_size):
    """Heads per rank after padding to a multiple of world_size."""
    return -(-heads // world_size)


def padded_weights(world_size, heads=HEADS, pad="zero"):
    """The full padded weights (pad heads appended at the end)."""
    x, wq, wk, wv, wo = weights(heads)
    extra = (padded_heads(heads, world_size) * world_size - heads) * HEAD_DIM
    g = torch.Generator().manual_seed(1)

    def fill(shape, zero):
        return torch.zeros(shape) if zero else torch.randn(*shape, generator=g)

    qkv = [torch.cat([w, fill((extra, HIDDEN), pad == "zero")], 0) for w in (wq, wk, wv)]
    wo = torch.cat([wo, fill((HIDDEN, extra), pad in ("zero", "o_zero"))], 1)
    return (x, *qkv, wo)


def build(rank, world_size, heads=HEADS, pad="zero"):
    x, wq, wk, wv, wo = padded_weights(world_size, heads, pad)
    n = padded_heads(heads, world_size) * HEAD_DIM
    rows = [w[rank * n:(rank + 1) * n].contiguous() for w in (wq, wk, wv)]

    def tp_attn(x, wq, wk, wv, wo):
        return funcol.all_reduce(attn(x, wq, wk, wv, wo), "sum", dist.group.WORLD)

    return tp_attn, (x, *rows, wo[:, rank * n:(rank + 1) * n].contiguous())


def build_o_zero(rank, world_size):
    return build(rank, world_size, pad="o_zero")


def build_random(rank, world_size):
    return build(rank, world_size, pad="random")


def spec_h5():
    return spec(5)


def build_h5(rank, world_size):
    """5 heads over 4 ranks: rank 2 holds head 4 and one pad head, rank 3 padding only."""
    return build(rank, world_size, heads=5)


def spec_h32():
    return spec(32)


def build_h32(rank, world_size):
    """The issue's case: 32 heads over 6 ranks padded to 36 (rank 5: 2 real heads, 4 pad heads)."""
    return build(rank, world_size, heads=32)


def relation(world_size, heads=HEADS, pad="zero"):
    """x replicated; q/k/v rows and o_proj columns sharded after padding, with the `zero`
    regions computed from the sizes and declared where the ranks' weights hold zeros."""
    from tangle.padding import padded_shard

    ranks = [build(r, world_size, heads, pad)[1] for r in range(world_size)]
    lines = ["S.x = D*.x"]
    for i, name in enumerate(("wq", "wk", "wv")):
        lines += padded_shard(name, name, 0, heads * HEAD_DIM, world_size, HEAD_DIM, [a[1 + i] for a in ranks])
    lines += padded_shard("wo", "wo", 1, heads * HEAD_DIM, world_size, HEAD_DIM, [a[4] for a in ranks])
    return "\n".join(lines) + "\n"


def relation_h5(world_size):
    return relation(world_size, heads=5)


def relation_h32(world_size):
    return relation(world_size, heads=32)


def relation_o_zero(world_size):
    return relation(world_size, pad="o_zero")


def relation_random(world_size):
    return relation(world_size, pad="random")
