"""GQA attention whose TP degree exceeds its kv heads: 8 query heads over 2 kv heads,
4 ranks, so each kv head is replicated on a group of ranks (ranks 0,1 hold kv head 0,
ranks 2,3 kv head 1). Two forms: eager (`repeat_kv`: expand + reshape, then matmul) and
fused (F.scaled_dot_product_attention with enable_gqa=True)."""
import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
import torch.nn.functional as F

HEADS, KV_HEADS, HEAD_DIM, TOKENS = 8, 2, 2, 4
HIDDEN = HEADS * HEAD_DIM


def weights():
    g = torch.Generator().manual_seed(0)
    return (torch.randn(1, TOKENS, HIDDEN, generator=g),
            torch.randn(HEADS * HEAD_DIM, HIDDEN, generator=g),
            torch.randn(KV_HEADS * HEAD_DIM, HIDDEN, generator=g),
            torch.randn(KV_HEADS * HEAD_DIM, HIDDEN, generator=g),
            torch.randn(HIDDEN, HEADS * HEAD_DIM, generator=g))


def repeat_kv(t, n):
    """[B, kv, S, D] -> [B, kv * n, S, D], each kv head repeated n times (as HF's repeat_kv)."""
    if n == 1:
        return t
    b, kv, s, d = t.shape
    return t[:, :, None, :, :].expand(b, kv, n, s, d).reshape(b, kv * n, s, d)


def attn(x, wq, wk, wv, wo, fused):
    b, s, _ = x.shape
    q = (x @ wq.t()).view(b, s, -1, HEAD_DIM).transpose(1, 2)
    k = (x @ wk.t()).view(b, s, -1, HEAD_DIM).transpose(1, 2)
    v = (x @ wv.t()).view(b, s, -1, HEAD_DIM).transpose(1, 2)
    if fused:
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    else:
        n = q.shape[1] // k.shape[1]
        k, v = repeat_kv(k, n), repeat_kv(v, n)
        w = torch.softmax(q @ k.transpose(2, 3) * HEAD_DIM ** -0.5, dim=-1)
        a = w @ v
    return a.transpose(1, 2).reshape(b, s, -1) @ wo.t()


def spec(fused=False):
    return (lambda *a: attn(*a, fused)), weights()


def spec_fused():
    return spec(True)


def kv_group(rank, world_size, interleaved=False):
    """The kv head rank `rank` holds: consecutive ranks share one (or, the bug, rank % kv)."""
    per = world_size // KV_HEADS
    return rank % KV_HEADS if interleaved else rank // per


def build(rank, world_size, fused=False, interleaved=False):
    x, wq, wk, wv, wo = weights()
    n = HEADS // world_size * HEAD_DIM
    g = kv_group(rank, world_size, interleaved)
    wqr = wq[rank * n:(rank + 1) * n].contiguous()
    wkr, wvr = (w[g * HEAD_DIM:(g + 1) * HEAD_DIM].contiguous() for w in (wk, wv))
    wor = wo[:, rank * n:(rank + 1) * n].contiguous()

    def tp_attn(*a):
        return funcol.all_reduce(attn(*a, fused), "sum", dist.group.WORLD)

    return tp_attn, (x, wqr, wkr, wvr, wor)


def build_fused(rank, world_size):
    return build(rank, world_size, fused=True)
