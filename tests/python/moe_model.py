"""A small mixture-of-experts layer under expert parallelism (test model for `tangle verify MODULE:build`).

Written after torchtitan's MoE (torchtitan.models.common.moe): a router linear, softmax scores, top-k,
grouped experts stored as [E, hidden, dim] parameters run by a loop over the local experts (torchtitan's
for-loop expert path), a shared expert, token dispatch to the experts' ranks with all_to_all_single and
the combine back with a second all_to_all_single, then the score-weighted sum.

Why not torchtitan's own MoE: its token dispatcher sorts tokens with argsort, reads the all-to-all split
sizes with `.tolist()` (data-dependent sizes, a graph break or unbacked symbols) and scatters back with
scatter_add; those sizes exist only at run time. Here the dispatch has a fixed capacity instead: every
source rank sends each expert one slot per local token, and the router's top-k mask zeroes the tokens not
routed there (GShard-style dense dispatch with capacity = tokens per rank, so nothing is dropped). The
split sizes are therefore a documented input of the capture: E_local * TOKENS rows to every rank.

Every rank holds its own TOKENS tokens (the batch is split over the EP ranks, as with data parallelism)
and experts [r * E_local, (r + 1) * E_local) of every expert weight (Shard(0)). The spec is the same layer
unparallelized (one rank, all experts, no collectives) over all ranks' tokens.

Planted bugs: `build_wrong_ranks` dispatches each expert's tokens to the rank after its owner (the
expert-parallel group's ranks assigned wrongly); `build_no_combine_weights` sums the experts' outputs
without the router weights.
"""
import torch
import torch.distributed._functional_collectives as funcol
import torch.nn.functional as F

DIM, HIDDEN, EXPERTS, TOP_K, TOKENS = 8, 16, 4, 2, 4  # TOKENS per rank


def _weights(world_size):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(world_size * TOKENS, DIM, generator=g)
    router = torch.randn(EXPERTS, DIM, generator=g)
    w1 = torch.randn(EXPERTS, HIDDEN, DIM, generator=g)
    w2 = torch.randn(EXPERTS, DIM, HIDDEN, generator=g)
    w3 = torch.randn(EXPERTS, HIDDEN, DIM, generator=g)
    s1 = torch.randn(HIDDEN, DIM, generator=g)
    s2 = torch.randn(DIM, HIDDEN, generator=g)
    s3 = torch.randn(HIDDEN, DIM, generator=g)
    return x, router, w1, w2, w3, s1, s2, s3


def _ffn(x, w1, w2, w3):
    return (F.silu(x @ w1.t()) * (x @ w3.t())) @ w2.t()


def moe_layer(ep, group=None, owner_shift=0, combine_weights=True):
    """The layer for `ep` expert-parallel ranks (ep=1: the spec). `owner_shift` != 0 is the wrong-ranks bug."""
    local = EXPERTS // ep

    def layer(x, router, w1, w2, w3, s1, s2, s3):
        tokens = x.shape[0]
        scores = torch.softmax(x @ router.t(), dim=-1)                         # [T, E]
        top = torch.topk(scores, TOP_K, dim=-1).indices                        # [T, K]
        mask = F.one_hot(top, EXPERTS).sum(dim=1).to(x.dtype)                 # [T, E], 1 on the top-k
        weights = scores * mask                                                # zero off the top-k
        # dispatch: one block of token slots per expert, grouped by the rank that owns the expert
        order = [((e // local + owner_shift) % ep) * local + e % local for e in range(EXPERTS)]
        send = torch.cat([x * mask[:, e:e + 1] for e in order], dim=0)        # [E * T, D]
        if ep > 1:
            splits = [local * tokens] * ep
            recv = funcol.all_to_all_single(send, splits, splits, group)      # from each source: its block for my experts
        else:
            recv = send
        outs = []
        for j in range(local):                                                 # my experts
            xj = torch.cat([recv[(s * local + j) * tokens:(s * local + j + 1) * tokens] for s in range(ep)], dim=0)
            outs.append(_ffn(xj, w1[j], w2[j], w3[j]))                         # [ep * T, D]
        # combine: each source rank's slots back to it, in expert order
        back = torch.cat([outs[j][s * tokens:(s + 1) * tokens] for s in range(ep) for j in range(local)], dim=0)
        if ep > 1:
            back = funcol.all_to_all_single(back, splits, splits, group)
        y = _ffn(x, s1, s2, s3)                                                # the shared expert
        for e in range(EXPERTS):
            routed = back[e * tokens:(e + 1) * tokens]
            y = y + (weights[:, e:e + 1] * routed if combine_weights else routed)
        return y

    return layer


def spec():
    return moe_layer(1), _weights(SPEC_WORLD)


SPEC_WORLD = 2


def build(rank, world_size, owner_shift=0, combine_weights=True):
    import torch.distributed as dist
    x, router, w1, w2, w3, s1, s2, s3 = _weights(world_size)
    local = EXPERTS // world_size
    mine = slice(rank * local, (rank + 1) * local)
    rows = slice(rank * TOKENS, (rank + 1) * TOKENS)
    group = dist.group.WORLD
    fn = moe_layer(world_size, group, owner_shift, combine_weights)
    return fn, (x[rows].contiguous(), router, w1[mine].contiguous(), w2[mine].contiguous(), w3[mine].contiguous(),
                s1, s2, s3)


def build_wrong_ranks(rank, world_size):
    return build(rank, world_size, owner_shift=1)


def build_no_combine_weights(rank, world_size):
    return build(rank, world_size, combine_weights=False)


def relation(world_size):
    return ("S.x = shard(D*.x, dim=0)\nS.router = D*.router\n"
            "S.w1 = shard(D*.w1, dim=0)\nS.w2 = shard(D*.w2, dim=0)\nS.w3 = shard(D*.w3, dim=0)\n"
            "S.s1 = D*.s1\nS.s2 = D*.s2\nS.s3 = D*.s3\n"
            "expect S.output = shard(D*.output, dim=0)\n")
