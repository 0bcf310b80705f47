"""A training step (forward, loss, backward) of the top-1 switch MLP of switch_model.py under TP=2.

The layer's input is an activation (a replicated input projection w_in before the router and the experts),
so the step differentiates every routing operator: the experts' `x[idx, :]` (its backward an index_put with
accumulate into zeros), the combine `out[idx, :] = y` (its backward reads the routed rows of the output
gradient), torch.max's top-1 probability and the softmax. Each expert's token count is an unbacked size of
each graph (nonzero on fake tensors), never a number. `routing="mask"` (spec_mask, build_mask) routes with
a boolean mask instead (`x[mask]`, `out[mask] = y`).

TP as in Megatron-LM: every rank holds all tokens, the replicated w_in and router; each expert's w1 is split
by rows (column-parallel) and w2 by columns (row-parallel). The expert's input passes through
`copy_to_tp` (forward identity, backward all-reduce: each rank's input gradient is its shard's part) and its
output through `reduce_from_tp` (forward all-reduce, backward identity). Gradients: w_in and the router are
the spec's on every rank; w1 / w2 are the ranks' shards of the spec's.

Planted bugs: `build_no_all_reduce` drops the forward all-reduce (every rank combines a partial expert
output); `build_no_backward_all_reduce` drops copy_to_tp's backward all-reduce (the forward is right, but
w_in's gradient misses the other rank's share of the expert input gradient).
"""
import torch
import torch.distributed._functional_collectives as funcol

import switch_model

TOKENS, DIM, EXPERTS = switch_model.TOKENS, switch_model.DIM, switch_model.EXPERTS
EXPERT = ("w1", "w2")


def _all_reduce(t, ranks):
    return funcol.wait_tensor(funcol.all_reduce(t, "sum", ranks))


class _ReduceFromTP(torch.autograd.Function):
    """Row-parallel output: all-reduce forward, identity backward (Megatron's reduce_from_...region)."""

    @staticmethod
    def forward(ctx, t, ranks):
        return _all_reduce(t, ranks)

    @staticmethod
    def backward(ctx, g):
        return g, None


class _CopyToTP(torch.autograd.Function):
    """Column-parallel input: identity forward, all-reduce backward (Megatron's copy_to_...region)."""

    @staticmethod
    def forward(ctx, t, ranks):
        ctx.ranks = ranks
        return t.view_as(t)

    @staticmethod
    def backward(ctx, g):
        return _all_reduce(g, ctx.ranks), None


class Switch(torch.nn.Module):
    def __init__(self, world_size=1, rank=0, forward_reduce=True, backward_reduce=True, routing="nonzero"):
        super().__init__()
        _, router, w1, w2 = switch_model._weights()
        g = torch.Generator().manual_seed(2)
        self.w_in = torch.nn.Parameter(torch.randn(DIM, DIM, generator=g))
        self.router = torch.nn.Parameter(router)
        part = w1.shape[1] // world_size
        mine = slice(rank * part, (rank + 1) * part)
        self.w1 = torch.nn.Parameter(w1[:, mine].contiguous())
        self.w2 = torch.nn.Parameter(w2[:, :, mine].contiguous())
        self.ranks = list(range(world_size)) if world_size > 1 else None
        self.forward_reduce, self.backward_reduce, self.routing = forward_reduce, backward_reduce, routing

    def forward(self, inp):
        x = inp @ self.w_in.t()
        probs = torch.softmax(x @ self.router.t(), dim=-1)
        prob, top = torch.max(probs, dim=-1)
        out = torch.zeros_like(x)
        for e in range(EXPERTS):
            if self.routing == "nonzero":
                where = (top == e).nonzero()                             # [u, 1]: a data-dependent size
                h = x[where, :]
            else:
                where = top == e
                h = x[where]                                             # [u, D]
            if self.ranks and self.backward_reduce:
                h = _CopyToTP.apply(h, self.ranks)
            y = torch.relu(h @ self.w1[e].t()) @ self.w2[e].t()
            if self.ranks and self.forward_reduce:
                y = _ReduceFromTP.apply(y, self.ranks)
            if self.routing == "nonzero":
                out[where, :] = y
            else:
                out[where] = y
        return out * prob.unsqueeze(-1)


def _program(rank, world_size, **bugs):
    from tangle import pp

    # Fake tensors with a shape environment: nonzero's count is an unbacked size (u0), not this data's
    with pp.tensors(data_dependent=True):
        m = Switch(world_size, rank, **bugs)
        x = switch_model._weights()[0]
        target = torch.randn(TOKENS, DIM, generator=torch.Generator().manual_seed(3))
    params = dict(m.named_parameters())

    def step(*batch):  # *batch: make_fx names the placeholders arg0_1, arg1_1 as tangle.pp expects
        x, y = batch
        (((m(x) - y) ** 2).sum() / y.numel()).backward()
        return tuple(p.grad for p in params.values())

    shards = {"w1": (1, rank, world_size), "w2": (2, rank, world_size)} if world_size > 1 else {}
    # every TP rank holds the whole batch: chunk 0 of the spec's
    return pp.RankProgram(step=step, args=(x, target), params=params, outputs=list(params),
                          inputs={a: (a, 0) for a in ("arg0", "arg1")}, shards=shards,
                          data_dependent=True, stack_traces=True)


def spec():
    return _program(0, 1)


def spec_mask():
    return _program(0, 1, routing="mask")


def build(rank, world_size):
    return _program(rank, world_size)


def build_no_all_reduce(rank, world_size):
    return _program(rank, world_size, forward_reduce=False)


def build_no_backward_all_reduce(rank, world_size):
    return _program(rank, world_size, backward_reduce=False)


def build_mask(rank, world_size):
    return _program(rank, world_size, routing="mask")
