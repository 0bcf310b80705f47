"""Tensor-parallel self-attention (heads split over ranks, Megatron style) whose
token count stays symbolic, and its sequential spec, for the dynamic-shape
capture test."""
import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol

HIDDEN, HEADS, HEAD_DIM, TOKENS = 16, 4, 4, 6


def weights():
    g = torch.Generator().manual_seed(0)
    return (torch.randn(TOKENS, HIDDEN, generator=g), torch.randn(3 * HIDDEN, HIDDEN, generator=g),
            torch.randn(HIDDEN, HIDDEN, generator=g))


def attn(x, wqkv, wo, heads):
    s = x.shape[0]
    q, k, v = (x @ wqkv.t()).split(wqkv.shape[0] // 3, dim=1)
    q, k, v = (t.view(s, heads, HEAD_DIM).transpose(0, 1) for t in (q, k, v))
    a = torch.softmax(q @ k.transpose(1, 2) / 2.0, dim=-1) @ v
    return a.transpose(0, 1).reshape(s, heads * HEAD_DIM) @ wo.t()


def spec():
    x, wqkv, wo = weights()
    return (lambda x, wqkv, wo: attn(x, wqkv, wo, HEADS)), (x, wqkv, wo), {0: [0]}


def build(rank, world_size, reduce=True):
    """Column-parallel QKV (this rank's heads of q, k and v), row-parallel output."""
    x, wqkv, wo = weights()
    n = HIDDEN // world_size
    q, k, v = wqkv.split(HIDDEN, dim=0)
    wr = torch.cat([t[rank * n:(rank + 1) * n] for t in (q, k, v)], 0).contiguous()
    wor = wo[:, rank * n:(rank + 1) * n].contiguous()

    def tp_attn(x, wqkv, wo):
        y = attn(x, wqkv, wo, HEADS // world_size)
        return funcol.all_reduce(y, "sum", dist.group.WORLD) if reduce else y

    return tp_attn, (x, wr, wor), {0: [0]}


def build_no_reduce(rank, world_size):
    """Forgets the all_reduce after the row-parallel output projection."""
    return build(rank, world_size, reduce=False)
