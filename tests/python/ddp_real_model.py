"""Real DistributedDataParallel training steps of a small MLP (for test_dp.py; tangle.ddp captures them).

The spec is the unwrapped model's step on the whole batch (MSE loss, mean over the batch); each rank
wraps its copy in DDP and steps on its rows. Planted bugs, both silent in a real run:
* ``build_no_sync``: the step runs under ``no_sync()`` (meant for all but the last accumulation
  micro-step): nothing is reduced, each rank keeps its own batch's gradient;
* ``build_sum_loss``: the loss is summed over the batch instead of averaged. DDP averages gradients
  over ranks, which matches a global mean, not a global sum: every gradient is 1/world_size too small.
"""
import torch
import torch.nn.functional as F

from tangle import ddp

IN, HID, OUT, BATCH = 8, 16, 4, 8


def model(out=OUT):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(IN, HID), torch.nn.GELU(), torch.nn.Linear(HID, out))


def batch(out=OUT):
    g = torch.Generator().manual_seed(1)
    return torch.randn(BATCH, IN, generator=g), torch.randn(BATCH, out, generator=g)


def mse(out, y):
    return F.mse_loss(out, y)


def mse_sum(out, y):
    return F.mse_loss(out, y, reduction="sum")


def spec():
    return ddp.spec_program(model(), batch(), mse)


def spec_sum():
    return ddp.spec_program(model(), batch(), mse_sum)


def build(rank, world_size):
    return ddp.ddp_program(model(), batch(), mse, rank, world_size)


def build_no_sync(rank, world_size):
    return ddp.ddp_program(model(), batch(), mse, rank, world_size, sync=False)


def build_sum_loss(rank, world_size):
    return ddp.ddp_program(model(), batch(), mse_sum, rank, world_size)
