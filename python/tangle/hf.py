"""Capture a Hugging Face transformers causal LM and its tensor-parallel version for tangle.

The spec is the unparallelized model; rank r of N is the same model distributed with
transformers' own tensor-parallel plan (``DistributedConfig(tp_size=N)``) under a fake
process group. The model is built from a tiny config with random weights (no download).
Each graph is captured in its own spawned process (forward, ``no_grad``), and next to
each graph a JSON file records, for every graph placeholder, the parameter, buffer or
input it holds (its FQN), its placement on the ranks (``Shard(d)``, ``Replicate``,
``Partial(sum)``, read from the DTensor) and its global and local shapes; the values of
scalar constants (``_tensor_constantK``); and the graph's outputs with their layout.
``check.rel`` is then written from those maps, matched by FQN between spec and ranks.
Nothing here decides a verdict: ``tangle check DIR/check.rel`` does.

    from tangle import hf                                # PYTHONPATH=python
    out = hf.capture_hf("llama", tp=2, layers=1, out_dir="out/llama_tp2_l1")
    out.relation, out.spec, out.impls, out.spec_params, out.impl_params

Command line:  python -m tangle.hf llama --tp 2 --layers 1 --out DIR
  writes DIR/spec.py, DIR/impl.r{rank}.py, DIR/*.params.json and DIR/check.rel.

Files (see ``write_relation`` for the relation):

* ``spec.py``, ``impl.r{rank}.py``: ``print_readable()`` text of the ATen forward graphs;
* ``spec.params.json``, ``impl.r{rank}.params.json``:
  ``{"placeholders": [{"name": "arg5_1", "kind": "parameter", "fqn": "model.layers.0.self_attn.q_proj.weight",
  "placement": "Shard(0)", "global_shape": [64, 64], "local_shape": [32, 64], "dtype": "float32"}, ...],
  "constants": [{"name": "_tensor_constant0", "value": 0, ...}], "outputs": [{"name": "cat_1", "what": "logits",
  "layout": "Replicate", ...}], ...}``. Kinds: ``input``, ``parameter``, ``buffer``, ``opaque`` (the device-mesh
  placeholders a DTensor brings in torch 2.13; they carry no data), ``symint``.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import multiprocessing
import os
import sys
import time

from .capture import CaptureError, _run_reporting, failure_message

# Tiny shapes: GQA (fewer kv heads than heads), every TP degree up to 4 divides them.
TINY = dict(hidden_size=64, num_attention_heads=4, num_key_value_heads=2, intermediate_size=128,
            vocab_size=128, max_position_embeddings=64)
SEQ = 8
SEED = 0


def _families():
    import transformers as tf
    return {
        "llama": (tf.LlamaConfig, tf.LlamaForCausalLM),
        "qwen2": (tf.Qwen2Config, tf.Qwen2ForCausalLM),
    }


FAMILIES = ("llama", "qwen2")


def tiny_config(family: str, layers: int, attn: str = "sdpa", **overrides):
    """A small config of `family` with `layers` decoder layers (random init, no download)."""
    config_cls, _ = _families()[family]
    kw = dict(TINY, num_hidden_layers=layers, use_cache=False, tie_word_embeddings=False,
              attn_implementation=attn)
    kw.update(overrides)
    return config_cls(**kw)


def build_model(family: str, layers: int, tp: int = 1, attn: str = "sdpa", **overrides):
    """The model (eval mode, seeded weights); with tp > 1 distributed with the model's own TP plan.
    For tp > 1 the (fake) default process group must already be initialized."""
    import torch
    _, model_cls = _families()[family]
    torch.manual_seed(SEED)
    model = model_cls(tiny_config(family, layers, attn, **overrides)).eval()
    if tp > 1:
        from transformers.distributed import DistributedConfig
        dc, _, mesh_manager = model_cls.prepare_distribute_model(DistributedConfig(tp_size=tp))
        model = model_cls.maybe_distribute_model(model, dc, mesh_manager)
    return model


def input_ids(vocab: int = TINY["vocab_size"], seq: int = SEQ):
    import torch
    g = torch.Generator().manual_seed(SEED + 1)
    return torch.randint(0, vocab, (1, seq), generator=g)


# ---------------------------------------------------------------- placeholder map

def _placement_text(p) -> str:
    from torch.distributed.tensor import Partial, Replicate, Shard
    if isinstance(p, Shard):
        return f"Shard({p.dim})"
    if isinstance(p, Replicate):
        return "Replicate"
    if isinstance(p, Partial):
        return f"Partial({p.reduce_op})"
    raise ValueError(f"unsupported placement {p!r}")


def _describe(value, names):
    """The AOT placeholders that one Dynamo input becomes, in order (a list of dicts)."""
    import torch
    from torch.distributed.tensor import DTensor
    if isinstance(value, DTensor):
        kind, fqn = names.get(id(value), ("tensor", None))
        if len(value.placements) != 1:
            raise ValueError(f"{fqn}: only 1-D meshes are supported, got placements {value.placements}")
        local = value._local_tensor  # no op: the backend runs under fake mode
        return [dict(kind=kind, fqn=fqn, placement=_placement_text(value.placements[0]),
                     global_shape=list(value.shape), local_shape=list(local.shape),
                     dtype=str(value.dtype).removeprefix("torch.")),
                dict(kind="opaque", fqn=fqn, what="DeviceMesh of the DTensor")]
    if isinstance(value, torch.Tensor):
        kind, fqn = names.get(id(value), ("tensor", None))
        return [dict(kind=kind, fqn=fqn, placement="Replicate", global_shape=list(value.shape),
                     local_shape=list(value.shape), dtype=str(value.dtype).removeprefix("torch."))]
    if isinstance(value, (int, torch.SymInt)):
        return [dict(kind="symint", fqn=None)]
    return [dict(kind="opaque", fqn=None, what=type(value).__name__)]


def _is_tensor_like(x):
    import torch
    return isinstance(x, torch.Tensor)


def _constants(gm):
    import torch
    from torch._subclasses.fake_tensor import unset_fake_temporarily
    out = []
    for node in gm.graph.nodes:
        if node.op != "get_attr":
            continue
        value = getattr(gm, node.target, None)
        if not isinstance(value, torch.Tensor):
            continue
        entry = dict(name=node.name, target=node.target, shape=list(value.shape),
                     dtype=str(value.dtype).removeprefix("torch."))
        try:
            with unset_fake_temporarily():  # the compiler runs under fake mode; constants are real
                entry.update(_values(value))
        except Exception as e:  # a fake tensor has no data
            entry["error"] = f"value not available: {e}"
        out.append(entry)
    return out


def _values(value):
    if value.numel() == 1 and value.dim() == 0:
        return dict(value=value.item())
    if value.numel() <= 64:
        return dict(values=value.flatten().tolist())
    return {}


def _outputs(gm):
    node = next(n for n in gm.graph.nodes if n.op == "output")
    out = []
    for arg in node.args[0]:
        val = arg.meta.get("val") if hasattr(arg, "meta") else None
        out.append(dict(name=getattr(arg, "name", str(arg)),
                        shape=list(val.shape) if val is not None and hasattr(val, "shape") else None))
    return out


def _output_layout(model) -> str:
    """Layout of the logits on the ranks, from the lm_head style of the model's TP plan."""
    from transformers.distributed.tensor_parallel import ALL_PARALLEL_STYLES
    style = (getattr(model, "tp_plan", None) or {}).get("lm_head")
    if style is None:
        return "Replicate"
    layouts = getattr(ALL_PARALLEL_STYLES[style], "output_layouts", None)
    if layouts is None:
        return "Replicate"
    return _placement_text(layouts[0] if isinstance(layouts, (tuple, list)) else layouts)


