"""A planted bug for tangle.megatron (test helper): row-parallel layers that forget their all-reduce.

setup() applies the CPU patches of megatron_cpu, then gives RowParallelLinear.forward (linear_proj
and linear_fc2) an identity in place of `reduce_from_tensor_model_parallel_region`: each rank then
keeps its partial sum. The vocab-parallel embedding keeps its all-reduce (it reads the original).
"""
import types

import megatron_cpu


def setup():
    megatron_cpu.setup()
    from megatron.core.tensor_parallel import layers
    forward = layers.RowParallelLinear.forward
    scope = dict(forward.__globals__, reduce_from_tensor_model_parallel_region=lambda x, group=None: x)
    layers.RowParallelLinear.forward = types.FunctionType(forward.__code__, scope, forward.__name__,
                                                          forward.__defaults__, forward.__closure__)
