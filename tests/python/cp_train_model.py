"""A training step (forward, loss, backward) of context-parallel causal attention (cp_model.py's attention).

The spec is the attention's step on the whole sequence: squared error against a target summed and divided by
the sequence's element count, ``loss.backward()``; the gradients of the four projection weights are the
outputs. Each rank holds its sequence rows of the input and the target and runs the attention with the K/V
all-gather (``funcol.all_gather_tensor`` is differentiable: its backward is a reduce-scatter that sends the K/V
gradients of every rank's queries back to the rows' owner). Its loss is its rows' squared error divided by the
global element count (global normalization, so the ranks' losses add up to the spec's), and the gradients of
the replicated weights are all-reduced (sum) over the CP ranks. make_fx records the whole step (tangle.pp).

Planted bugs, both silent in a real run:
* ``build_no_reduce``: the weight gradients are never reduced over the CP ranks;
* ``build_no_kv_grad``: the other ranks' K/V rows are gathered detached (as constants), so the gradients of
  every rank's queries with respect to the keys it did not compute never reach the keys' owner.

The local-mean loss (each rank's rows' mean) with the gradients averaged over the ranks (DDP / FSDP's
default) is ``build_mean_loss``: the 1/2 between a rank's seed and the spec's is carried through the
attention backward as div(clean, 2) (scale lemmas); the search stops at a limit there (inconclusive, not
yet proved). ``build_mean_loss_not_divided`` / ``build_mean_loss_divided_twice`` are planted bugs.
"""
import torch
import torch.distributed._functional_collectives as funcol

import cp_model


class Attention(torch.nn.Module):
    """cp_model.attention with its weights as parameters and its RoPE tables and causal mask as buffers."""

    def __init__(self, world_size=1, rank=0, gather=funcol.all_gather_tensor):
        super().__init__()
        _, wq, wk, wv, wo, cos, sin, mask = cp_model._weights()
        for name, w in (("wq", wq), ("wk", wk), ("wv", wv), ("wo", wo)):
            setattr(self, name, torch.nn.Parameter(w))
        for name, b in (("cos", cos), ("sin", sin), ("mask", mask)):
            self.register_buffer(name, b)
        group = torch.distributed.group.WORLD if world_size > 1 else None
        self.attn = cp_model.attention(world_size, group, rank, gather=gather)

    def forward(self, x):
        return self.attn(x, self.wq, self.wk, self.wv, self.wo, self.cos, self.sin, self.mask)


def _detached_gather(t, dim, group):
    """The other ranks' rows as constants; only this rank's own rows keep their gradient."""
    full = funcol.all_gather_tensor(t.detach(), dim, group)
    n, rank = t.shape[0], torch.distributed.get_rank()
    return torch.cat([full[:rank * n], t, full[(rank + 1) * n:]], dim=0)


def _batch():
    x = cp_model._weights()[0]
    return x, torch.randn(cp_model.SEQ, cp_model.DIM, generator=torch.Generator().manual_seed(1))


def _loss(out, y):
    return ((out - y) ** 2).sum() / (cp_model.SEQ * cp_model.DIM)


def _local_mean_loss(out, y):
    """The rank's rows' mean squared error (what a data-parallel loop computes on its own batch)."""
    return ((out - y) ** 2).sum() / out.numel()


def _program(m, rank, world_size, reduce=True, loss=_loss, divide=1):
    """Forward, loss, backward; each weight gradient all-reduced (sum) over the CP ranks, then divided
    by `divide` (the world size for a local-mean loss: the ranks' gradients averaged, as DDP / FSDP do)."""
    from tangle import pp

    params = dict(m.named_parameters())

    def step(*batch):  # *batch: make_fx names the placeholders arg0_1, arg1_1 as tangle.pp expects
        x, y = batch
        loss(m(x), y).backward()
        grads = tuple(p.grad for p in params.values())
        if world_size > 1 and reduce:
            grads = tuple(funcol.wait_tensor(funcol.all_reduce(g, "sum", list(range(world_size))))
                          for g in grads)
        if divide != 1:
            grads = tuple(g / divide for g in grads)
        return grads

    n = cp_model.SEQ // world_size
    rows = tuple(t[rank * n:(rank + 1) * n].contiguous() for t in _batch())
    return pp.RankProgram(step=step, args=rows, params=params, outputs=list(params),
                          inputs={a: (a, rank) for a in ("arg0", "arg1")}, buffers=dict(m.named_buffers()))


def spec():
    return _program(Attention(), 0, 1)


def build(rank, world_size):
    return _program(Attention(world_size, rank), rank, world_size)


def build_no_reduce(rank, world_size):
    return _program(Attention(world_size, rank), rank, world_size, reduce=False)


def build_no_kv_grad(rank, world_size):
    return _program(Attention(world_size, rank, _detached_gather), rank, world_size)


def build_mean_loss(rank, world_size):
    """Each rank's loss is its own rows' mean; the gradients are summed over the ranks and divided by
    the world size (averaged), which is the spec's global mean again."""
    return _program(Attention(world_size, rank), rank, world_size, loss=_local_mean_loss, divide=world_size)


def build_mean_loss_not_divided(rank, world_size):
    """Planted bug: the local-mean loss with its gradients summed but never divided by the world size."""
    return _program(Attention(world_size, rank), rank, world_size, loss=_local_mean_loss)


def build_mean_loss_divided_twice(rank, world_size):
    """Planted bug: the local-mean loss with its gradients divided by the world size squared."""
    return _program(Attention(world_size, rank), rank, world_size, loss=_local_mean_loss,
                    divide=world_size * world_size)
