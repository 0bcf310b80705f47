"""A computation replicated on every TP rank feeding an FFN-only TP MLP (TrainVerify's plans).

Spec: x [T, H] -> h = x + norm(x, wa) @ wr (a stand-in for the replicated attention) ->
out = h + down(silu(gate(n)) * up(n)) with n = norm(h, wf). Impl (2 TP ranks): the batch
arrives as two microbatches (x0, x1), each rank computes the norms and the replicated block on
both (the same values on both ranks), gate/up column-parallel, down row-parallel + all-reduce.
The spec's x is the concat of a rank's microbatches, on every rank, so each rank's residual
stream is a concat piece of the spec's. `bug="wrong_norm_weight"`: rank 1 swaps the two norm
weights (wf in the replicated block's norm, wa in the FFN's).
"""
import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol

T, H, F = 4, 4, 8  # tokens (2 per microbatch), hidden, FFN width


def weights():
    g = torch.Generator().manual_seed(0)
    r = lambda *s: torch.randn(*s, generator=g)  # noqa: E731
    return dict(x=r(T, H), wa=r(H), wr=r(H, H), wf=r(H), wg=r(F, H), wu=r(F, H), wd=r(H, F))


def norm(x, w):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * w


def block(x, wa, wr, wf, wg, wu, wd, group=None):
    h = x + norm(x, wa) @ wr
    n = norm(h, wf)
    y = (torch.nn.functional.silu(n @ wg.t()) * (n @ wu.t())) @ wd.t()
    if group is not None:
        y = funcol.all_reduce(y, "sum", group)
    return h + y


def spec():
    w = weights()
    return (lambda x, wa, wr, wf, wg, wu, wd: block(x, wa, wr, wf, wg, wu, wd)), tuple(w.values())


def build(rank, world_size, bug=None):
    w = weights()
    per = F // world_size
    part = slice(rank * per, (rank + 1) * per)

    def fn(x0, x1, wa, wr, wf, wg, wu, wd):
        if bug == "wrong_norm_weight" and rank == 1:
            wa, wf = wf, wa
        return tuple(block(x, wa, wr, wf, wg, wu, wd, dist.group.WORLD) for x in (x0, x1))

    half = T // 2
    return fn, (w["x"][:half].contiguous(), w["x"][half:].contiguous(), w["wa"], w["wr"], w["wf"],
                w["wg"][part].contiguous(), w["wu"][part].contiguous(), w["wd"][:, part].contiguous())


def build_wrong_norm_weight(rank, world_size):
    return build(rank, world_size, "wrong_norm_weight")


def relation(world_size):
    # every rank holds the whole batch as two microbatches; weights replicated or sharded. Named per rank:
    # the placeholders' order follows first use, which the bug changes on rank 1.
    ranks = range(world_size)
    rows = [f"S.x = concat(D{r}.x0, D{r}.x1, dim=0)" for r in ranks]
    rows += [f"S.{w} = D{r}.{w}" for w in ("wa", "wr", "wf") for r in ranks]
    rows += [f"S.{w} = concat({', '.join(f'D{r}.{w}' for r in ranks)}, dim={d})"
             for w, d in (("wg", 0), ("wu", 0), ("wd", 1))]
    return "\n".join(rows) + "\n"
