"""Parallel styles with a planted bug, for `--plan PATTERN=plan_bugs:NAME` in the HF tests.

Each is a transformers TensorParallelLayer a user could write: it runs, it produces tensors of the
right shapes, and the result is wrong."""
from torch.distributed.tensor import Partial
from transformers.distributed.tensor_parallel import RowwiseParallel

# A row-parallel linear whose output is declared partial: its partial sums are never reduced.
rowwise_unreduced = RowwiseParallel(output_layouts=Partial())
