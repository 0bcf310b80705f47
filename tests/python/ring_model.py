"""Ring attention (torch's context parallelism) for `tangle verify MODULE:build`.

The sequence is split over the ranks. Each rank attends its queries to every rank's keys and values one block
at a time with torch's own ring loop (`torch.distributed.tensor.experimental._context_parallel._attention.
_templated_ring_attention`, the code behind `context_parallel`), calling the CPU flash-attention kernel per block
and merging the partial results with their log-sum-exps (the online-softmax merge:
out - sigmoid(lse_b - lse) * (out - out_b), lse - logsigmoid(lse - lse_b)). torch dispatches CP attention only
for the CUDA kernels, so the ring is called directly with the CPU kernel; K/V travel by the all-gather rotater
(the default) and the order of the blocks is the ring's: rank r sees its own block first, then r-1, r-2, ...

The spec is one attention over the whole sequence, one rank. Causal attention is not modelled here yet.
Planted bug: `build_no_ring` attends to the rank's own keys only (the ring never turns).
"""
import torch

B, H, SEQ, D = 1, 2, 8, 4


def _weights():
    g = torch.Generator().manual_seed(0)
    return tuple(torch.randn(B, H, SEQ, D, generator=g) for _ in range(3))


def spec():
    def attn(q, k, v):
        out, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v)
        return out, lse
    return attn, _weights()


def _ring(rank, world_size, merge=True):
    import torch.distributed as dist
    from torch.distributed.tensor.experimental._context_parallel import _attention as cp

    cp._cp_options.enable_load_balance = False  # torch refuses load balancing without a causal mask

    def attn(q, k, v):
        if merge:
            out, lse = cp._templated_ring_attention(dist.group.WORLD, 2, torch.ops.aten._scaled_dot_product_flash_attention_for_cpu,
                                                    q, k, v, is_causal=False)
            return out, lse
        return torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v)  # my keys only: no ring
    local = SEQ // world_size
    return attn, tuple(t[:, :, rank * local:(rank + 1) * local].contiguous() for t in _weights())


def build(rank, world_size):
    return _ring(rank, world_size)


def build_no_ring(rank, world_size):
    return _ring(rank, world_size, merge=False)


def relation(world_size):
    return ("S.q = shard(D*.q, dim=2)\nS.k = shard(D*.k, dim=2)\nS.v = shard(D*.v, dim=2)\n"
            "expect S.output0 = shard(D*.output0, dim=2)\nexpect S.output1 = shard(D*.output1, dim=2)\n")
