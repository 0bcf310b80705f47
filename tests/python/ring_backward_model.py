"""Ring attention's forward and backward (torch's context parallelism) for `tangle verify MODULE:build`.

Each rank holds its block of the sequence and the upstream gradient `dout` of its output rows. The forward is
torch's ring loop (`_templated_ring_attention`, as in ring_model.py); the backward is torch's own
`_templated_ring_attention_backward` (what `_scaled_dot_product_ring_flash_attention_backward` runs for the CUDA
kernels) with the CPU flash-attention backward kernel per block: K/V go round by the all-gather rotater, and each
block's K/V gradient travels with it by the all-to-all rotater (`permute_tensor`, rank r sends to r+1), collecting
every rank's contribution before it lands back on its owner. The capture runs under `torch.no_grad()`, so the
spec calls the backward kernel explicitly, as autograd would: one attention over the whole sequence and its
gradients with the global output and log-sum-exp.

With torch's round-robin load balancing (`build_causal_balanced`, `relation_balanced`): the sequence in 2N
chunks, rank r holding chunks r and 2N-1-r; the backward's partial steps use only the first key chunk (i <= r) or
only the second query chunk (i > r), and add their gradients into one chunk of the accumulator (`_partial_update`).

Planted bugs: `build_kept_grad` keeps the K/V gradient at home (each rank returns only its own queries'
contribution to its keys' gradients: the dk/dv never sent round the ring); `build_causal_unmasked_backward`
drops is_causal in the backward only (the diagonal block's gradients computed as if the future keys were
visible); `build_causal_wrong_way` sends each K/V gradient to rank r-1 instead of r+1 while K/V still arrive
from r-1 (the all-to-all rotater's destinations reversed), so a key block's gradient collects the terms of other
key blocks (4 ranks: with 2, r-1 and r+1 are the same rank). `build_causal_balanced_wrong_way` and
`build_causal_balanced_kept_grad` are those two on the load-balanced ring (bench/ring, 4 ranks).
"""
import torch

from ring_model import set_rotaters

B, H, SEQ, D = 1, 2, 8, 4
_sdpa = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu
_sdpa_backward = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward.default


def _inputs():
    g = torch.Generator().manual_seed(1)
    return tuple(torch.randn(B, H, SEQ, D, generator=g) for _ in range(4))  # q, k, v, dout


def _spec(causal):
    def step(q, k, v, dout):
        out, lse = _sdpa(q, k, v, is_causal=causal)
        dq, dk, dv = _sdpa_backward(dout, q, k, v, out, lse, 0.0, causal)
        return out, lse, dq, dk, dv
    return step, _inputs()


def spec():
    return _spec(False)


def spec_causal():
    return _spec(True)


def _block_backward(*, grad_out, query, key, value, out, logsumexp, is_causal, dropout_p):
    """torch's ring calls its op with keywords; the ATen overload's `out` keyword reads to dynamo as an out= tensor,
    refused once a load-balanced step passes a non-contiguous chunk of the output, so the kernel is called
    positionally."""
    return _sdpa_backward(grad_out, query, key, value, out, logsumexp, dropout_p, is_causal)


def _ring(rank, world_size, causal=False, send_grads=True, backward_causal=None, balanced=False, wrong_way=False):
    import torch.distributed as dist
    from torch.distributed.tensor.experimental._context_parallel import _attention as cp
    cp._cp_options.enable_load_balance = balanced
    set_rotaters(cp, grad_wrong_way=wrong_way)
    group = dist.group.WORLD

    def step(q, k, v, dout):
        out, lse = cp._templated_ring_attention(group, 2, _sdpa, q, k, v, is_causal=causal)
        if send_grads:
            dq, dk, dv = cp._templated_ring_attention_backward(
                group, 2, _block_backward, grad_out=dout, grad_out_name="grad_out", query=q, key=k, value=v,
                out=out, logsumexp=lse, is_causal=causal if backward_causal is None else backward_causal,
                dropout_p=0.0)[:3]
        else:
            # the bug: my queries' gradients of my own keys only, never summed over the ring
            dq, dk, dv = _sdpa_backward(dout, q, k, v, out, lse, 0.0, causal)
        return out, lse, dq, dk, dv
    if balanced:
        c = SEQ // (2 * world_size)
        spans = [(rank * c, (rank + 1) * c), ((2 * world_size - 1 - rank) * c, (2 * world_size - rank) * c)]
    else:
        spans = [(rank * SEQ // world_size, (rank + 1) * SEQ // world_size)]
    return step, tuple(torch.cat([t[:, :, a:b] for a, b in spans], dim=2).contiguous() for t in _inputs())


def build(rank, world_size):
    return _ring(rank, world_size)


def build_causal(rank, world_size):
    return _ring(rank, world_size, causal=True)


def build_causal_balanced(rank, world_size):
    return _ring(rank, world_size, causal=True, balanced=True)


def build_causal_wrong_way(rank, world_size):
    return _ring(rank, world_size, causal=True, wrong_way=True)


def build_causal_balanced_wrong_way(rank, world_size):
    return _ring(rank, world_size, causal=True, balanced=True, wrong_way=True)


def build_causal_balanced_kept_grad(rank, world_size):
    return _ring(rank, world_size, causal=True, balanced=True, send_grads=False)


def build_kept_grad(rank, world_size):
    return _ring(rank, world_size, send_grads=False)


def build_causal_unmasked_backward(rank, world_size):
    return _ring(rank, world_size, causal=True, backward_causal=False)


def relation(world_size):
    """Every input and output is split along the sequence: rank r's rows (q, k, v, dout; out, lse and the
    gradients dq, dk, dv of its own block)."""
    text = "".join(f"S.{x} = shard(D*.{x}, dim=2)\n" for x in ("q", "k", "v", "dout"))
    return text + "".join(
        f"expect S.output{i} = concat({', '.join(f'D{r}.output{i}' for r in range(world_size))}, dim=2)\n"
        for i in range(5))


def relation_balanced(world_size):
    """S.x is the 2N chunks in order: chunk j < N is rank j's first half, chunk 2N-1-r rank r's second (inputs,
    out, lse and every gradient alike)."""
    c = SEQ // (2 * world_size)
    def whole(x):
        lo = [f"slice(D{r}.{x}, dim=2, start=0, end={c})" for r in range(world_size)]
        hi = [f"slice(D{r}.{x}, dim=2, start={c}, end={2 * c})" for r in reversed(range(world_size))]
        return f"concat({', '.join(lo + hi)}, dim=2)"
    text = "".join(f"S.{x} = {whole(x)}\n" for x in ("q", "k", "v", "dout"))
    return text + "".join(f"expect S.output{i} = {whole(f'output{i}')}\n" for i in range(5))
