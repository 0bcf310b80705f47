"""A Llama-3-shaped model under TrainVerify's parallelization, for bench/trainverify/run.py.

DP x PP x TP with NM microbatches, forward + backward: torch.distributed.pipelining stages (manual
split: stage 0 holds the embedding, the last the final norm and the head), tensor parallelism of
the SwiGLU FFN only (gate/up column-parallel, down row-parallel, Megatron's identity/all-reduce
pair as autograd functions over _c10d_functional), attention, norms and embedding replicated; with
TV_FULLTP=1 attention is sharded by heads too. Gradients are summed over the data-parallel group
after the step. Sizes come from the environment (TV_HIDDEN, TV_SEQ, TV_LAYERS, TV_DP, TV_PP,
TV_TP, TV_NM, TV_FULLTP), so the spawned rank processes see the same configuration. A planted bug:
TV_BUG=no_ffn_allreduce drops the FFN's forward all-reduce on the last pipeline stage (every
replica and TP rank of it), so its residual stream adds an unreduced partial sum.
"""
from __future__ import annotations

import math
import os

import torch
import torch.nn.functional as F

from tangle import pp as tpp
from tangle.pp import RankProgram


def cfg():
    e = os.environ
    c = dict(hidden=int(e.get("TV_HIDDEN", 128)), seq=int(e.get("TV_SEQ", 256)), layers=int(e.get("TV_LAYERS", 2)),
             dp=int(e.get("TV_DP", 2)), pp=int(e.get("TV_PP", 2)), tp=int(e.get("TV_TP", 2)),
             nm=int(e.get("TV_NM", 2)), full_tp=e.get("TV_FULLTP", "0") == "1", vocab=int(e.get("TV_VOCAB", 256)))
    c["heads"] = max(c["tp"], c["hidden"] // 64)
    c["ffn"] = int(e.get("TV_FFN", c["hidden"] * 7 // 2 // c["tp"] * c["tp"]))
    c["batch"] = c["dp"] * c["nm"]  # one sequence per microbatch and replica
    return c


def _reduce(x, group):
    if group is None:
        return x
    return torch.ops._c10d_functional.wait_tensor(torch.ops._c10d_functional.all_reduce(x, "sum", group.group_name))


class _Copy(torch.autograd.Function):  # into a TP region: identity forward, all-reduce of the gradient
    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        return _reduce(g, ctx.group), None


class _Reduce(torch.autograd.Function):  # out of a TP region: all-reduce forward, identity backward
    @staticmethod
    def forward(ctx, x, group):
        return _reduce(x, group)

    @staticmethod
    def backward(ctx, g):
        return g, None


class RMSNorm(torch.nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * self.weight


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Attention(torch.nn.Module):
    def __init__(self, c, rope):
        super().__init__()
        d, self.heads = c["hidden"], c["heads"]
        self.hd = d // self.heads
        self.q = torch.nn.Linear(d, d, bias=False)
        self.k = torch.nn.Linear(d, d, bias=False)
        self.v = torch.nn.Linear(d, d, bias=False)
        self.o = torch.nn.Linear(d, d, bias=False)
        self.rope = rope
        self.group = None  # set when sharded by heads

    def forward(self, x):
        b, s, _ = x.shape
        if self.group is not None:
            x = _Copy.apply(x, self.group)
        h = self.q.weight.shape[0] // self.hd
        cos, sin = self.rope.cos[:s], self.rope.sin[:s]

        def heads(t):
            return t.view(b, s, h, self.hd).transpose(1, 2)

        q, k, v = heads(self.q(x)), heads(self.k(x)), heads(self.v(x))
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        o = self.o(o.transpose(1, 2).reshape(b, s, h * self.hd))
        return _Reduce.apply(o, self.group) if self.group is not None else o


class FFN(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        d, f = c["hidden"], c["ffn"]
        self.gate = torch.nn.Linear(d, f, bias=False)
        self.up = torch.nn.Linear(d, f, bias=False)
        self.down = torch.nn.Linear(f, d, bias=False)
        self.group = None
        self.reduce = True  # False: the planted bug (no forward all-reduce)

    def forward(self, x):
        if self.group is not None:
            x = _Copy.apply(x, self.group)
        y = self.down(F.silu(self.gate(x)) * self.up(x))
        return _Reduce.apply(y, self.group) if self.group is not None and self.reduce else y


class Rope(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        hd = c["hidden"] // c["heads"]
        inv = 1.0 / (500000.0 ** (torch.arange(0, hd, 2).float() / hd))
        t = torch.outer(torch.arange(c["seq"]).float(), inv)
        emb = torch.cat((t, t), dim=-1)
        self.register_buffer("cos", emb.cos(), persistent=False)
        self.register_buffer("sin", emb.sin(), persistent=False)


class Layer(torch.nn.Module):
    def __init__(self, c, rope):
        super().__init__()
        self.attn_norm, self.attn = RMSNorm(c["hidden"]), Attention(c, rope)
        self.ffn_norm, self.ffn = RMSNorm(c["hidden"]), FFN(c)

    def forward(self, x):
        x = x + self.attn(self.attn_norm(x))
        return x + self.ffn(self.ffn_norm(x))


class Llama(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        torch.manual_seed(0)
        self.rope = Rope(c)
        self.embed = torch.nn.Embedding(c["vocab"], c["hidden"])
        self.layers = torch.nn.ModuleList([Layer(c, self.rope) for _ in range(c["layers"])])
        self.norm = RMSNorm(c["hidden"])
        self.head = torch.nn.Linear(c["hidden"], c["vocab"], bias=False)

    def forward(self, tokens):
        x = self.embed(tokens)
        for layer in self.layers:
            x = layer(x)
        return self.head(self.norm(x))


class Stage(torch.nn.Module):
    """Layers [lo, hi) of the model, with the embedding on the first stage and norm + head on the last."""

    def __init__(self, model, lo, hi, first, last):
        super().__init__()
        self.embed = model.embed if first else None
        self.layers = torch.nn.ModuleList(model.layers[lo:hi])
        self.norm, self.head = (model.norm, model.head) if last else (None, None)

    def forward(self, x):
        if self.embed is not None:
            x = self.embed(x)
        for layer in self.layers:
            x = layer(x)
        return self.head(self.norm(x)) if self.head is not None else x


def loss_fn(logits, target):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1), reduction="sum")


def data(c):
    g = torch.Generator().manual_seed(1)
    return (torch.randint(0, c["vocab"], (c["batch"], c["seq"]), generator=g),
            torch.randint(0, c["vocab"], (c["batch"], c["seq"]), generator=g))


def _shard(linear, dim, index, count):
    w = linear.weight
    size = w.shape[dim] // count
    linear.weight = torch.nn.Parameter(w.detach().narrow(dim, index * size, size).clone())


def build(rank, world_size):
    import torch.distributed as dist
    from torch.distributed.pipelining import ScheduleGPipe

    c = cfg()
    dp, pp, tp = c["dp"], c["pp"], c["tp"]
    assert dp * pp * tp == world_size, (dp, pp, tp, world_size)
    replica, rest = divmod(rank, pp * tp)
    stage_index, tp_index = divmod(rest, tp)

    def rid(r, s, t):
        return (r * pp + s) * tp + t

    pp_groups = {(r, t): dist.new_group([rid(r, s, t) for s in range(pp)]) for r in range(dp) for t in range(tp)}
    dp_groups = {(s, t): dist.new_group([rid(r, s, t) for r in range(dp)]) for s in range(pp) for t in range(tp)}
    tp_groups = {(r, s): dist.new_group([rid(r, s, t) for t in range(tp)]) for r in range(dp) for s in range(pp)}
    with tpp.tensors():  # fake tensors in a shapes-only capture (tangle.pp.capture_pipeline_fake)
        model = Llama(c)
    per = c["layers"] // pp
    lo, hi = stage_index * per, (stage_index + 1) * per
    shards = {}
    group = tp_groups[(replica, stage_index)] if tp > 1 else None
    for i in range(lo, hi):
        layer = model.layers[i]
        parts = [("ffn.gate", 0), ("ffn.up", 0), ("ffn.down", 1)]
        if c["full_tp"]:
            parts += [("attn.q", 0), ("attn.k", 0), ("attn.v", 0), ("attn.o", 1)]
        for name, dim in parts:
            mod = layer.get_submodule(name)
            _shard(mod, dim, tp_index, tp)
            shards[f"layers.{i}.{name}.weight"] = (dim, tp_index, tp)
        layer.ffn.group = group
        layer.ffn.reduce = not (os.environ.get("TV_BUG") == "no_ffn_allreduce" and stage_index == pp - 1)
        if c["full_tp"]:
            layer.attn.group = group
    first, last = stage_index == 0, stage_index == pp - 1
    stage_mod = Stage(model, lo, hi, first, last)
    prefix = {id(m): n for n, m in model.named_modules()}
    params = {}
    for n, p in stage_mod.named_parameters():
        owner = n.rsplit(".", 1)
        sub = stage_mod.get_submodule(owner[0]) if len(owner) == 2 else stage_mod
        params[f"{prefix[id(sub)]}.{owner[-1]}"] = p
    buffers = {"rope.cos": model.rope.cos, "rope.sin": model.rope.sin}
    tokens, target = (tpp.as_input(t) for t in data(c))
    mb = c["batch"] // dp // c["nm"]
    with tpp.tensors():  # a microbatch's activations (requires_grad: their gradients travel back)
        hidden = torch.empty(mb, c["seq"], c["hidden"], requires_grad=True)
        out = torch.empty(mb, c["seq"], c["vocab"], requires_grad=True) if last else hidden
    stage = tpp.pipeline_stage(stage_mod, stage_index, pp, pp_groups[(replica, tp_index)],
                               tokens[:mb] if first else hidden, out)
    sched = ScheduleGPipe(stage, n_microbatches=c["nm"], loss_fn=loss_fn, scale_grads=False)
    n = c["batch"] // dp
    tokens, target = tokens[replica * n:(replica + 1) * n], target[replica * n:(replica + 1) * n]
    dgroup = dp_groups[(stage_index, tp_index)]

    def step(tokens, target):
        if first:
            sched.step(tokens)
        elif last:
            sched.step(target=target, losses=[])
        else:
            sched.step()
        if dp > 1:
            for p in params.values():
                p.grad = _reduce(p.grad, dgroup)
        return tuple(p.grad for p in params.values())

    def warmup():  # the schedule's buffers from the given shapes, without a step on fake tensors
        tpp.init_schedule(sched, *((tokens,) if first else ()), target=target if last else None)

    inputs = {}
    if first:
        inputs["tokens"] = ("tokens", replica)
    if last:
        inputs["target"] = ("target", replica)
    return RankProgram(step, (tokens, target), params, list(params), inputs, shards,
                       replica * pp + stage_index, buffers, warmup=warmup if tpp.fake_mode() else None)


def spec():
    c = cfg()
    with tpp.tensors():
        model = Llama(c)
    params = dict(model.named_parameters())
    buffers = {"rope.cos": model.rope.cos, "rope.sin": model.rope.sin}

    def step(tokens, target):
        loss_fn(model(tokens), target).backward()
        return tuple(p.grad for p in params.values())

    return RankProgram(step, tuple(tpp.as_input(t) for t in data(c)), params, list(params),
                       {"tokens": ("tokens", 0), "target": ("target", 0)}, buffers=buffers)
