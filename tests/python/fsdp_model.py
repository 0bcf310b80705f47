"""FSDP2-style training step of a small MLP, functionally (test helper for test_dp.py).

``torch.distributed.fsdp.fully_shard`` keeps each parameter as a dim-0 shard, padded so that dim 0
divides by the world size (rank r holds padded rows r*P .. (r+1)*P, P = ceil(rows/N), the
unpadded part exposed). Before the forward, the ranks' shards are copied into one flat buffer
(``fsdp.all_gather_copy_in``), all-gathered (``all_gather_into_tensor``), and each parameter is
cut back out of the [N, flat] result (``fsdp.split_with_sizes_copy``) and narrowed to its real
rows. After the backward, each gradient is padded and chunked into N pieces side by side
(``fsdp.chunk_cat``) and reduce-scattered (``reduce_scatter_tensor``, ``avg``): rank r receives
the r-th chunk of every gradient. The FSDP ops write into preallocated buffers (``out=``), which
Dynamo cannot trace into one functional graph without FSDP's hooks; their functional ATen forms
are written here (cat of flattened shards, view, split_with_sizes, constant padding).

On 2 ranks, w2 and b2 (OUT = 3 rows) are not divisible by the world size: FSDP pads them to 4
rows, rank 1 holding one real row. Planted bugs: ``build_no_rs`` (each rank keeps its own gradient: no
reduce-scatter) and ``build_swapped`` (the chunks laid out in reversed rank order).
"""
import torch
import torch.distributed._functional_collectives as funcol

from dp_model import grads

IN, HID, OUT, BATCH = 4, 6, 3, 8
EVEN_OUT = 4  # the same model with every dim 0 divisible by 2 ranks
PARAMS = ("w1", "b1", "w2", "b2")


def _data(out=OUT):
    g = torch.Generator().manual_seed(2)
    w1, b1 = torch.randn(HID, IN, generator=g), torch.randn(HID, generator=g)
    w2, b2 = torch.randn(out, HID, generator=g), torch.randn(out, generator=g)
    x, y = torch.randn(BATCH, IN, generator=g), torch.randn(BATCH, out, generator=g)
    return x, y, w1, b1, w2, b2


def spec():
    return grads, _data()


def spec_even():
    return grads, _data(EVEN_OUT)


def _padded_rows(rows, n):
    return -(-rows // n)


def build(rank, world_size, bug=None, out=OUT):
    x, y, *params = _data(out)
    n, group = world_size, list(range(world_size))
    shapes = [p.shape for p in params]
    per = [_padded_rows(s[0], n) for s in shapes]                       # padded rows per rank
    inner = [s[1:].numel() for s in shapes]
    local = [p[rank * k:(rank + 1) * k] for p, k in zip(params, per)]  # unpadded part of the shard
    b = x.shape[0] // n
    xs, ys = x[rank * b:(rank + 1) * b].contiguous(), y[rank * b:(rank + 1) * b].contiguous()

    def pad_rows(t, rows):
        return torch.nn.functional.pad(t, [0, 0] * (t.dim() - 1) + [0, rows - t.shape[0]])

    def step(x, y, w1, b1, w2, b2):
        shards = (w1, b1, w2, b2)
        # all_gather_copy_in: each padded shard flattened into this rank's part of the flat buffer
        flat = torch.cat([pad_rows(s, k).reshape(-1) for s, k in zip(shards, per)])
        gathered = funcol.all_gather_tensor(flat, 0, group).view(n, -1)
        # split_with_sizes_copy: parameter i is columns [off_i, off_i + per_i*inner_i) of every row
        pieces = torch.split(gathered, [k * m for k, m in zip(per, inner)], dim=1)
        full = [pc.reshape(n * k, *s[1:])[:s[0]] for pc, k, s in zip(pieces, per, shapes)]
        gs = grads(x, y, *full)
        # chunk_cat: each gradient padded to N*per_i rows, as N chunks side by side
        chunks = torch.cat([pad_rows(g, n * k).reshape(n, -1) for g, k in zip(gs, per)], dim=1)
        if bug == "swapped":
            chunks = chunks.flip(0)
        if bug == "no_rs":
            mine = chunks[rank:rank + 1] / n
        else:
            mine = funcol.reduce_scatter_tensor(chunks, "avg", 0, group)
        outs = torch.split(mine.reshape(-1), [k * m for k, m in zip(per, inner)])
        return tuple(o.reshape(k, *s[1:])[:l.shape[0]] for o, k, s, l in zip(outs, per, shapes, local))

    return step, (xs, ys, *[t.contiguous() for t in local])


def build_even(rank, world_size):
    return build(rank, world_size, out=EVEN_OUT)


def build_even_no_rs(rank, world_size):
    return build(rank, world_size, bug="no_rs", out=EVEN_OUT)


def build_even_swapped(rank, world_size):
    return build(rank, world_size, bug="swapped", out=EVEN_OUT)


def build_no_rs(rank, world_size):
    return build(rank, world_size, bug="no_rs")


def build_swapped(rank, world_size):
    return build(rank, world_size, bug="swapped")


def relation(world_size):
    lines = ["S.x = shard(D*.x, dim=0)", "S.y = shard(D*.y, dim=0)"]
    lines += [f"S.{p} = shard(D*.{p}, dim=0)" for p in PARAMS]
    lines += [f"expect S.output{i} = shard(D*.output{i}, dim=0)" for i in range(len(PARAMS))]
    return "\n".join(lines) + "\n"
