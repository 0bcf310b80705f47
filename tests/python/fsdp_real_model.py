"""Real FSDP2 (fully_shard) training steps of a small MLP (for test_dp.py; tangle.fsdp captures them).

The spec is the unwrapped model's step on the whole batch (MSE loss, mean over the batch); each
rank shards its copy with ``fully_shard`` and steps on its rows. ``build`` has every dim 0 even
over 2 ranks; ``build_padded`` has a last layer of 3 rows (FSDP pads it to 4: rank 1 holds one
real row). Planted bug, silent in a real run: ``build_sum_loss`` sums the loss over the batch;
FSDP averages gradients over ranks, which matches a global mean, not a global sum.
"""

from tangle import fsdp

# the same MLP, batch and losses as the real DDP steps (an output width argument for the padded case)
from ddp_real_model import batch, model, mse, mse_sum  # noqa: E402,F401


def spec():
    return fsdp.spec_program(model(), batch(), mse)


def spec_padded():
    return fsdp.spec_program(model(3), batch(3), mse)


def spec_sum():
    return fsdp.spec_program(model(), batch(), mse_sum)


def build(rank, world_size):
    return fsdp.fsdp_program(model(), batch(), mse, rank, world_size)


def build_padded(rank, world_size):
    return fsdp.fsdp_program(model(3), batch(3), mse, rank, world_size)


def build_sum_loss(rank, world_size):
    return fsdp.fsdp_program(model(), batch(), mse_sum, rank, world_size)


def build_force_sum(rank, world_size):
    """Reduce-scatter with sum, then FSDP's own div_ by the world size."""
    return fsdp.fsdp_program(model(), batch(), mse, rank, world_size, force_sum=True)


def build_divide_by_one(rank, world_size):
    """Planted bug: a gradient divide factor of 1 (summed, never averaged)."""
    return fsdp.fsdp_program(model(), batch(), mse, rank, world_size, force_sum=True, divide_factor=1.0)


def build_per_layer(rank, world_size):
    """fully_shard on each Linear, then on the root (one all-gather and reduce-scatter per layer)."""
    return fsdp.fsdp_program(model(), batch(), mse, rank, world_size, per_layer=True)


def build_premul_sum(rank, world_size):
    """A gradient divide factor other than the world size: FSDP reduce-scatters with PREMUL_SUM,
    which tangle does not model (refused as bad input)."""
    return fsdp.fsdp_program(model(), batch(), mse, rank, world_size, divide_factor=3.0)


def build_no_sync(rank, world_size):
    """Gradient accumulation over 2 micro-batches: the first under set_requires_gradient_sync(False)
    (FSDP keeps the unsharded gradient), the last reduce-scatters the sum."""
    return fsdp.fsdp_program(model(), batch(), mse, rank, world_size, micro=2)


def build_no_sync_on_last(rank, world_size):
    """Planted bug: the toggle inverted, gradient sync on for the first micro-batch and off for the
    last: the first is reduce-scattered, the last's gradient stays unsharded and is never reduced."""
    return fsdp.fsdp_program(model(), batch(), mse, rank, world_size, micro=2, sync_at=0)


def _dim1_if_matrix(param):
    """shard_placement_fn: each weight matrix sharded on its columns (Shard(1)), the rest on rows."""
    from torch.distributed.tensor import Shard

    return Shard(1) if param.ndim == 2 else None


def build_shard_dim1(rank, world_size):
    """shard_placement_fn puts both weights on Shard(1): FSDP all-gathers into a temporary and
    concatenates the ranks' chunks on dim 1 (aten.cat.out into its buffer); the gradients are chunked
    on dim 1 and concatenated on dim 0 before the reduce-scatter."""
    return fsdp.fsdp_program(model(), batch(), mse, rank, world_size, shard_placement_fn=_dim1_if_matrix)
