"""Context parallelism for causal attention (test model for `tangle verify MODULE:build`).

The sequence is split over the ranks: rank r holds tokens [r * S/N, (r + 1) * S/N). Each rank projects its
tokens to q, k, v, applies rotary position embeddings (rotate-half form, as Llama) with the cos/sin rows of
its own positions, all-gathers k and v along the sequence (the all-gather form of torch's context_parallel /
torchtitan CP; a ring of send/recv is not modelled here), and attends with its rows of the causal mask
(query positions offset by r * S/N). The cos/sin tables and the additive causal mask are buffers covering
the whole sequence (as torchtitan's freqs_cis buffer), replicated on every rank; each rank slices its rows.
The spec is the same attention on the whole sequence, one rank.

Planted bug: `build_rope_from_zero` encodes every shard from position 0 (the rope table not offset, the
sequence-parallel RoPE bug TrainVerify found in a real planner).
"""
import math

import torch
import torch.distributed._functional_collectives as funcol

SEQ, DIM, HEAD = 8, 8, 4  # one sequence, one head of size HEAD


def _weights():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(SEQ, DIM, generator=g)
    wq, wk, wv = (torch.randn(HEAD, DIM, generator=g) for _ in range(3))
    wo = torch.randn(DIM, HEAD, generator=g)
    inv = 1.0 / (10000 ** (torch.arange(0, HEAD, 2, dtype=torch.float32) / HEAD))
    ang = torch.outer(torch.arange(SEQ, dtype=torch.float32), inv)
    cos = torch.cat([ang.cos(), ang.cos()], dim=-1)  # [SEQ, HEAD]
    sin = torch.cat([ang.sin(), ang.sin()], dim=-1)
    mask = torch.triu(torch.full((SEQ, SEQ), float("-inf")), diagonal=1)
    return x, wq, wk, wv, wo, cos, sin, mask


def _rope(t, cos, sin):
    half = t.shape[-1] // 2
    rotated = torch.cat([-t[:, half:], t[:, :half]], dim=-1)
    return t * cos + rotated * sin


def attention(world_size=1, group=None, rank=0, rope_offset=True, gather=funcol.all_gather_tensor):
    """gather: the K/V all-gather (a training step needs funcol.all_gather_tensor_autograd, whose backward is
    a reduce-scatter: every rank's queries send their K/V gradients back to the keys' owner)."""
    local = SEQ // world_size

    def attn(x, wq, wk, wv, wo, cos, sin, mask):
        start = rank * local
        pos = slice(start, start + local) if rope_offset else slice(0, local)
        rows = slice(start, start + local)
        q = _rope(x @ wq.t(), cos[pos], sin[pos])
        k = _rope(x @ wk.t(), cos[pos], sin[pos])
        v = x @ wv.t()
        if world_size > 1:  # exchange K/V: every rank sees the whole sequence's keys and values
            k = gather(k, 0, group)
            v = gather(v, 0, group)
        scores = (q @ k.t()) / math.sqrt(HEAD) + mask[rows]  # my query rows of the causal mask
        return torch.softmax(scores, dim=-1) @ v @ wo.t()

    return attn


def spec():
    return attention(), _weights()


def build(rank, world_size, rope_offset=True):
    import torch.distributed as dist
    x, *rest = _weights()
    local = SEQ // world_size
    fn = attention(world_size, dist.group.WORLD, rank, rope_offset)
    return fn, (x[rank * local:(rank + 1) * local].contiguous(), *rest)


def build_rope_from_zero(rank, world_size):
    return build(rank, world_size, rope_offset=False)


def relation(world_size):
    return ("S.x = shard(D*.x, dim=0)\nS.wq = D*.wq\nS.wk = D*.wk\nS.wv = D*.wv\nS.wo = D*.wo\n"
            "S.cos = D*.cos\nS.sin = D*.sin\nS.mask = D*.mask\n"
            "expect S.output = shard(D*.output, dim=0)\n")
