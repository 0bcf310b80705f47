"""Numbers behind a tangle.hf capture (test helper): run the TP model for real with gloo.

In each rank's process (gloo over a file store, CPU), build the spec model and the distributed one
exactly as tangle.hf does, then check against values what the capture's placeholder map says:
* every parameter/buffer placeholder of the rank holds the spec tensor's part named by its placement
  (Shard(d): the rank's block along d, blocks in rank order, as `shard(D*.x, dim=d)` reads; Replicate: all of it);
* the rank's logits equal the spec's (the `expect` line, the lm_head gathering the full logits).
Writes {"mismatches": [...], "max_logit_error": float} to result_path.
"""
import json
import sys


def check_rank(family, layers, tp, rank, init_file, params_dir, result_path):
    import torch
    import torch.distributed as dist
    from tangle import hf

    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=tp)
    try:
        overrides = hf.heads_for(tp)
        spec = hf.build_model(family, layers, 1, **overrides)
        model = hf.build_model(family, layers, tp, **overrides)
        ranks = []
        for r in range(tp):
            with open(f"{params_dir}/impl.r{r}.params.json") as f:
                ranks.append({p["fqn"]: p for p in json.load(f)["placeholders"]
                              if p["kind"] in ("parameter", "buffer")})
        full = dict(spec.named_parameters()) | dict(spec.named_buffers())
        mine = dict(model.named_parameters()) | dict(model.named_buffers())
        mismatches = []
        for fqn, p in ranks[rank].items():
            value = mine[fqn]
            local = value.to_local() if hasattr(value, "to_local") else value
            want = full[fqn].detach()
            if p["placement"].startswith("Shard("):
                d = int(p["placement"][6:-1])
                start = sum(ranks[r][fqn]["local_shape"][d] for r in range(rank))
                want = want.narrow(d, start, p["local_shape"][d])
            elif p["placement"] != "Replicate":
                mismatches.append(f"{fqn}: placement {p['placement']} not checked")
                continue
            if list(local.shape) != p["local_shape"] or not torch.equal(local.detach(), want):
                mismatches.append(f"{fqn} ({p['placement']})")
        ids = hf.input_ids()
        with torch.no_grad():
            expected = spec(input_ids=ids, use_cache=False).logits
            got = model(input_ids=ids, use_cache=False).logits
        got = got.to_local() if hasattr(got, "to_local") else got
        error = (got - expected).abs().max().item() if got.shape == expected.shape else float("inf")
        with open(result_path, "w") as f:
            json.dump(dict(mismatches=mismatches, max_logit_error=error), f)
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    family, layers, tp, rank, init_file, params_dir, result_path = sys.argv[1:]
    check_rank(family, int(layers), int(tp), int(rank), init_file, params_dir, result_path)
