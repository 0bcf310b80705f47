"""Ring attention (torch's context parallelism) for `tangle verify MODULE:build`.

The sequence is split over the ranks. Each rank attends its queries to every rank's keys and values one block
at a time with torch's own ring loop (`torch.distributed.tensor.experimental._context_parallel._attention.
_templated_ring_attention`, the code behind `context_parallel`), calling the CPU flash-attention kernel per block
and merging the partial results with their log-sum-exps (the online-softmax merge:
out - sigmoid(lse_b - lse) * (out - out_b), lse - logsigmoid(lse - lse_b)). torch dispatches CP attention only
for the CUDA kernels, so the ring is called directly with the CPU kernel; K/V travel by the all-gather rotater
(torch's default) and rank r sees its own block first, then r-1, r-2, ... With a causal mask (`*_causal`), rank r
masks its own block and skips the later ones (torch's ring without load balancing), or with torch's default
round-robin load balancing (`build_causal_balanced`: rank r holds chunks r and 2N-1-r of 2N, the relation
`relation_balanced` says so).

The spec is one attention over the whole sequence, one rank; both return (out, lse).
Planted bugs: `build_no_ring` attends to the rank's own keys only (the ring never turns);
`build_causal_unmasked` runs the causal ring with every block unmasked (is_causal dropped);
`build_causal_balanced_swapped` holds the round-robin chunks in the wrong order (2N-1-r first, what torch's
masks assume is chunk r); `build_causal_balanced_unbalanced_ring` runs the ring without load balancing on
round-robin shards (the unbalanced ring's masks on the balanced layout); `build_causal_wrong_way` turns the
all-gather rotater the wrong way (rank r reads block r+i at step i, not r-i, while the causal masks still assume
r-i: rank r attends to later keys; 4 ranks, since with 2 the two neighbours are one rank).
"""
import torch

B, H, SEQ, D = 1, 2, 8, 4
_sdpa = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu


def _weights():
    g = torch.Generator().manual_seed(0)
    return tuple(torch.randn(B, H, SEQ, D, generator=g) for _ in range(3))


def _spec(causal):
    def attn(q, k, v):
        out, lse = _sdpa(q, k, v, is_causal=causal)
        return out, lse
    return attn, _weights()


def spec():
    return _spec(False)


def spec_causal():
    return _spec(True)


def _chunks(rank, world_size, balanced, swapped=False):
    """Rank r's sequence positions: block r, or (balanced) chunks r and 2N-1-r of 2N (torch's round-robin;
    `swapped`: the rank holds them in the wrong order, 2N-1-r first)."""
    if not balanced:
        local = SEQ // world_size
        return [(rank * local, (rank + 1) * local)]
    c = SEQ // (2 * world_size)
    spans = [(rank * c, (rank + 1) * c), ((2 * world_size - 1 - rank) * c, (2 * world_size - rank) * c)]
    return spans[::-1] if swapped else spans


def _wrong_way_kv(torch_rotater):
    """torch's all-gather rotater reading the next ranks' blocks (r+1, r+2, ...) instead of the previous ones."""
    import torch.distributed as dist

    class Backwards(torch_rotater):
        def next_buffer(self):
            size = dist.get_world_size(self._pg)
            return self._aggregated_buffer.chunk(size)[(dist.get_rank(self._pg) + self._idx) % size]
    return Backwards


def _wrong_way_grad(torch_rotater):
    """torch's all-to-all rotater (the backward's dk/dv) with its destinations reversed: rank r sends to r-1."""
    import torch.distributed as dist
    import torch.distributed._functional_collectives as ft_c

    class Backwards(torch_rotater):
        def exchange_buffers(self, curr_buffer):
            size = dist.get_world_size(self._pg)
            self._buffer = ft_c.permute_tensor(curr_buffer.contiguous(), [size - 1] + list(range(size - 1)), self._pg)
    return Backwards


_TORCH_ROTATERS = {}


