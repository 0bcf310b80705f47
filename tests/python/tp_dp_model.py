"""A Megatron-style MLP whose ranks have two process groups (test helper for `tangle verify MODULE:build`).

Each rank is tensor-parallel rank r of a TP group of all ranks, and also its own data-parallel group
(one replica per rank group: DP degree 1, as in Megatron's parallel_state with
data_parallel_size=1). Every rank creates every group, in the same order (as
torch.distributed.new_group requires), so the group names in the traced graphs agree across ranks.

`build_wrong_group` is the planted bug: the row-parallel all-reduce runs on the rank's data-parallel
group instead of the tensor-parallel group, so the partial products are never summed over the shards.
"""
import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol

HIDDEN, FFN, TOKENS = 8, 16, 4


def _weights():
    g = torch.Generator().manual_seed(0)
    return (torch.randn(FFN, HIDDEN, generator=g), torch.randn(HIDDEN, FFN, generator=g),
            torch.randn(TOKENS, HIDDEN, generator=g), torch.randn(HIDDEN, generator=g))


def spec():
    w1, w2, x, b2 = _weights()

    def mlp(x, w1, w2, b2):
        return torch.nn.functional.gelu(x @ w1.t()) @ w2.t() + b2

    return mlp, (x, w1, w2, b2)


def _groups(world_size):
    """(the tensor-parallel group, [data-parallel group of each rank]), created in one order everywhere."""
    tp_group = dist.new_group(list(range(world_size)))
    dp_groups = [dist.new_group([r]) for r in range(world_size)]
    return tp_group, dp_groups


def build(rank, world_size, wrong_group=False):
    w1, w2, x, b2 = _weights()
    tp_group, dp_groups = _groups(world_size)
    group = dp_groups[rank] if wrong_group else tp_group
    rows = FFN // world_size
    w1r = w1[rank * rows:(rank + 1) * rows].contiguous()     # column-parallel: Shard(0)
    w2r = w2[:, rank * rows:(rank + 1) * rows].contiguous()  # row-parallel: Shard(1)

    def mlp(x, w1, w2, b2):
        partial = torch.nn.functional.gelu(x @ w1.t()) @ w2.t()
        total = funcol.all_reduce(partial, "sum", group)  # row-parallel: sum the shards' products
        return total + b2

    return mlp, (x, w1r, w2r, b2)


def build_wrong_group(rank, world_size):
    return build(rank, world_size, wrong_group=True)


def relation(world_size):
    return ("S.x = D*.x\nS.w1 = shard(D*.w1, dim=0)\nS.w2 = shard(D*.w2, dim=1)\nS.b2 = D*.b2\n"
            "expect S.output = D*.output\n")
