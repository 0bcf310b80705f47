"""Capture an HF causal LM training step with gradient accumulation over micro-batches, under TP.

Every graph runs the same step: the batch (one sequence per micro-batch) is split into K
micro-batches (``batch.chunk(K)``), one forward per micro-batch with the model's own loss
(``model(input_ids, labels=labels)``: labels shifted, cross-entropy over the kept tokens), and the
gradients accumulated. The spec is that step on the unparallelized model with the loss scaled as
transformers' Trainer scales it; each tensor-parallel rank runs it on its shard of the model with
the loss scaled as the variant (``SCALINGS``) says:

* ``tokens`` (correct): each micro-batch's loss is a SUM over its tokens divided by the number of
  kept tokens of the whole step (``num_items_in_batch``, counted in the step from the labels:
  ``labels[..., 1:] != -100``), so the accumulated gradient is the whole batch's mean-loss gradient.
* ``unscaled``: each micro-batch's own mean, not divided by K: the gradient is K times too large.
* ``twice``: ``num_items_in_batch`` and a further 1/K: K times too small.
* ``mean``: each micro-batch's own mean divided by K. Equal to the spec only when every micro-batch
  keeps the same number of tokens, which the labels (any of them may be -100) do not promise, so it
  must not be proved.

Not yet: the spec as ONE forward over the whole batch. Relating it to the micro-batches needs the
causal-mask construction over a batch (transformers' ``sdpa_mask`` indexes with
``arange(batch_size)``) seen as per-row copies, which the lemmas do not do (the check stops at that
``arange``).

Accumulation is traced as ONE backward of the sum of the micro-batch losses: autograd then runs one
backward per micro-batch (their forwards are separate) and adds their parameter gradients, which is
what ``loss_k.backward()`` per micro-batch computes into ``.grad``. The joint graph, placeholder map
and relation are tangle.hf_train's and tangle.hf's (the batch is an input of every graph as a whole;
the micro-batches are slices of it in the graph), so the relation is the plain TP relation.
"""
from __future__ import annotations

import os

from . import hf

SCALINGS = ("tokens", "unscaled", "twice", "mean")
IGNORE = -100


def batch(vocab: int, micro: int, seq: int = hf.SEQ):
    """Fixed random (input_ids, labels), `micro` rows (one sequence per micro-batch)."""
    import torch
    g = torch.Generator().manual_seed(hf.SEED + 3)
    return (torch.randint(0, vocab, (micro, seq), generator=g), torch.randint(0, vocab, (micro, seq), generator=g))


def accumulated_step(model, micro: int, scaling: str):
    """step(ids, labels) -> the sum of the micro-batch losses as `scaling` scales them."""
    if scaling not in SCALINGS:
        raise ValueError(f"unknown scaling {scaling!r} (known: {', '.join(SCALINGS)})")

    def step(ids, labels):
        items = (labels[..., 1:] != IGNORE).sum()  # Trainer's num_items_in_batch over the whole step
        total = None
        for x, y in zip(ids.chunk(micro), labels.chunk(micro)):
            if scaling in ("tokens", "twice"):
                loss = model(input_ids=x, labels=y, num_items_in_batch=items, use_cache=False).loss
            else:
                loss = model(input_ids=x, labels=y, use_cache=False).loss
            if scaling in ("twice", "mean"):
                loss = loss / micro
            total = loss if total is None else total + loss
        return total

    return step


def whole_batch_step(model):
    """The step as one forward over the whole batch (see "Not yet" above)."""
    def step(ids, labels):
        return model(input_ids=ids, labels=labels, use_cache=False).loss
    return step


def _capture_one(family, layers, tp, rank, micro, scaling, graph_path, params_path):
    """One process: the spec (rank None) or rank `rank` of `tp` under a fake process group."""
    import torch.distributed as dist
    from . import hf_train
    info = dict(family=family, layers=layers, attn="eager", seq=hf.SEQ, config=dict(hf.TINY), micro_batches=micro,
                scaling=scaling)
    ids, labels = batch(hf.TINY["vocab_size"], micro)
    inputs = {"input_ids": ids, "labels": labels}
    if rank is None:
        model = hf.build_model(family, layers, 1, "eager")
        hf_train.capture_training(model, None, None, graph_path, params_path, dict(info, role="spec", world_size=1),
                                  inputs=inputs, step=accumulated_step(model, micro, "tokens"))
        return
    from torch.testing._internal.distributed.fake_pg import FakeStore
    dist.init_process_group("fake", store=FakeStore(), rank=rank, world_size=tp)
    try:
        model = hf.build_model(family, layers, tp, "eager")
        hf_train.capture_training(model, None, None, graph_path, params_path,
                                  dict(info, role="impl", rank=rank, world_size=tp),
                                  inputs=inputs, step=accumulated_step(model, micro, scaling))
    finally:
        dist.destroy_process_group()


def _capture_one_reporting(*args):
    from .capture import _run_reporting
    _run_reporting(args[6], lambda: _capture_one(*args))


def capture(family: str, tp: int, layers: int, out_dir: str, scalings=("tokens",), micro: int = 2,
            log=print) -> dict:
    """Captures the spec once and the `tp` ranks once per scaling into out_dir/<scaling>/ (the spec
    copied into each), each with its check.rel. Returns {scaling: hf.HFCapture}."""
    if family not in hf.FAMILIES:
        raise ValueError(f"unknown family {family!r} (known: {', '.join(hf.FAMILIES)})")
    if tp < 2 or micro < 2:
        raise ValueError("tp and micro must be at least 2")
    for s in scalings:
        if s not in SCALINGS:
            raise ValueError(f"unknown scaling {s!r} (known: {', '.join(SCALINGS)})")
    spec_dir = os.path.join(out_dir, "spec")
    spec, spec_params, _, _ = hf.graph_paths(spec_dir, tp)
    jobs = [("spec", (family, layers, tp, None, micro, None, spec, spec_params), spec_params)]
    paths = {}
    for s in scalings:
        paths[s] = hf.graph_paths(os.path.join(out_dir, s), tp)
        _, _, impls, impl_params = paths[s]
        jobs += [(f"{s} rank {r}/{tp}", (family, layers, tp, r, micro, s, impls[r], impl_params[r]), impl_params[r])
                 for r in range(tp)]
    hf._run(jobs, log, target=_capture_one_reporting, preload=hf.PRELOAD + ["tangle.hf_accum"])
    out = {}
    for s in scalings:
        s_spec, s_spec_params, impls, impl_params = paths[s]
        for src, dst in ((spec, s_spec), (spec_params, s_spec_params)):
            with open(src) as f, open(dst, "w") as g:
                g.write(f.read())
        header = [f"# {family}, {layers} layer(s), tensor parallel {tp}, one training step with {micro} "
                  f"micro-batches accumulated (loss scaling: {s})",
                  "# written by tangle.hf_accum from the placeholder maps (*.params.json)"]
        relation = hf.write_check(os.path.join(out_dir, s), s_spec_params, impl_params, header=header, log=log)
        out[s] = hf.HFCapture(os.path.join(out_dir, s), s_spec, impls, s_spec_params, impl_params, relation)
    return out