def set_rotaters(cp, kv_wrong_way=False, grad_wrong_way=False):
    """Installs torch's rotaters, or a wrong-way one, for the next ring traced: _create_rotater reads the module's
    class names when the ring runs, so a planted bug's class must be in place then (and torch's back for the next
    build)."""
    for name, wrong, make in (("_AllGatherRotater", kv_wrong_way, _wrong_way_kv),
                              ("_AllToAllRotater", grad_wrong_way, _wrong_way_grad)):
        torch_rotater = _TORCH_ROTATERS.setdefault(name, getattr(cp, name))
        setattr(cp, name, make(torch_rotater) if wrong else torch_rotater)


def _ring(rank, world_size, causal=False, turn=True, balanced=False, swapped=False, load_balance=None,
          wrong_way=False):
    import torch.distributed as dist
    from torch.distributed.tensor.experimental._context_parallel import _attention as cp
    # torch refuses load balancing without a causal mask; `load_balance` False runs the ring without it on
    # round-robin shards (the planted bug: the unbalanced ring's masks on balanced data)
    cp._cp_options.enable_load_balance = balanced if load_balance is None else load_balance
    set_rotaters(cp, kv_wrong_way=wrong_way)

    def attn(q, k, v):
        if not turn:
            out, lse = _sdpa(q, k, v, is_causal=causal)  # my keys only: no ring
        else:
            out, lse = cp._templated_ring_attention(dist.group.WORLD, 2, _sdpa, q, k, v, is_causal=causal)
        return out, lse
    spans = _chunks(rank, world_size, balanced, swapped)
    return attn, tuple(torch.cat([t[:, :, a:b] for a, b in spans], dim=2).contiguous() for t in _weights())


def build(rank, world_size):
    return _ring(rank, world_size)


def build_no_ring(rank, world_size):
    return _ring(rank, world_size, turn=False)


def build_causal(rank, world_size):
    return _ring(rank, world_size, causal=True)


def build_causal_wrong_way(rank, world_size):
    return _ring(rank, world_size, causal=True, wrong_way=True)


def build_causal_balanced(rank, world_size):
    return _ring(rank, world_size, causal=True, balanced=True)


def build_causal_balanced_swapped(rank, world_size):
    return _ring(rank, world_size, causal=True, balanced=True, swapped=True)


def build_causal_balanced_unbalanced_ring(rank, world_size):
    return _ring(rank, world_size, causal=True, balanced=True, load_balance=False)


def relation_balanced_swapped(world_size):
    """The swapped shards' true layout: rank r holds chunk 2N-1-r, then chunk r."""
    c = SEQ // (2 * world_size)
    def whole(x):
        lo = [f"slice(D{r}.{x}, dim=2, start={c}, end={2 * c})" for r in range(world_size)]
        hi = [f"slice(D{r}.{x}, dim=2, start=0, end={c})" for r in reversed(range(world_size))]
        return f"concat({', '.join(lo + hi)}, dim=2)"
    text = "".join(f"S.{x} = {whole(x)}\n" for x in "qkv")
    return text + "".join(f"expect S.output{i} = {whole(f'output{i}')}\n" for i in (0, 1))


def build_causal_unmasked(rank, world_size):
    return _ring(rank, world_size, causal=False)


def relation_balanced(world_size):
    """S.x is the 2N chunks in order: chunk j < N is rank j's first half, chunk 2N-1-r rank r's second."""
    c = SEQ // (2 * world_size)
    def whole(x):
        lo = [f"slice(D{r}.{x}, dim=2, start=0, end={c})" for r in range(world_size)]
        hi = [f"slice(D{r}.{x}, dim=2, start={c}, end={2 * c})" for r in reversed(range(world_size))]
        return f"concat({', '.join(lo + hi)}, dim=2)"
    text = "".join(f"S.{x} = {whole(x)}\n" for x in "qkv")
    return text + "".join(f"expect S.output{i} = {whole(f'output{i}')}\n" for i in (0, 1))


def relation(world_size):
    # outputs named per rank: with a causal mask rank 0 returns its first block's result, the others a merge
    outs = [", ".join(f"D{r}.output{i}" for r in range(world_size)) for i in (0, 1)]
    return ("S.q = shard(D*.q, dim=2)\nS.k = shard(D*.k, dim=2)\nS.v = shard(D*.v, dim=2)\n"
            f"expect S.output0 = concat({outs[0]}, dim=2)\nexpect S.output1 = concat({outs[1]}, dim=2)\n")
