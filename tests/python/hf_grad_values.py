"""Numbers behind a `tangle.hf_train` capture (test helper): one real training step with gloo.

In each rank's process (gloo over a file store, CPU) build the spec model and the distributed one as
tangle.hf does, run the step the capture traced (tangle.hf_train's cross-entropy against its fixed
labels, then backward) on both, and check on values what the rank's placeholder map says of every
output, i.e. what check.rel expects of it:
* the loss: the spec's, on every rank;
* each gradient, by its layout: Shard(d) the rank's block of the spec's gradient along d (blocks in
  rank order), Replicate all of it, Partial(sum) a term of it (the ranks' tensors summed with gloo).
Usage: hf_grad_values.py FAMILY LAYERS TP RANK INIT_FILE PARAMS_DIR[,PARAMS_DIR...] RESULT_PATH
(each PARAMS_DIR holds impl.r*.params.json, possibly edited by a test to mislabel a layout; one step
serves them all). Writes one {"mismatches": [...], "checked": N, "loss_error": float} per PARAMS_DIR,
as a JSON list, to RESULT_PATH.
"""
import json
import sys

TOLERANCE = 1e-4


def _step(model, ids, labels):
    import torch.nn.functional as F
    model.zero_grad(set_to_none=True)
    logits = model(input_ids=ids, use_cache=False).logits
    logits = logits.full_tensor() if hasattr(logits, "full_tensor") else logits
    loss = F.cross_entropy(logits.flatten(0, 1).float(), labels.flatten())
    loss.backward()
    return loss.detach()


def _local(t):
    return (t.to_local() if hasattr(t, "to_local") else t).detach()


def check_rank(family, layers, tp, rank, init_file, params_dir, result_path):
    import torch
    import torch.distributed as dist
    from tangle import hf, hf_train

    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=tp)
    try:
        maps = []
        for d in params_dir.split(","):
            with open(f"{d}/impl.r{rank}.params.json") as f:
                maps.append(json.load(f))
        overrides = hf.heads_for(tp)
        attn = maps[0].get("attn", "sdpa")
        spec = hf.build_model(family, layers, 1, attn=attn, **overrides)
        model = hf.build_model(family, layers, tp, attn=attn, **overrides)
        ids, labels = hf.input_ids(), hf_train.labels()
        want_loss = _step(spec, ids, labels)
        got_loss = _step(model, ids, labels)
        params = dict(model.named_parameters())
        full = dict(spec.named_parameters())
        results = [dict(_check(mine, params, full, rank, tp), loss_error=(got_loss - want_loss).abs().item())
                   for mine in maps]
        with open(result_path, "w") as f:
            json.dump(results, f)
    finally:
        dist.destroy_process_group()


def _check(mine, params, full, rank, tp):
    """The gradients of one placeholder map against the step's values."""
    import torch
    import torch.distributed as dist
    mismatches, checked = [], 0
    for out in mine["outputs"]:  # the same FQNs in the same order on every rank (collectives line up)
        if out.get("what") != "grad":
            continue
        fqn, layout = out["fqn"], out["layout"]
        got, want = _local(params[fqn].grad), full[fqn].grad.detach()
        if layout == "Partial(sum)":
            got = got.clone()
            dist.all_reduce(got)
        elif layout.startswith("Shard("):
            d = int(layout[6:-1])
            size = got.shape[d] if d < got.dim() else 0
            want = want.narrow(d, rank * size, size) if size * tp == want.shape[d] else None
        elif layout != "Replicate":
            mismatches.append(f"{fqn}: layout {layout} not checked")
            continue
        checked += 1
        if want is None or got.shape != want.shape:
            mismatches.append(f"grad of {fqn} ({layout}): shape {list(got.shape)} is not that part of "
                              f"{list(full[fqn].shape)}")
        elif not torch.allclose(got, want, atol=TOLERANCE, rtol=TOLERANCE):
            mismatches.append(f"grad of {fqn} ({layout}): off by {(got - want).abs().max().item():.3g}")
    return dict(mismatches=mismatches, checked=checked)


if __name__ == "__main__":
    family, layers, tp, rank, init_file, params_dir, result_path = sys.argv[1:]
    check_rank(family, int(layers), int(tp), int(rank), init_file, params_dir, result_path)