def capture_model(model, ids, graph_path, params_path, info=None):
    """Trace `model(input_ids=ids).logits` (forward, no_grad) to ATen, write the readable graph
    to graph_path and its placeholder map (JSON) to params_path. Returns the params dict."""
    import torch
    from torch._dynamo.backends.common import aot_autograd

    names = {id(ids): ("input", "input_ids")}
    for n, b in model.named_buffers():
        names[id(b)] = ("buffer", n)
    for n, p in model.named_parameters():
        names[id(p)] = ("parameter", n)
    result = {}

    def fw_compiler(gm, example_inputs):
        dynamo_inputs = result["dynamo_inputs"]
        expected = [d for v in dynamo_inputs for d in _describe(v, names)]
        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        if len(placeholders) != len(expected) or len(example_inputs) != len(expected):
            raise RuntimeError(f"{graph_path}: {len(placeholders)} AOT placeholders, {len(example_inputs)} example "
                               f"inputs, but the Dynamo inputs expand to {len(expected)}")
        for node, ex, d in zip(placeholders, example_inputs, expected):
            if (d["kind"] not in ("opaque", "symint")) != _is_tensor_like(ex):
                raise RuntimeError(f"{graph_path}: placeholder {node.name} ({type(ex).__name__}) does not line up "
                                   f"with {d}")
            d["name"] = node.name
        with open(graph_path, "w") as f:
            f.write(gm.print_readable(print_output=False))
        result["placeholders"] = [dict(name=d.pop("name"), **d) for d in expected]
        result["constants"] = _constants(gm)
        result["outputs"] = _outputs(gm)
        return gm.forward

    inner = aot_autograd(fw_compiler=fw_compiler)

    def backend(gm, example_inputs):
        result["dynamo_inputs"] = list(example_inputs)
        return inner(gm, example_inputs)

    def logits(x):
        return model(input_ids=x, use_cache=False).logits

    torch._dynamo.reset()
    compiled = torch.compile(logits, backend=backend, fullgraph=True)
    with torch.no_grad():
        compiled(ids)
    if "placeholders" not in result:
        raise RuntimeError(f"nothing was captured for {graph_path}")
    layout = _output_layout(model) if info and info.get("world_size", 1) > 1 else "Replicate"
    for o in result["outputs"]:
        o.update(what="logits", layout=layout)
    params = dict(info or {}, graph=os.path.basename(graph_path), placeholders=result["placeholders"],
                  constants=result["constants"], outputs=result["outputs"])
    with open(params_path, "w") as f:
        json.dump(params, f, indent=1)
        f.write("\n")
    return params


