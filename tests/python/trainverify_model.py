"""TrainVerify's TP bug classes (SOSP'25 §8.3) as PyTorch model pairs: a tiny Llama-style block, hand-sharded.

`block(rank, world, bug)` is one rank's program; `spec()` the unparallelized one (world 1, the same code).
Tensor parallel over 4 ranks: RMSNorm (Gemma-style weight `1 + wn`) replicated; q/k/v column-parallel by
heads, RoPE from a replicated (cos, sin) table, eager attention, o row-parallel + all-reduce; an MLP
w1 column / w2 row-parallel + all-reduce; an lm_head column-parallel whose output is all-gathered.
The backward of the attention projections is written by hand (a custom backward, as a planner emits it)
from an upstream gradient `dq_up` etc. given per head: the input gradient `dh` of the column-parallel
q/k/v (a fan-in of three) is all-reduced over the TP group; RoPE's backward is applied to q's and k's
gradients. Outputs: logits, dh, dwq, dwk, dwv.

`seq_fn` is a sequence-parallel attention (tokens sharded over 2 ranks, k/v all-gathered) whose RoPE rows
must be the shard's rows of the replicated (cos, sin) table; the `rope_table` bug takes rows [0, Ts) on every
shard (positions not offset: each shard encoded as if it started the sequence).

Each bug names what it changes; `BUG_RANKS` the ranks it changes (the others' graphs are the correct ones).
"""
import torch
import torch.distributed._functional_collectives as funcol

T, H, NH, HD, FFN, V, EPS = 4, 8, 4, 2, 16, 16, 1e-6
TP = 4
BUG_RANKS = {"allreduce_noop": "all", "allreduce_removed": "all", "allreduce_to_allgather": "all",
             "allgather_to_allreduce": "all", "bwd_allreduce_missing": "all", "eps_one_rank": [1],
             "pow_one_rank": [2], "add_const_two_ranks": [1, 2], "bwd_fanin_one_rank": [3],
             "bwd_rope_swapped": "all", "scale_one_rank": [1], "scale_all_ranks": "all",
             "rope_table": "all"}


def _tensors():
    g = torch.Generator().manual_seed(0)
    r = lambda *s: torch.randn(*s, generator=g)  # noqa: E731
    pos = torch.arange(T, dtype=torch.float32)[:, None] * torch.tensor([1.0, 0.1])[None, :]
    return dict(x=r(T, H), wn=r(H), wq=r(H, H), wk=r(H, H), wv=r(H, H), wo=r(H, H), w1=r(FFN, H), w2=r(H, FFN),
                wlm=r(V, H), cos=pos.cos(), sin=pos.sin(), dq_up=r(NH, T, HD), dk_up=r(NH, T, HD),
                dv_up=r(NH, T, HD))


