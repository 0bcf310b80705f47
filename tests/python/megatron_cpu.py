"""Patches that let megatron-core 0.16 build and trace GPTModel on a CPU-only machine (test helper).

Used as ``tangle verify megatron:gpt --setup megatron_cpu`` (with this folder on PYTHONPATH): setup()
runs first in every capture process. tangle itself patches nothing. The patches:
* ``torch.cuda.current_device()`` answers "cpu": Megatron allocates scratch buffers on it;
* the CUDA RNG tracker's ``fork()`` is a no-op context: it would save/restore CUDA RNG states
  (with dropout 0 and CPU initialization nothing random happens inside it);
* megatron.core.utils' ``warnings.warn`` is silenced: rank 0 alone warns "tp_group is None" inside
  forward, which Dynamo cannot trace (fullgraph), so rank 0's program would differ from the others'.
* ``torch.distributed.all_reduce`` is the functional all-reduce copied back into the tensor (what
  Dynamo itself turns a synchronous in-place all-reduce into), and an ``async_op=True`` call returns
  a handle whose wait() has nothing left to do: Dynamo refuses async collectives, and the backward of
  Megatron's column-parallel layers starts its input-gradient all-reduce that way (to overlap it with
  the weight gradient; the values are the same).
"""
import contextlib
import os
import types


class _NoCudaRngTracker:
    def fork(self, name=None):
        return contextlib.nullcontext()

    def add(self, name, seed):
        pass

    def reset(self):
        pass

    def is_initialized(self):
        return True


class _Done:
    """The handle of an all-reduce that already finished."""

    def wait(self):
        return None


def _all_reduce_now(tensor, op=None, group=None, async_op=False):
    import torch.distributed as dist
    from torch.distributed import _functional_collectives as funcol
    op = dist.ReduceOp.SUM if op is None else op
    tensor.copy_(funcol.all_reduce(tensor, funcol.REDUCE_OP_TO_STR[op], group or dist.group.WORLD))
    return _Done() if async_op else None


def setup():
    os.environ.setdefault("CUDA_DEVICE_MAX_CONNECTIONS", "1")  # else a warning about it in forward
    import torch
    torch.cuda.current_device = lambda: "cpu"
    import megatron.core.utils as utils
    from megatron.core.tensor_parallel import random
    random._CUDA_RNG_STATE_TRACKER = _NoCudaRngTracker()
    random._CUDA_RNG_STATE_TRACKER_INITIALIZED = True
    utils.warnings = types.SimpleNamespace(warn=lambda *args, **kwargs: None)
    torch.distributed.all_reduce = _all_reduce_now
