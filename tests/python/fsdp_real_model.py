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


def spec_mixed_precision():
    """The sequential step under FSDP's mixed-precision casts: f32 parameters cast to bf16 at use,
    the input cast to bf16 (MixedPrecisionPolicy.cast_forward_inputs), compute in bf16, the
    gradients flowing back through the casts to the f32 parameters."""
    import torch

    return fsdp.spec_program(model(), batch(), mse, param_dtype=torch.bfloat16)


def build(rank, world_size):
    return fsdp.fsdp_program(model(), batch(), mse, rank, world_size)


def spec_narrow():
    return fsdp.spec_program(model(2), batch(2), mse)


def build_narrow(rank, world_size):
    """The last layer has 2 rows: over 4 ranks, ranks 2 and 3 hold empty shards of it."""
    return fsdp.fsdp_program(model(2), batch(2), mse, rank, world_size)


def build_narrow_sum_loss(rank, world_size):
    """Planted bug on the narrow model: the loss summed over the batch (FSDP averages)."""
    return fsdp.fsdp_program(model(2), batch(2), mse_sum, rank, world_size)


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


def build_sum_loss_summed(rank, world_size):
    """A summed loss, its gradients reduce-scattered with sum and never divided: correct (the spec's
    gradient of the whole batch's sum is the sum of the ranks')."""
    return fsdp.fsdp_program(model(), batch(), mse_sum, rank, world_size, force_sum=True, divide_factor=1.0)


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


def _copy_out_as_dim0():
    """FSDP's all-gather copy-out, made to lay out the params marked `_tangle_as_dim0` as if they
    were Shard(0) (installed once; unmarked params, other models, are copied out as FSDP does)."""
    from torch.distributed.fsdp._fully_shard import _fsdp_param_group as group
    from torch.distributed.tensor import Shard

    if getattr(group.foreach_all_gather_copy_out, "_tangle", False):
        return
    original = group.foreach_all_gather_copy_out

    def copy_out(result, fsdp_params, pg):
        marked = [(fp, fp.fsdp_placement) for fp in fsdp_params if getattr(fp, "_tangle_as_dim0", False)]
        for fp, _ in marked:
            fp.fsdp_placement = Shard(0)
        try:
            return original(result, fsdp_params, pg)
        finally:
            for fp, placement in marked:
                fp.fsdp_placement = placement

    copy_out._tangle = True
    group.foreach_all_gather_copy_out = copy_out


def build_shard_dim1_gathered_on_dim0(rank, world_size):
    """Planted bug: the all-gather's copy-out ignores the Shard(1) placement (no chunk and cat on
    dim 1): each weight's buffer holds the ranks' column blocks one after the other, so the
    unsharded weight is wrong while every shape still fits."""
    _copy_out_as_dim0()
    m = model()
    prog = fsdp.fsdp_program(m, batch(), mse, rank, world_size, shard_placement_fn=_dim1_if_matrix)
    for group in m._get_fsdp_state()._fsdp_param_groups:
        for fp in group.fsdp_params:
            fp._tangle_as_dim0 = fp.fsdp_placement.dim != 0
    return prog


def spec_mixed_precision_fp16():
    """spec_mixed_precision in float16."""
    import torch

    return fsdp.spec_program(model(), batch(), mse, param_dtype=torch.float16)


def spec_mixed_precision_output_f32():
    """spec_mixed_precision with the model's output cast back to f32 before the loss (output_dtype)."""
    import torch

    return fsdp.spec_program(model(), batch(), mse, param_dtype=torch.bfloat16, output_dtype=torch.float32)


def _mixed_precision(m, rank, world_size, **policy):
    import torch
    from torch.distributed.fsdp import MixedPrecisionPolicy

    policy = MixedPrecisionPolicy(**{"param_dtype": torch.bfloat16, "reduce_dtype": torch.float32, **policy})
    return fsdp.fsdp_program(m, batch(), mse, rank, world_size, mp_policy=policy)