def _rot(t):  # rotate_half
    return torch.cat([-t[..., HD // 2:], t[..., :HD // 2]], dim=-1)


def _rot_t(g):  # the adjoint of rotate_half
    return torch.cat([g[..., HD // 2:], -g[..., :HD // 2]], dim=-1)


def _reduce(t, bug, world, on, rank):
    if world == 1:
        return t
    if bug is not None and bug == on:
        return t
    return funcol.all_reduce(t, "sum", list(range(world)))


def block_fn(rank, world, bug=None):
    n = NH // world
    mine = lambda b: bug == b  # noqa: E731

    def fn(x, wn, wq, wk, wv, wo, w1, w2, wlm, cos, sin, dq_up, dk_up, dv_up):
        p = 1 if mine("pow_one_rank") else 2
        eps = EPS * 100 if mine("eps_one_rank") else EPS
        one = 2.0 if mine("add_const_two_ranks") else 1.0
        h = x * torch.rsqrt(x.pow(p).mean(-1, keepdim=True) + eps) * (wn + one)
        q = (h @ wq.t()).view(T, n, HD).transpose(0, 1)
        k = (h @ wk.t()).view(T, n, HD).transpose(0, 1)
        v = (h @ wv.t()).view(T, n, HD).transpose(0, 1)
        qr, kr = q * cos + _rot(q) * sin, k * cos + _rot(k) * sin
        scale = HD ** -0.5 * (2.0 if mine("scale_one_rank") or mine("scale_all_ranks") else 1.0)
        a = torch.softmax(qr @ kr.transpose(1, 2) * scale, dim=-1) @ v
        o = a.transpose(0, 1).reshape(T, n * HD) @ wo.t()
        if world > 1 and mine("allreduce_to_allgather"):
            o = funcol.all_gather_tensor(o, 0, list(range(world)))[:T]  # consumer reads the first block
        elif not mine("allreduce_noop"):
            o = _reduce(o, bug, world, "-", rank)
        y = x + o
        f = torch.nn.functional.silu(y @ w1.t()) @ w2.t()
        f_red = _reduce(f, bug, world, "-", rank)
        if mine("allreduce_removed") and world > 1:  # the all-reduce runs, its result is not read
            f_red = f
        z = y + f_red
        logits = z @ wlm.t()
        if world > 1:
            if mine("allgather_to_allreduce"):
                logits = funcol.all_reduce(logits, "sum", list(range(world))).repeat(1, world)
            else:
                logits = funcol.all_gather_tensor(logits.t().contiguous(), 0, list(range(world))).t()
        # hand-written backward of q/k/v from the upstream gradients of the rotated q, k and of v
        dq_r, dk_r = (dk_up, dq_up) if mine("bwd_rope_swapped") else (dq_up, dk_up)
        dq = dq_r * cos + _rot_t(dq_r * sin)
        dk = dk_r * cos + _rot_t(dk_r * sin)
        flat = lambda t: t.transpose(0, 1).reshape(T, n * HD)  # noqa: E731
        dq2, dk2, dv2 = flat(dq), flat(dk), flat(dv_up)
        dh = dq2 @ wq + (dq2 if mine("bwd_fanin_one_rank") else dk2) @ wk + dv2 @ wv
        dh = _reduce(dh, bug, world, "bwd_allreduce_missing", rank)
        return logits, dh, dq2.t() @ h, dk2.t() @ h, dv2.t() @ h

    return fn


def _local(rank, world, t):
    rows, heads = H // world, NH // world
    sl = lambda w: w[rank * rows:(rank + 1) * rows]  # noqa: E731
    hs = lambda g: g[rank * heads:(rank + 1) * heads]  # noqa: E731
    return (t["x"], t["wn"], sl(t["wq"]), sl(t["wk"]), sl(t["wv"]), t["wo"][:, rank * rows:(rank + 1) * rows],
            t["w1"][rank * FFN // world:(rank + 1) * FFN // world], t["w2"][:, rank * FFN // world:(rank + 1) * FFN // world],
            t["wlm"][rank * V // world:(rank + 1) * V // world], t["cos"], t["sin"],
            hs(t["dq_up"]), hs(t["dk_up"]), hs(t["dv_up"]))


def spec():
    return block_fn(0, 1), tuple(_tensors().values())


def build(rank, world_size, bug=None):
    t = _tensors()
    return block_fn(rank, world_size, bug), tuple(c.contiguous() for c in _local(rank, world_size, t))


def relation(world_size):
    rows = ["S.x = D*.x", "S.wn = D*.wn", "S.cos = D*.cos", "S.sin = D*.sin"]
    rows += [f"S.{w} = shard(D*.{w}, dim=0)" for w in ("wq", "wk", "wv", "w1", "wlm", "dq_up", "dk_up", "dv_up")]
    rows += [f"S.{w} = shard(D*.{w}, dim=1)" for w in ("wo", "w2")]
    # outputs named per rank: a mutated rank's output node may have another name
    rows += [f"expect S.output{i} = D{r}.output{i}" for i in (0, 1) for r in range(world_size)]
    rows += [f"expect S.output{i} = concat({', '.join(f'D{r}.output{i}' for r in range(world_size))}, dim=0)"
             for i in (2, 3, 4)]
    return "\n".join(rows) + "\n"


# ------------------------------------------------- sequence-parallel attention (RoPE rows per shard)

def seq_fn(rank, world, bug=None):
    ts = T // world

    def fn(x, wq, wk, wv, cos, sin):
        # the shard's RoPE rows: [rank * ts, rank * ts + ts) of the replicated table; the bug takes [0, ts)
        # on every shard (the positions not offset, each shard encoded as if it started the sequence)
        start = 0 if bug == "rope_table" else rank * ts
        c, s = cos[start:start + ts], sin[start:start + ts]
        q = (x @ wq.t()).view(ts, NH, HD).transpose(0, 1)
        k = (x @ wk.t()).view(ts, NH, HD).transpose(0, 1)
        v = (x @ wv.t()).view(ts, NH, HD).transpose(0, 1)
        qr, kr = q * c + _rot(q) * s, k * c + _rot(k) * s
        if world > 1:
            kr = funcol.all_gather_tensor(kr.contiguous(), 1, list(range(world)))
            v = funcol.all_gather_tensor(v.contiguous(), 1, list(range(world)))
        a = torch.softmax(qr @ kr.transpose(1, 2) * HD ** -0.5, dim=-1) @ v
        return a.transpose(0, 1).reshape(ts, H)

    return fn


def seq_spec():
    t = _tensors()
    return seq_fn(0, 1), (t["x"], t["wq"], t["wk"], t["wv"], t["cos"], t["sin"])


def seq_build(rank, world_size, bug=None):
    t, ts = _tensors(), T // world_size
    part = slice(rank * ts, (rank + 1) * ts)
    return seq_fn(rank, world_size, bug), (t["x"][part].contiguous(), t["wq"], t["wk"], t["wv"], t["cos"],
                                           t["sin"])


def seq_relation(world_size):
    return ("S.x = shard(D*.x, dim=0)\nS.wq = D*.wq\nS.wk = D*.wk\nS.wv = D*.wv\nS.cos = D*.cos\n"
            "S.sin = D*.sin\nexpect S.output = shard(D*.output, dim=0)\n")


# ------------------------------------------------- capture: every graph in one process (a test helper)

def _capture_rank(build_f, bug, path, rank, world):
    import torch.distributed as dist
    from torch.testing._internal.distributed.fake_pg import FakeStore
    from tangle.capture import capture
    dist.init_process_group("fake", store=FakeStore(), rank=rank, world_size=world)
    try:
        fn, args = build_f(rank, world, bug) if bug else build_f(rank, world)
        capture(fn, args, path, params_path=path[:-3] + ".params.json")
    finally:
        dist.destroy_process_group()


def capture_all(out_root, bugs, seq_bugs, tp_dp_bugs=()):
    """Writes out_root/{model}/{variant}/{spec.py, impl.r*.py} with params maps; unmutated ranks are the
    correct ones (one capture each). Runs in the calling process (spawn one for it)."""
    import os
    import shutil
    import tp_dp_grid
    from tangle.capture import capture
    models = {"block": (spec, build, TP, bugs, BUG_RANKS), "seq": (seq_spec, seq_build, 2, seq_bugs, {}),
              "grid": (tp_dp_grid.spec_train, tp_dp_grid.build_train, 4, tp_dp_bugs, {})}
    for model, (spec_f, build_f, world, variants, which) in models.items():
        base = os.path.join(out_root, model, "correct")
        os.makedirs(base, exist_ok=True)
        fn, args = spec_f()
        capture(fn, args, os.path.join(base, "spec.py"), params_path=os.path.join(base, "spec.params.json"))
        for r in range(world):
            _capture_rank(build_f, None, os.path.join(base, f"impl.r{r}.py"), r, world)
        for bug in variants:
            d = os.path.join(out_root, model, bug)
            os.makedirs(d, exist_ok=True)
            ranks = which.get(bug, "all")
            for r in range(world):
                for ext in (".py", ".params.json"):
                    if r == 0:
                        shutil.copy(os.path.join(base, "spec" + ext), os.path.join(d, "spec" + ext))
                    if ranks != "all" and r not in ranks:
                        shutil.copy(os.path.join(base, f"impl.r{r}{ext}"), os.path.join(d, f"impl.r{r}{ext}"))
                if ranks == "all" or r in ranks:
                    _capture_rank(build_f, bug, os.path.join(d, f"impl.r{r}.py"), r, world)