def heads_for(tp: int) -> dict:
    """Head counts for degree tp: the tiny 4 heads / 2 kv heads while the kv heads divide by tp,
    else tp kv heads and twice as many heads (GQA kept; each rank needs whole kv heads)."""
    kv = TINY["num_key_value_heads"]
    if kv % tp == 0:
        return {}
    kv = tp * ((kv + tp - 1) // tp)
    return dict(num_key_value_heads=kv, num_attention_heads=2 * kv)


def _capture_one(family, layers, tp, rank, attn, graph_path, params_path, overrides=None):
    """One spawned process: the spec (rank None) or one rank under a fake process group."""
    import torch.distributed as dist
    overrides = overrides or {}
    info = dict(family=family, layers=layers, attn=attn, seq=SEQ, config=dict(TINY, **overrides))
    if rank is None:
        model = build_model(family, layers, 1, attn, **overrides)
        capture_model(model, input_ids(), graph_path, params_path, dict(info, role="spec", world_size=1))
        return
    from torch.testing._internal.distributed.fake_pg import FakeStore
    dist.init_process_group("fake", store=FakeStore(), rank=rank, world_size=tp)
    try:
        model = build_model(family, layers, tp, attn, **overrides)
        capture_model(model, input_ids(), graph_path, params_path,
                      dict(info, role="impl", rank=rank, world_size=tp))
    finally:
        dist.destroy_process_group()


def _capture_one_reporting(*args):
    """_capture_one in a spawned process; an exception is left as one line for the parent."""
    _run_reporting(args[5], lambda: _capture_one(*args))


# ---------------------------------------------------------------- relation

def _fmt_shape(s):
    return "[" + ", ".join(map(str, s)) + "]" if s is not None else "?"


def _layout_rhs(layout: str, every: str | None, per_rank: list[str] | None, unknown: str) -> list[str]:
    """Right-hand sides relating a spec tensor to the ranks' tensors under `layout`: `every` names them
    all (`D*.x`) when the ranks agree on the name, else `per_rank` lists them. One line per rank for a
    replicated tensor named differently on each rank."""
    if layout == "Replicate":
        return [every] if every else list(per_rank)
    if layout.startswith("Shard("):
        dim = int(layout[len("Shard("):-1])
        return [f"shard({every}, dim={dim})" if every else f"concat({', '.join(per_rank)}, dim={dim})"]
    if layout == "Partial(sum)":
        return [f"sum({every})" if every else f"sum({', '.join(per_rank)})"]
    raise ValueError(unknown)


def write_relation(spec_params: dict, rank_params: list[dict], spec_file="spec.py",
                   impl_pattern="impl.r{rank}.py", options: dict | None = None) -> str:
    """The text of a relation file relating the spec's placeholders to the ranks', matched by FQN.

    Shard(d) -> ``S.a = shard(D*.b, dim=d)``; Replicate -> ``S.a = D*.b``; Partial(sum) -> ``S.a = sum(D*.b)``;
    scalar constants -> ``const`` lines; the logits -> ``output`` + ``expect`` with the lm_head's output layout."""
    n = len(rank_params)
    family = spec_params.get("family", "?")
    lines = [f"# {family}, {spec_params.get('layers', '?')} layer(s), tensor parallel {n} "
             f"(transformers TP plan), attention {spec_params.get('attn', '?')}",
             "# written by python -m tangle.hf from the placeholder maps (*.params.json)",
             f"spec {spec_file}", f"impl {impl_pattern} ranks {n}"]
    for key, value in (options or {}).items():
        lines.append(f"option {key} = {value}")
    lines.append("")

    def by_fqn(params):
        out = {}
        for ph in params["placeholders"]:
            if ph["kind"] in ("input", "parameter", "buffer") and ph["fqn"]:
                out[ph["fqn"]] = ph
        return out

    ranks = [by_fqn(p) for p in rank_params]
    lines.append("# inputs, parameters and buffers (matched by FQN)")
    for ph in spec_params["placeholders"]:
        if ph["kind"] == "tensor":
            lines.append(f"# S.{ph['name']}: a tensor input with no known name; no relation written")
        if ph["kind"] not in ("input", "parameter", "buffer"):
            continue
        fqn = ph["fqn"]
        mine = [r.get(fqn) for r in ranks]
        if any(m is None for m in mine):
            missing = [str(i) for i, m in enumerate(mine) if m is None]
            lines.append(f"# {fqn}: not an input of rank(s) {', '.join(missing)}; no relation written")
            continue
        placements = {m["placement"] for m in mine}
        if len(placements) != 1:
            raise ValueError(f"{fqn}: placement differs between ranks: {sorted(placements)}")
        placement = placements.pop()
        names = {m["name"] for m in mine}
        if len(names) == 1:
            d = "D*." + names.pop()
            per_rank = None
        else:  # the ranks' graphs number this placeholder differently: one line per rank
            d = None
            per_rank = [f"D{i}.{m['name']}" for i, m in enumerate(mine)]
        comment = f"# {fqn} {placement} {_fmt_shape(ph['global_shape'])}"
        rhss = _layout_rhs(placement, d, per_rank, f"{fqn}: no relation for placement {placement}")
        lines += [f"S.{ph['name']} = {rhs}  {comment}" for rhs in rhss]

    consts = []
    for prefix, params in [("S", spec_params)] + [(f"D{i}", p) for i, p in enumerate(rank_params)]:
        for c in params.get("constants", []):
            consts.append((prefix, c))
    if consts:
        lines += ["", "# scalar constants (values recorded at capture)"]
        rank_values = {}
        for prefix, c in consts:
            if prefix != "S":
                rank_values.setdefault(c["name"], []).append((prefix, c))
        for prefix, c in consts:
            if prefix == "S":
                lines.append(_const_line("S", c))
        for name, entries in rank_values.items():
            values = {repr(c.get("value")) for _, c in entries}
            if len(entries) == n and len(values) == 1:
                lines.append(_const_line("D*", entries[0][1]))
            else:
                lines += [_const_line(prefix, c) for prefix, c in entries]

    lines += ["", "# outputs: the logits"]
    spec_out = spec_params["outputs"]
    for k, o in enumerate(spec_out):
        names = {p["outputs"][k]["name"] for p in rank_params}
        layouts = {p["outputs"][k].get("layout", "Replicate") for p in rank_params}
        if len(layouts) != 1:
            raise ValueError(f"output {k}: layout differs between ranks: {sorted(layouts)}")
        layout = layouts.pop()
        lines.append(f"output S.{o['name']}  # {o.get('what', 'output')} {_fmt_shape(o['shape'])}")
        if len(names) == 1:
            rhs = "D*." + names.pop()
            per_rank = None
        else:
            rhs = None
            per_rank = [f"D{i}.{p['outputs'][k]['name']}" for i, p in enumerate(rank_params)]
        what = o.get("what", "output")
        comment = f"full {what} on every rank" if layout == "Replicate" else f"{what} {layout}"
        exprs = _layout_rhs(layout, rhs, per_rank, f"output {k}: no relation for layout {layout}")
        lines += [f"expect S.{o['name']} = {expr}  # {comment}" for expr in exprs]
    return "\n".join(lines) + "\n"


def _const_line(prefix, c):
    where = f"  # {c['dtype']}{_fmt_shape(c['shape'])}"
    if "value" in c:
        v = c["value"]
        if isinstance(v, bool):
            v = int(v)
        return f"const {prefix}.{c['name']} = {v!r}{where}"
    if c.get("shape") and 0 in c["shape"]:
        return f"# {prefix}.{c['name']}: an empty tensor, no relation needed{where}"
    return f"# {prefix}.{c['name']}: not a scalar constant, no relation written{where}"


# ---------------------------------------------------------------- driver

@dataclasses.dataclass
class HFCapture:
    out_dir: str
    spec: str
    impls: list
    spec_params: str
    impl_params: list
    relation: str


def _run(jobs, log):
    """Runs [(label, args)] in spawned processes, at most `jobs` at a time, in order of start."""
    ctx = multiprocessing.get_context("spawn")
    pending = list(jobs)
    running = []
    limit = max(1, min(len(pending), os.cpu_count() or 1, 4))
    while pending or running:
        while pending and len(running) < limit:
            label, args, path = pending.pop(0)
            p = ctx.Process(target=_capture_one_reporting, args=args)
            p.start()
            running.append((label, p, path, time.time()))
        label, p, path, t0 = running.pop(0)
        p.join()
        message = failure_message(path.replace(".params.json", ".py"))
        if p.exitcode != 0 or not os.path.exists(path):
            for _, q, _, _ in running:
                q.terminate()
                q.join()
            raise CaptureError(f"capturing {label} failed: {message}" if message
                               else f"capturing {label} failed (exit code {p.exitcode})")
        log(f"{label}: captured {os.path.basename(path).replace('.params.json', '.py')} in {time.time() - t0:.1f} s")


def capture_hf(family: str, tp: int, layers: int, out_dir: str, attn: str = "sdpa",
               options: dict | None = None, log=print) -> HFCapture:
    """Captures the spec and the `tp` ranks of `family` with `layers` layers into out_dir and writes
    the placeholder maps and check.rel. Returns the paths."""
    if family not in FAMILIES:
        raise ValueError(f"unknown family {family!r} (known: {', '.join(FAMILIES)})")
    if tp < 2:
        raise ValueError("tp must be at least 2")
    os.makedirs(out_dir, exist_ok=True)
    spec = os.path.join(out_dir, "spec.py")
    spec_params = os.path.join(out_dir, "spec.params.json")
    impls = [os.path.join(out_dir, f"impl.r{r}.py") for r in range(tp)]
    impl_params = [os.path.join(out_dir, f"impl.r{r}.params.json") for r in range(tp)]
    overrides = heads_for(tp)
    if overrides:
        log(f"tp={tp}: {overrides['num_attention_heads']} heads / {overrides['num_key_value_heads']} kv heads "
            f"(each rank needs whole kv heads)")
    jobs = [("spec", (family, layers, tp, None, attn, spec, spec_params, overrides), spec_params)]
    jobs += [(f"rank {r}/{tp}", (family, layers, tp, r, attn, impls[r], impl_params[r], overrides), impl_params[r])
             for r in range(tp)]
    _run(jobs, log)
    with open(spec_params) as f:
        sp = json.load(f)
    rps = []
    for path in impl_params:
        with open(path) as f:
            rps.append(json.load(f))
    relation = os.path.join(out_dir, "check.rel")
    with open(relation, "w") as f:
        f.write(write_relation(sp, rps, options=options))
    log(f"wrote {relation}")
    return HFCapture(out_dir, spec, impls, spec_params, impl_params, relation)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m tangle.hf", description=__doc__.split("\n\n")[0])
    ap.add_argument("family", choices=FAMILIES)
    ap.add_argument("--tp", type=int, default=2, help="tensor-parallel degree (ranks)")
    ap.add_argument("--layers", type=int, default=1, help="decoder layers")
    ap.add_argument("--attn", default="sdpa", help="attn_implementation: sdpa (transformers' default) or eager")
    ap.add_argument("--out", required=True, help="output folder")
    ap.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                    help="an `option KEY = VALUE` line for check.rel (repeatable)")
    a = ap.parse_args(argv)
    options = {}
    for o in a.option:
        key, sep, value = o.partition("=")
        if not sep:
            ap.error(f"--option needs KEY=VALUE, got {o!r}")
        options[key.strip()] = value.strip()
    out = capture_hf(a.family, a.tp, a.layers, a.out, a.attn, options)
    print(out.relation)
    return 0


if __name__ == "__main__":
    sys.exit(main())
