"""A sequence-parallel MLP whose token count stays symbolic (dynamic shapes).

The spec runs the MLP on all tokens; rank r runs it on its block of tokens
and all-gathers the results. Both are captured with the token dim marked
dynamic, so tangle sees sizes like f32[s0, 8] and must relate the spec's
token count to the ranks' (S.s0 = D0.s0 + D1.s0 from the input relation,
D0.s0 = D1.s0 from the all_gather)."""
import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol

HIDDEN, FFN, TOKENS = 8, 16, 6


def weights():
    g = torch.Generator().manual_seed(0)
    return (torch.randn(TOKENS, HIDDEN, generator=g), torch.randn(FFN, HIDDEN, generator=g),
            torch.randn(HIDDEN, FFN, generator=g))


def mlp(x, w1, w2):
    return torch.relu(x @ w1.t()) @ w2.t()


def spec():
    x, w1, w2 = weights()
    return mlp, (x, w1, w2), {0: [0]}


def build(rank, world_size, gather=True):
    x, w1, w2 = weights()
    rows = TOKENS // world_size
    xr = x[rank * rows:(rank + 1) * rows].contiguous()

    def sp_mlp(x, w1, w2):
        y = mlp(x, w1, w2)
        return funcol.all_gather_tensor(y, 0, dist.group.WORLD) if gather else y

    return sp_mlp, (xr, w1, w2), {0: [0]}


def build_split_in_rank(rank, world_size):
    """Every rank holds all tokens and takes its half with n // 2: right only
    when the token count is even (the last token is dropped otherwise)."""
    x, w1, w2 = weights()

    def sp_mlp(x, w1, w2):
        half = x.shape[0] // 2
        y = mlp(x[rank * half:(rank + 1) * half], w1, w2)
        return funcol.all_gather_tensor(y, 0, dist.group.WORLD)

    return sp_mlp, (x, w1, w2), {0: [0]}


def build_no_gather(rank, world_size):
    """Forgets the all_gather: each rank returns only its own block."""
    return build(rank, world_size, gather=False)
