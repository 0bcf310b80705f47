"""A Megatron-style MLP on a 2-way TP x 2-way DP grid of 4 ranks (test helper for `tangle verify MODULE:build`).

Rank r is TP rank r % 2 of TP group {2k, 2k+1} (k = r // 2) and DP rank r // 2 of DP group {r % 2, r % 2 + 2}.
The batch is split over the DP replicas; the weights are sharded over the TP ranks and replicated over DP.
Every rank creates every group in one order, so the traced group names agree across ranks.

`build` is forward only; `build_train` adds a hand-written backward (a custom backward as a planner emits it):
the input gradient of the column-parallel linear is all-reduced over the TP group, the weight gradients over the
DP group. `build_train_dgrad_global` runs that input-gradient all-reduce over the global group (all 4 ranks),
`build_train_dgrad_skipped` skips it: TrainVerify's wrong-group dgrad class.
"""
import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol

HIDDEN, FFN, TOKENS, TP, DP = 8, 16, 4, 2, 2


def _weights():
    g = torch.Generator().manual_seed(0)
    return (torch.randn(FFN, HIDDEN, generator=g), torch.randn(HIDDEN, FFN, generator=g),
            torch.randn(TOKENS, HIDDEN, generator=g), torch.randn(HIDDEN, generator=g),
            torch.randn(TOKENS, HIDDEN, generator=g))


def spec():
    w1, w2, x, b2, _ = _weights()

    def mlp(x, w1, w2, b2):
        return torch.nn.functional.gelu(x @ w1.t()) @ w2.t() + b2

    return mlp, (x, w1, w2, b2)


def _groups():
    """(TP groups, DP groups, the global group), created in one order on every rank."""
    tp = [dist.new_group([2 * k, 2 * k + 1]) for k in range(DP)]
    dp = [dist.new_group([t, t + TP]) for t in range(TP)]
    return tp, dp, dist.new_group(list(range(TP * DP)))


def _local(rank, w1, w2, x, *rest):
    t, d = rank % TP, rank // TP
    rows, batch = FFN // TP, TOKENS // DP
    return (x[d * batch:(d + 1) * batch].contiguous(), w1[t * rows:(t + 1) * rows].contiguous(),
            w2[:, t * rows:(t + 1) * rows].contiguous(), *[v[d * batch:(d + 1) * batch].contiguous() for v in rest])


def build(rank, world_size):
    assert world_size == TP * DP, f"tp_dp_grid needs {TP * DP} ranks"
    w1, w2, x, b2, _ = _weights()
    tp, _, _ = _groups()
    group = tp[rank // TP]
    x, w1, w2 = _local(rank, w1, w2, x)

    def mlp(x, w1, w2, b2):
        partial = torch.nn.functional.gelu(x @ w1.t()) @ w2.t()
        return funcol.all_reduce(partial, "sum", group) + b2

    return mlp, (x, w1, w2, b2)


def relation(world_size):
    rows = []
    for name, dim in (("x", None), ("w1", 0), ("w2", 1)):
        for k in range(DP if dim is not None else TP):
            ranks = [2 * k, 2 * k + 1] if dim is not None else [k, k + TP]
            rows.append(f"S.{name} = concat({', '.join(f'D{r}.{name}' for r in ranks)}, dim={dim or 0})")
    rows.append("S.b2 = D*.b2")
    for t in range(TP):
        rows.append(f"expect S.output = concat(D{t}.output, D{t + TP}.output, dim=0)")
    return "\n".join(rows) + "\n"


# ------------------------------------------------- a training step with a hand-written backward

def _train(x, w1, w2, b2, dy):
    z = x @ w1.t()
    y = z @ w2.t() + b2
    dz = dy @ w2
    return y, dz @ w1, dz.t() @ x, dy.t() @ z


def spec_train():
    w1, w2, x, b2, dy = _weights()
    return _train, (x, w1, w2, b2, dy)


def build_train(rank, world_size, bug=None):
    """Forward: column w1, row w2 + TP all-reduce. Custom backward: the input gradient (dgrad) of the
    column-parallel w1 all-reduced over the TP group; the weight gradients over the DP group.
    bug "dgrad_global": that dgrad all-reduce over all 4 ranks; "dgrad_skipped": not run."""
    assert world_size == TP * DP, f"tp_dp_grid needs {TP * DP} ranks"
    w1, w2, x, b2, dy = _weights()
    tp, dp, world = _groups()
    tp_group, dp_group = tp[rank // TP], dp[rank % TP]
    x, w1, w2, dy = _local(rank, w1, w2, x, dy)

    def step(x, w1, w2, b2, dy):
        z = x @ w1.t()
        y = funcol.all_reduce(z @ w2.t(), "sum", tp_group) + b2
        dz = dy @ w2
        dx = dz @ w1
        if bug != "dgrad_skipped":
            dx = funcol.all_reduce(dx, "sum", world if bug == "dgrad_global" else tp_group)
        dw1 = funcol.all_reduce(dz.t() @ x, "sum", dp_group)
        dw2 = funcol.all_reduce(dy.t() @ z, "sum", dp_group)
        return y, dx, dw1, dw2

    return step, (x, w1, w2, b2, dy)


def relation_train(world_size):
    rows = relation(world_size).splitlines()[:-2] + ["S.dy = concat(D0.dy, D2.dy, dim=0)",
                                                     "S.dy = concat(D1.dy, D3.dy, dim=0)"]
    for t in range(TP):
        rows += [f"expect S.output{i} = concat(D{t}.output{i}, D{t + TP}.output{i}, dim=0)" for i in (0, 1)]
    for k in range(DP):
        rows += [f"expect S.output2 = concat(D{2 * k}.output2, D{2 * k + 1}.output2, dim=0)",
                 f"expect S.output3 = concat(D{2 * k}.output3, D{2 * k + 1}.output3, dim=1)"]
    return "\n".join(rows) + "\n"