def build_mixed_precision_bf16_reduce(rank, world_size):
    """MixedPrecisionPolicy(param_dtype=bf16) (reduce_dtype None, or bf16, which FSDP clamps to None):
    the bf16 gradients are reduce-scattered in bf16 (avg) and the reduced shard cast to f32 after."""
    return _mixed_precision(model(), rank, world_size, reduce_dtype=None)


def build_mixed_precision_bf16_reduce_never_reduce_scattered(rank, world_size):
    """Planted bug: the bf16-reduce step with its gradients reduce-scattered over a group of one."""
    m = model()
    prog = _mixed_precision(m, rank, world_size, reduce_dtype=None)
    m.set_custom_reduce_scatter(_own_chunk_reduce_scatter(rank, world_size))
    return prog


def build_mixed_precision_fp16(rank, world_size):
    """MixedPrecisionPolicy(param_dtype=float16): float16 risks overflow, so FSDP divides the
    gradients by ~sqrt(ranks) before a sum reduce-scatter and by the rest after (2 ranks: div_ by
    2 before, nothing after), then casts the reduced shard to f32."""
    import torch

    return _mixed_precision(model(), rank, world_size, param_dtype=torch.float16, reduce_dtype=None)


def build_mixed_precision_fp16_not_predivided(rank, world_size):
    """Planted bug: the float16 step without FSDP's pre-division (its divide factors made (1, 1)):
    the ranks' gradients are summed, never averaged."""
    _undivided_fp16()
    return build_mixed_precision_fp16(rank, world_size)


def _undivided_fp16():
    """FSDP's gradient divide factors, made to skip both divisions for float16 (installed once: every
    later float16 capture in the process is undivided too, so test_dp captures this case last)."""
    import torch
    from torch.distributed.fsdp._fully_shard import _fsdp_collectives as col

    if getattr(col._get_gradient_divide_factors, "_tangle_undivided", False):
        return
    original = col._get_gradient_divide_factors

    def factors(rs_group, ar_group, reduce_dtype, *args, **kwargs):
        pre, post, rs_op, ar_op = original(rs_group, ar_group, reduce_dtype, *args, **kwargs)
        return (None, None, rs_op, ar_op) if reduce_dtype == torch.float16 else (pre, post, rs_op, ar_op)

    factors._tangle_undivided = True
    col._get_gradient_divide_factors = factors


def build_mixed_precision_output_f32(rank, world_size):
    """MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=f32, output_dtype=f32): the root's output
    cast back to f32 before the loss (the spec is spec_mixed_precision_output_f32)."""
    import torch

    return _mixed_precision(model(), rank, world_size, output_dtype=torch.float32)


def _no_input_cast(m, rank, world_size):
    import torch
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    for child in m.children():
        if any(True for _ in child.parameters()):
            fully_shard(child, mp_policy=MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32))
    return _mixed_precision(m, rank, world_size, cast_forward_inputs=False)


def build_mixed_precision_no_input_cast(rank, world_size):
    """cast_forward_inputs=False on the root, per-layer fully_shard with the default (True) on each
    Linear: the first layer casts the f32 input to bf16 on entry, as the root would have."""
    return _no_input_cast(model(), rank, world_size)


def build_mixed_precision_no_input_cast_never_reduce_scattered(rank, world_size):
    """Planted bug: build_mixed_precision_no_input_cast with each layer's gradients reduce-scattered
    over a group of one."""
    m = model()
    prog = _no_input_cast(m, rank, world_size)
    scatter = _own_chunk_reduce_scatter(rank, world_size)
    for module in m.modules():
        if hasattr(module, "set_custom_reduce_scatter") and module._get_fsdp_state()._fsdp_param_groups:
            module.set_custom_reduce_scatter(scatter)
    return prog


def build_mixed_precision_output_f32_cast_from_wrong_param(rank, world_size):
    """Planted bug: the output_dtype=f32 step with rank 1's bf16 bias piece cast from its weight shard's
    first elements (as build_mixed_precision_cast_from_wrong_param)."""
    import torch

    _cast_from_wrong_param()
    m = model()
    prog = _mixed_precision(m, rank, world_size, output_dtype=torch.float32)
    if rank == 1:
        fps = [fp for group in m._get_fsdp_state()._fsdp_param_groups for fp in group.fsdp_params]
        fps[1]._tangle_cast_from = fps[0]
    return prog


