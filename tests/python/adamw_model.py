"""One AdamW step on parameters sharded over the ranks (test helper for test_dp.py).

The spec runs ``torch.optim.adamw.adamw`` (torch's own single-tensor implementation) on the full
parameter, its gradient and its optimizer state (exp_avg, exp_avg_sq, and the step count) and
returns the updated parameter and state. Each rank runs the same call on its dim-0 shard of each
(as FSDP / ZeRO shard optimizer state): the updated shard must equal the slice of the updated full
parameter. ``build_lr_scaled`` is the planted bug: the learning rate multiplied by the world size
(a linear-scaling rule applied where it does not belong).
"""
import torch
from torch.optim.adamw import adamw

ROWS, COLS = 8, 4
LR, WD = 1e-2, 0.01


def _state():
    g = torch.Generator().manual_seed(1)
    p, grad, m = (torch.randn(ROWS, COLS, generator=g) for _ in range(3))
    v = torch.rand(ROWS, COLS, generator=g)
    return p, grad, m, v, torch.tensor(3.0)


def _step(lr):
    def step(p, grad, exp_avg, exp_avg_sq, count):
        p, exp_avg, exp_avg_sq, count = p.clone(), exp_avg.clone(), exp_avg_sq.clone(), count.clone()
        adamw([p], [grad], [exp_avg], [exp_avg_sq], [], [count], foreach=False, capturable=False,
              differentiable=False, fused=None, grad_scale=None, found_inf=None, has_complex=False, amsgrad=False,
              beta1=0.9, beta2=0.999, lr=lr, weight_decay=WD, eps=1e-8, maximize=False)
        return p, exp_avg, exp_avg_sq

    return step


def spec():
    return _step(LR), _state()


def build(rank, world_size, lr_scale=1):
    p, grad, m, v, count = _state()
    rows = ROWS // world_size
    part = [t[rank * rows:(rank + 1) * rows].contiguous() for t in (p, grad, m, v)]
    return _step(LR * lr_scale), (*part, count)


def build_lr_scaled(rank, world_size):
    return build(rank, world_size, lr_scale=world_size)


def relation(world_size):
    lines = [f"S.{t} = shard(D*.{t}, dim=0)" for t in ("p", "grad", "exp_avg", "exp_avg_sq")] + ["S.count = D*.count"]
    lines += [f"expect S.output{i} = shard(D*.output{i}, dim=0)" for i in range(3)]
    return "\n".join(lines) + "\n"
