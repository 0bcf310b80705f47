"""A Megatron-style top-1 switch MLP under tensor parallelism (issue 11, known failing class 3).

Written after Megatron-LM's SwitchMLP: a router linear, softmax, top-1 with torch.max, then for each
expert the tokens routed to it are found with `nonzero`, read with integer indexing (`x[idx, :]`), run
through the expert MLP and written back with `index_put` (`out[idx, :] = y`); the result is scaled by the
router probability. Each expert's token count is data-dependent: an unbacked symbol (u0, u1, ...) in the
captured graph, one per expert and per graph.

Under TP every rank holds all tokens and the whole (replicated) router, so every rank routes alike; each
expert MLP is Megatron's column-parallel up projection (rows of w1[e]) and row-parallel down projection
(columns of w2[e]) followed by an all-reduce. `routing="mask"` routes with a boolean mask instead
(`x[mask]`, `out[mask] = y`). The spec is the same layer on one rank.

Planted bug: `build_no_all_reduce` drops the all-reduce after the row-parallel down projection.
"""
import torch
import torch.distributed._functional_collectives as funcol

DIM, HIDDEN, EXPERTS, TOKENS = 8, 16, 4, 8


def _weights():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(TOKENS, DIM, generator=g)
    router = torch.randn(EXPERTS, DIM, generator=g)
    w1 = torch.randn(EXPERTS, HIDDEN, DIM, generator=g)
    w2 = torch.randn(EXPERTS, DIM, HIDDEN, generator=g)
    return x, router, w1, w2


def switch_layer(tp, group=None, all_reduce=True, routing="nonzero"):
    def layer(x, router, w1, w2):
        probs = torch.softmax(x @ router.t(), dim=-1)                   # [T, E]
        prob, top = torch.max(probs, dim=-1)                             # top-1
        out = torch.zeros_like(x)
        for e in range(EXPERTS):
            if routing == "nonzero":
                where = (top == e).nonzero()                             # [u, 1]: a data-dependent size
                h = x[where, :]                                          # [u, 1, D]
            else:
                where = top == e
                h = x[where]                                             # [u, D]
            y = torch.relu(h @ w1[e].t()) @ w2[e].t()                    # column- then row-parallel
            if tp > 1 and all_reduce:
                y = funcol.all_reduce(y, "sum", group)
            if routing == "nonzero":
                out[where, :] = y
            else:
                out[where] = y
        return out * prob.unsqueeze(-1)

    return layer


def spec(routing="nonzero"):
    return switch_layer(1, routing=routing), _weights()


def spec_mask():
    return spec("mask")


def build(rank, world_size, all_reduce=True, routing="nonzero"):
    import torch.distributed as dist
    x, router, w1, w2 = _weights()
    part = HIDDEN // world_size
    mine = slice(rank * part, (rank + 1) * part)
    fn = switch_layer(world_size, dist.group.WORLD, all_reduce, routing)
    return fn, (x, router, w1[:, mine].contiguous(), w2[:, :, mine].contiguous())


def build_no_all_reduce(rank, world_size):
    return build(rank, world_size, all_reduce=False)


def build_mask(rank, world_size):
    return build(rank, world_size, routing="mask")


def relation(world_size):
    return ("S.x = D*.x\nS.router = D*.router\n"
            "S.w1 = shard(D*.w1, dim=1)\nS.w2 = shard(D*.w2, dim=2)\n"
            "expect S.output = D*.output\n")
