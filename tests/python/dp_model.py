"""Data-parallel training steps of a small MLP (test helper for `tangle verify MODULE:build`).

The spec is one training step's gradient computation on the GLOBAL batch: an MLP (Linear, GELU,
Linear) and an MSE loss averaged over the global batch, differentiated with ``torch.func.grad``
(the captured graph holds the forward and the backward). Each rank of ``build`` sees its batch
shard (rows rank*B/N .. (rank+1)*B/N), computes the gradient of the mean loss over its own rows,
and reduces it the way DDP's default communication hook does: each gradient divided by the world
size, then all-reduced with ``sum`` (``torch.distributed.algorithms.ddp_comm_hooks.default_hooks.
allreduce_hook``). DDP's reducer runs that hook from autograd hooks that ``torch.compile`` does not
trace into a single graph; the functional form here is what the reducer computes.

Planted bugs: ``build_no_reduce`` (the gradients are never all-reduced) and ``build_no_div`` (summed
without dividing by the world size).
"""
import torch
import torch.distributed._functional_collectives as funcol

IN, HID, OUT, BATCH = 8, 16, 4, 8
PARAMS = ("w1", "b1", "w2", "b2")


def _data():
    g = torch.Generator().manual_seed(0)
    w1, b1 = torch.randn(HID, IN, generator=g), torch.randn(HID, generator=g)
    w2, b2 = torch.randn(OUT, HID, generator=g), torch.randn(OUT, generator=g)
    x, y = torch.randn(BATCH, IN, generator=g), torch.randn(BATCH, OUT, generator=g)
    return x, y, w1, b1, w2, b2


def loss(x, y, w1, b1, w2, b2):
    out = torch.nn.functional.linear(torch.nn.functional.gelu(torch.nn.functional.linear(x, w1, b1)), w2, b2)
    return ((out - y) ** 2).mean()


def grads(x, y, w1, b1, w2, b2):
    """The gradients of the mean loss over (x, y) with respect to the four parameters."""
    return torch.func.grad(lambda ps: loss(x, y, *ps))((w1, b1, w2, b2))


def spec():
    return grads, _data()


def _shard(t, rank, world_size):
    rows = t.shape[0] // world_size
    return t[rank * rows:(rank + 1) * rows].contiguous()


def build(rank, world_size, bug=None):
    x, y, *params = _data()

    def step(x, y, w1, b1, w2, b2):
        local = grads(x, y, w1, b1, w2, b2)
        if bug == "no_reduce":
            return local
        if bug == "no_div":
            return tuple(funcol.all_reduce(g, "sum", list(range(world_size))) for g in local)
        return tuple(funcol.all_reduce(g / world_size, "sum", list(range(world_size))) for g in local)

    return step, (_shard(x, rank, world_size), _shard(y, rank, world_size), *params)


def build_no_reduce(rank, world_size):
    return build(rank, world_size, bug="no_reduce")


def build_no_div(rank, world_size):
    return build(rank, world_size, bug="no_div")


def relation(world_size):
    lines = ["S.x = shard(D*.x, dim=0)", "S.y = shard(D*.y, dim=0)"] + [f"S.{p} = D*.{p}" for p in PARAMS]
    lines += [f"expect S.output{i} = D*.output{i}" for i in range(len(PARAMS))]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- gradient accumulation
# K microbatches per rank, each loss a mean over an equal-sized microbatch with no ignored labels
# (MSE here), scaled by 1/K; the microbatch gradients are summed (as .grad accumulates), then
# reduced over the data-parallel ranks as above. Rank r's microbatch k holds global rows
# (r*K + k)*M .. (r*K + k + 1)*M, M = BATCH / (N*K). With ignored labels (-100) a microbatch's mean
# is over its own count of valid labels and the 1/K scaling is wrong in general: not modelled here.
MICRO = 2


def build_accum(rank, world_size, scaled=True):
    x, y, *params = _data()
    m = BATCH // (world_size * MICRO)

    def step(x0, y0, x1, y1, w1, b1, w2, b2):
        total = None
        for xk, yk in ((x0, y0), (x1, y1)):
            scale = MICRO if scaled else 1
            g = torch.func.grad(lambda ps: loss(xk, yk, *ps) / scale)((w1, b1, w2, b2))
            total = g if total is None else tuple(a + b for a, b in zip(total, g))
        return tuple(funcol.all_reduce(g / world_size, "sum", list(range(world_size))) for g in total)

    rows = [slice((rank * MICRO + k) * m, (rank * MICRO + k + 1) * m) for k in range(MICRO)]
    return step, (x[rows[0]].contiguous(), y[rows[0]].contiguous(), x[rows[1]].contiguous(), y[rows[1]].contiguous(),
                  *params)


def build_accum_unscaled(rank, world_size):
    return build_accum(rank, world_size, scaled=False)


def relation_accum(world_size):
    def cat(name):
        parts = ", ".join(f"D{r}.{name}{k}" for r in range(world_size) for k in range(MICRO))
        return f"concat({parts}, dim=0)"

    lines = [f"S.x = {cat('x')}", f"S.y = {cat('y')}"] + [f"S.{p} = D*.{p}" for p in PARAMS]
    lines += [f"expect S.output{i} = D*.output{i}" for i in range(len(PARAMS))]
    return "\n".join(lines) + "\n"
