"""A vocabulary not divisible by the TP degree, padded (issue 11, known failing class 2):
10 tokens over 4 ranks padded to 12, 3 rows per rank, rank 3 holding 1 real + 2 pad rows.

Vocabulary-parallel embedding (Megatron's: each rank looks up the ids in its range, zeroes the
others, all-reduce) and a vocabulary-parallel lm_head (each rank's logits columns, all-gathered
along the vocabulary, the pad columns sliced off), then the cross entropy of the logits.

Variants (same sizes; only the graphs or the weights differ):
* ``build``: pad rows zero, pad logits sliced off before the loss (correct).
* ``build_random``: pad rows random (still correct: no id reaches a pad row of the embedding,
  and the pad logits are sliced off), so the relation carries no ``zero`` line.
* ``build_loss_over_pad``: the loss is taken over all 12 gathered logits (the bug: the pad
  columns' logits, 0 with zero weights, join the softmax's denominator).
"""
import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
import torch.nn.functional as F

VOCAB, HIDDEN, TOKENS = 10, 4, 6


def weights():
    g = torch.Generator().manual_seed(0)
    ids = torch.tensor([0, 9, 3, 7, 5, 9])
    labels = torch.tensor([9, 1, 8, 0, 6, 2])
    return (ids, labels, torch.randn(VOCAB, HIDDEN, generator=g), torch.randn(VOCAB, HIDDEN, generator=g))


def lm(ids, labels, emb, head):
    h = torch.tanh(F.embedding(ids, emb))
    logits = h @ head.t()
    return logits, F.cross_entropy(logits, labels)


def spec():
    return lm, weights()


def per_rank(world_size):
    return -(-VOCAB // world_size)


def padded(world_size, pad="zero"):
    ids, labels, emb, head = weights()
    extra = per_rank(world_size) * world_size - VOCAB
    g = torch.Generator().manual_seed(1)

    def fill():
        return torch.zeros(extra, HIDDEN) if pad == "zero" else torch.randn(extra, HIDDEN, generator=g)

    return ids, labels, torch.cat([emb, fill()], 0), torch.cat([head, fill()], 0)


def _tp_lm(rank, world_size, loss_over_pad=False):
    per = per_rank(world_size)
    lo, hi = rank * per, (rank + 1) * per

    def tp_lm(ids, labels, emb, head):
        outside = (ids < lo) | (ids >= hi)
        rows = F.embedding((ids - lo).masked_fill(outside, 0), emb)
        rows = rows.masked_fill(outside.unsqueeze(-1), 0.0)
        h = torch.tanh(funcol.all_reduce(rows, "sum", dist.group.WORLD))
        local = h @ head.t()
        full = funcol.all_gather_tensor(local.t().contiguous(), 0, dist.group.WORLD).t()
        logits = full if loss_over_pad else full[:, :VOCAB]
        return full[:, :VOCAB], F.cross_entropy(logits, labels)

    return tp_lm


def build(rank, world_size, pad="zero", loss_over_pad=False):
    ids, labels, emb, head = padded(world_size, pad)
    per = per_rank(world_size)
    own = slice(rank * per, (rank + 1) * per)
    return _tp_lm(rank, world_size, loss_over_pad), (ids, labels, emb[own].contiguous(), head[own].contiguous())


def build_random(rank, world_size):
    return build(rank, world_size, pad="random")


def build_loss_over_pad(rank, world_size):
    return build(rank, world_size, loss_over_pad=True)


def relation(world_size, pad="zero"):
    """ids and labels replicated; the embedding and lm_head rows sharded after padding, with
    `zero` regions where the ranks' weights hold zeros."""
    from tangle.padding import padded_shard

    ranks = [build(r, world_size, pad)[1] for r in range(world_size)]
    lines = ["S.ids = D*.ids", "S.labels = D*.labels"]
    for i, name in ((2, "emb"), (3, "head")):
        lines += padded_shard(name, name, 0, VOCAB, world_size, 1, [a[i] for a in ranks])
    return "\n".join(lines) + "\n"


def relation_random(world_size):
    return relation(world_size, pad="random")
