"""A planted bug for tangle.megatron (test helper): row-parallel layers that forget their all-reduce.

setup() applies the CPU patches of megatron_cpu, then replaces RowParallelLinear.forward (linear_proj
and linear_fc2) by a plain product with the rank's weight columns whose partial sum is never reduced
over the ranks. The vocab-parallel embedding keeps its all-reduce.
"""
import megatron_cpu


def _forward_without_all_reduce(self, input_):
    output = input_ @ self.weight.t()  # this rank's partial sum; the all-reduce is missing
    if self.skip_bias_add:
        return output, self.bias
    return (output + self.bias if self.bias is not None else output), None


def setup():
    megatron_cpu.setup()
    from megatron.core.tensor_parallel import layers
    layers.RowParallelLinear.forward = _forward_without_all_reduce