def build_mixed_precision_no_input_cast_anywhere(rank, world_size):
    """cast_forward_inputs=False on every fully_shard: the f32 input meets the first bf16 weight
    (torch itself refuses the matmul while capturing)."""
    return _mixed_precision(model(), rank, world_size, cast_forward_inputs=False)


def build_mixed_precision(rank, world_size):
    """MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=f32): FSDP casts each f32 shard into a
    bf16 piece of a fresh buffer (_foreach_copy_), all-gathers in bf16, computes in bf16 and
    reduce-scatters the bf16 gradients cast to f32 by its chunk_cat into an f32 buffer (the spec is
    spec_mixed_precision)."""
    return _mixed_precision(model(), rank, world_size)


def build_mixed_precision_never_reduce_scattered(rank, world_size):
    """Planted bug: the mixed-precision step with the gradients never reduce-scattered over the ranks
    (a custom reduce-scatter over a group of one, as build_never_reduce_scattered)."""
    m = model()
    prog = _mixed_precision(m, rank, world_size)
    m.set_custom_reduce_scatter(_own_chunk_reduce_scatter(rank, world_size))
    return prog


def _cast_from_wrong_param():
    """FSDP's all-gather inputs, made to take the bf16 input of a param marked `_tangle_cast_from`
    from the first elements of another param's shard (installed once; unmarked params are cast
    as FSDP does)."""
    from torch.distributed.fsdp._fully_shard import _fsdp_collectives as col

    if getattr(col._get_param_all_gather_inputs, "_tangle", False):
        return
    original = col._get_param_all_gather_inputs

    def inputs(fsdp_params):
        out = original(fsdp_params)
        for i, fp in enumerate(fsdp_params):
            other = getattr(fp, "_tangle_cast_from", None)
            if other is not None:
                out[i] = [other._sharded_param_data[:out[i][0].numel()].to(out[i][0].dtype)]
        return out

    inputs._tangle = True
    col._get_param_all_gather_inputs = inputs


def build_mixed_precision_cast_from_wrong_param(rank, world_size):
    """Planted bug: on rank 1, the bf16 all-gather input of the first layer's bias is cast from the
    first elements of the first layer's weight shard (the sizes fit, the values do not)."""
    _cast_from_wrong_param()
    m = model()
    prog = _mixed_precision(m, rank, world_size)
    if rank == 1:
        fps = [fp for group in m._get_fsdp_state()._fsdp_param_groups for fp in group.fsdp_params]
        fps[1]._tangle_cast_from = fps[0]
    return prog


def _own_chunk_reduce_scatter(rank, world_size):
    """A custom reduce-scatter (FSDPModule.set_custom_reduce_scatter) that reduces over a process
    group of this rank alone, on this rank's own chunk of the input: every size still fits, but no
    rank ever sees another's gradient."""
    import torch.distributed as dist
    from torch.distributed.fsdp._fully_shard._fsdp_collectives import DefaultReduceScatter

    # every rank creates every group, in one order, as new_group requires: the names differ by rank
    alone = [dist.new_group([r]) for r in range(world_size)][rank]

    class OwnChunk(DefaultReduceScatter):
        def __call__(self, output_tensor, input_tensor, group, op, async_op=False):
            own = input_tensor.view(world_size, -1)[rank]
            return dist.reduce_scatter_tensor(output_tensor, own, group=alone, op=op, async_op=async_op)

    return OwnChunk()


def build_never_reduce_scattered(rank, world_size):
    """Planted bug: the gradients are never reduce-scattered over the ranks (a custom reduce-scatter
    over a group of one): each rank keeps its chunk of its own gradient, silently (every size fits)."""
    m = model()
    prog = fsdp.fsdp_program(m, batch(), mse, rank, world_size)
    m.set_custom_reduce_scatter(_own_chunk_reduce_scatter(rank, world_size))
    return prog
