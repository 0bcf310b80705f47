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
import contextlib
import dataclasses
import json
import multiprocessing
import os
import sys
import time

from .capture import CaptureError, _run_reporting, failure_message
from . import eager_trace, progress

# Tiny shapes: GQA (fewer kv heads than heads), every TP degree up to 4 divides them.
TINY = dict(hidden_size=64, num_attention_heads=4, num_key_value_heads=2, intermediate_size=128,
            vocab_size=128, max_position_embeddings=64)
SEQ = 8
SEED = 0
# Full-size shapes of released models (public architecture numbers), for --shape: captured without
# weights (FakeTensorMode), so a 405B-shaped layer costs no memory; the checker never needs values.
SHAPES = {
    "tiny": TINY,
    "llama3-8b": dict(hidden_size=4096, num_attention_heads=32, num_key_value_heads=8, intermediate_size=14336,
                      vocab_size=128256, max_position_embeddings=8192, rope_theta=500000.0),
    "llama3-70b": dict(hidden_size=8192, num_attention_heads=64, num_key_value_heads=8, intermediate_size=28672,
                       vocab_size=128256, max_position_embeddings=8192, rope_theta=500000.0),
    "llama3-405b": dict(hidden_size=16384, num_attention_heads=128, num_key_value_heads=8,
                        intermediate_size=53248, vocab_size=128256, max_position_embeddings=8192,
                        rope_theta=500000.0),
}


def _families():
    import transformers as tf
    return {
        "llama": (tf.LlamaConfig, tf.LlamaForCausalLM),
        "qwen2": (tf.Qwen2Config, tf.Qwen2ForCausalLM),
        "qwen3": (tf.Qwen3Config, tf.Qwen3ForCausalLM),
        "phi3": (tf.Phi3Config, tf.Phi3ForCausalLM),
    }


FAMILIES = ("llama", "qwen2", "qwen3", "phi3")


def tiny_config(family: str, layers: int, attn: str = "sdpa", **overrides):
    """A small config of `family` with `layers` decoder layers (random init, no download)."""
    config_cls, _ = _families()[family]
    kw = dict(TINY, num_hidden_layers=layers, use_cache=False, tie_word_embeddings=False,
              attn_implementation=attn, pad_token_id=None)  # some families default to a pad id past TINY's vocab
    kw.update(overrides)
    return config_cls(**kw)


def build_model(family: str, layers: int, tp: int = 1, attn: str = "sdpa", plan: dict | None = None,
                fake=None, **overrides):
    """The model (eval mode, seeded weights); with tp > 1 distributed with the model's own TP plan, its
    rules overridden by `plan` ({"model.layers.*.mlp.down_proj": "rowwise", ...}: transformers'
    ``DistributedConfig.tp_plan``). For tp > 1 the (fake) default process group must already be initialized.
    `fake`: a FakeTensorMode to build the weights in (shapes only)."""
    import contextlib
    import torch
    _, model_cls = _families()[family]
    torch.manual_seed(SEED)
    with fake or contextlib.nullcontext():
        model = model_cls(tiny_config(family, layers, attn, **overrides)).eval()
    if tp > 1:
        from transformers.distributed import DistributedConfig
        if plan:
            _register_user_styles(plan)
        config = DistributedConfig(tp_size=tp, tp_plan=dict(plan)) if plan else DistributedConfig(tp_size=tp)
        dc, _, mesh_manager = model_cls.prepare_distribute_model(config)
        with fake or contextlib.nullcontext():
            model = model_cls.maybe_distribute_model(model, dc, mesh_manager)
    return model


def input_ids(vocab: int = TINY["vocab_size"], seq: int = SEQ):
    import torch
    g = torch.Generator().manual_seed(SEED + 1)
    return torch.randint(0, vocab, (1, seq), generator=g)


# ---------------------------------------------------------------- placeholder map

def _placement_text(p) -> str:
    from torch.distributed.tensor import Partial, Replicate, Shard
    from torch.distributed.tensor.placement_types import _StridedShard
    if isinstance(p, _StridedShard):  # a subclass of Shard: test it first
        return f"StridedShard({p.dim}, {p.split_factor})"
    if isinstance(p, Shard):
        return f"Shard({p.dim})"
    if isinstance(p, Replicate):
        return "Replicate"
    if isinstance(p, Partial):
        return f"Partial({p.reduce_op})"
    raise ValueError(f"unsupported placement {p!r}")


def _describe(value, names, layouts=None):
    """The AOT placeholders that one Dynamo input becomes, in order (a list of dicts). `layouts`:
    {id(plain tensor): (placement, global shape)} for frameworks whose sharded parameters are plain
    tensors (default: Replicate, global shape = local shape)."""
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
        placement, global_shape = (layouts or {}).get(id(value), ("Replicate", value.shape))
        return [dict(kind=kind, fqn=fqn, placement=placement, global_shape=list(global_shape),
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
    import torch
    node = next(n for n in gm.graph.nodes if n.op == "output")
    out = []
    for arg in node.args[0]:
        val = arg.meta.get("val") if hasattr(arg, "meta") else None
        if getattr(arg, "op", None) == "placeholder" and not isinstance(val, torch.Tensor):
            continue  # the device mesh input a DTensor output passes through: no data
        out.append(dict(name=getattr(arg, "name", str(arg)),
                        shape=list(val.shape) if val is not None and hasattr(val, "shape") else None))
    return out


def _output_layout(model) -> str:
    """Layout of the logits the ranks must produce: the one the lm_head style of the model's shipped TP plan
    gives. A plan override does not change it: what callers of the model expect is the model's contract."""
    from transformers.distributed.tensor_parallel import ALL_PARALLEL_STYLES
    style = (getattr(type(model), "_tp_plan", None) or {}).get("lm_head")
    if style is None:
        return "Replicate"
    layouts = getattr(ALL_PARALLEL_STYLES[style], "output_layouts", None)
    if layouts is None:
        return "Replicate"
    return _placement_text(layouts[0] if isinstance(layouts, (tuple, list)) else layouts)


def capture_model(model, ids, graph_path, params_path, info=None, *, forward=None, layouts=None,
                  output_layout=None, context=None):
    """Trace `model(input_ids=ids).logits` (forward, no_grad) to ATen, write the readable graph
    to graph_path and its placeholder map (JSON) to params_path. Returns the params dict.
    Other frameworks (tangle.megatron, tangle.titan): `ids` may be {input name: tensor}, passed in that
    order to `forward(*tensors) -> logits`; `layouts` is for `_describe`; `output_layout` is the logits'
    layout, or a function of the logits returning it; `context()`: a context manager the trace runs in."""
    import torch
    from torch._dynamo.backends.common import aot_autograd

    inputs = ids if isinstance(ids, dict) else {"input_ids": ids}
    names = {id(t): ("input", n) for n, t in inputs.items()}
    for n, b in model.named_buffers():
        names[id(b)] = ("buffer", n)
    for n, p in model.named_parameters():
        names[id(p)] = ("parameter", n)
    result = {}

    def fw_compiler(gm, example_inputs):
        dynamo_inputs = result["dynamo_inputs"]
        expected = [d for v in dynamo_inputs for d in _describe(v, names, layouts)]
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

    compiled = eager_trace.compile(forward or logits, backend, model)
    with torch.no_grad(), (context() if context else contextlib.nullcontext()):
        value = compiled(*inputs.values())
    if "placeholders" not in result:
        raise RuntimeError(f"nothing was captured for {graph_path}")
    layout = "Replicate"
    if info and info.get("world_size", 1) > 1:
        layout = (output_layout(value) if callable(output_layout) else output_layout) or _output_layout(model)
    for o in result["outputs"]:
        o.update(what="logits", layout=layout)
    params = dict(info or {}, graph=os.path.basename(graph_path), placeholders=result["placeholders"],
                  constants=result["constants"], outputs=result["outputs"],
                  cpu_seconds=round(time.process_time(), 2),  # of this capture process (bench/scale)
                  peak_rss_mib=peak_rss_mib())
    with open(params_path, "w") as f:
        json.dump(params, f, indent=1)
        f.write("\n")
    return params


def peak_rss_mib() -> float:
    """Peak resident memory of this process so far, MiB (Linux reports ru_maxrss in KiB)."""
    import resource
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def heads_for(tp: int, base: dict = TINY) -> dict:
    """Head counts for degree tp: the shape's own while its kv heads divide by tp, else tp kv heads and
    twice as many heads (GQA kept; each rank needs whole kv heads)."""
    kv = base["num_key_value_heads"]
    if kv % tp == 0:
        return {}
    kv = tp * ((kv + tp - 1) // tp)
    return dict(num_key_value_heads=kv, num_attention_heads=2 * kv)


def _capture_one(family, layers, tp, rank, attn, graph_path, params_path, overrides=None, plan=None,
                 fake=False, backward=False):
    """One spawned process: the spec (rank None) or one rank under a fake process group. `fake`: no
    weights, shapes only (FakeTensorMode; graphs equal to a capture with weights). `backward`: capture a
    training step (forward + backward, tangle.hf_train) instead of the forward."""
    import contextlib
    import torch.distributed as dist
    overrides = overrides or {}
    info = dict(family=family, layers=layers, attn=attn, seq=SEQ, config=dict(TINY, **overrides))
    if plan:
        info["plan_overrides"] = dict(plan)
    mode = None
    if fake:
        from torch._subclasses.fake_tensor import FakeTensorMode
        mode = FakeTensorMode(allow_non_fake_inputs=True)  # constants the model makes while running are real
    if backward:
        from . import hf_train

        def capture(model, ids, gp, pp, inf):
            return hf_train.capture_training(model, ids, hf_train.labels(inf["config"]["vocab_size"]), gp, pp, inf)
    else:
        capture = capture_model
    if rank is None:
        model = build_model(family, layers, 1, attn, fake=mode, **overrides)
        with mode or contextlib.nullcontext():
            capture(model, input_ids(info["config"]["vocab_size"]), graph_path, params_path,
                    dict(info, role="spec", world_size=1))
        return
    from torch.testing._internal.distributed.fake_pg import FakeStore
    dist.init_process_group("fake", store=FakeStore(), rank=rank, world_size=tp)
    try:
        model = build_model(family, layers, tp, attn, plan, fake=mode, **overrides)
        with mode or contextlib.nullcontext():
            capture(model, input_ids(info["config"]["vocab_size"]), graph_path, params_path,
                    dict(info, role="impl", rank=rank, world_size=tp))
    finally:
        dist.destroy_process_group()


def _capture_one_reporting(*args):
    """_capture_one in a spawned process; an exception is left as one line for the parent."""
    _run_reporting(args[5], lambda: _capture_one(*args))


# ---------------------------------------------------------------- relation

def _fmt_shape(s):
    return "[" + ", ".join(map(str, s)) + "]" if s is not None else "?"


def _strided_rhs(dim: int, split: int, names: list[str], local_len: int | None, unknown: str) -> str:
    """DTensor's StridedShard(dim, split): the tensor is `split` chunks along dim, each sharded over the
    ranks, and a rank holds its piece of every chunk, in chunk order (a fused gate/up weight sharded per
    half). As a relation: the pieces, rank by rank within each chunk."""
    if local_len is None or local_len % split:
        raise ValueError(f"{unknown}: local size {local_len} along dim {dim} does not split in {split}")
    piece = local_len // split
    parts = [f"slice({n}, dim={dim}, start={c * piece}, end={(c + 1) * piece})" for c in range(split) for n in names]
    return f"concat({', '.join(parts)}, dim={dim})"


def _layout_rhs(layout: str, every: str | None, per_rank: list[str] | None, unknown: str,
                n: int | None = None, local_shape=None) -> list[str]:
    """Right-hand sides relating a spec tensor to the ranks' tensors under `layout`: `every` names them
    all (`D*.x`) when the ranks agree on the name, else `per_rank` lists them. One line per rank for a
    replicated tensor named differently on each rank. A strided shard needs the number of ranks `n` and
    the local shape."""
    if layout == "Replicate":
        return [every] if every else list(per_rank)
    if layout.startswith("StridedShard("):
        dim, split = (int(x) for x in layout[len("StridedShard("):-1].split(","))
        names = per_rank or [every.replace("D*.", f"D{r}.") for r in range(n)]
        local_len = local_shape[dim] if local_shape is not None else None
        return [_strided_rhs(dim, split, names, local_len, unknown)]
    if layout.startswith("Shard("):
        dim = int(layout[len("Shard("):-1])
        return [f"shard({every}, dim={dim})" if every else f"concat({', '.join(per_rank)}, dim={dim})"]
    if layout == "Partial(sum)":
        return [f"sum({every})" if every else f"sum({', '.join(per_rank)})"]
    raise ValueError(unknown)


def write_relation(spec_params: dict, rank_params: list[dict], spec_file="spec.py",
                   impl_pattern="impl.r{rank}.py", options: dict | None = None,
                   header: list[str] | None = None) -> str:
    """The text of a relation file relating the spec's placeholders to the ranks', matched by FQN.

    Shard(d) -> ``S.a = shard(D*.b, dim=d)``; Replicate -> ``S.a = D*.b``; Partial(sum) -> ``S.a = sum(D*.b)``;
    scalar constants -> ``const`` lines; the logits -> ``output`` + ``expect`` with the lm_head's output layout."""
    n = len(rank_params)
    family = spec_params.get("family", "?")
    backward = bool(spec_params.get("backward"))
    if any(bool(p.get("backward")) != backward for p in rank_params):
        raise ValueError("the spec and the ranks are not the same kind of capture (forward / training step)")
    lines = header or [f"# {family}, {spec_params.get('layers', '?')} layer(s), tensor parallel {n} "
                       f"(transformers TP plan), attention {spec_params.get('attn', '?')}"
                       + (", one training step (forward + backward)" if backward else ""),
                       "# written by python -m tangle.hf from the placeholder maps (*.params.json)"]
    lines = [*lines, f"spec {spec_file}", f"impl {impl_pattern} ranks {n}"]
    for key, value in (options or {}).items():
        lines.append(f"option {key} = {value}")
    lines.append("")

    def by_fqn(params):
        out = {}
        for ph in params["placeholders"]:
            if ph["kind"] in _RELATED_KINDS and ph["fqn"]:
                out[ph["fqn"]] = ph
        return out

    ranks = [by_fqn(p) for p in rank_params]
    lines.append("# inputs, parameters and buffers (matched by FQN)")
    for ph in spec_params["placeholders"]:
        if ph["kind"] == "tensor":
            lines.append(f"# S.{ph['name']}: a tensor input with no known name; no relation written")
        if ph["kind"] not in _RELATED_KINDS:
            continue
        fqn = ph["fqn"]
        mine = [r.get(fqn) for r in ranks]
        if any(m is None for m in mine):
            missing = [str(i) for i, m in enumerate(mine) if m is None]
            if backward:  # its gradient could not be related either
                raise ValueError(f"{fqn}: an input of the spec but not of rank(s) {', '.join(missing)}")
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
        rhss = _layout_rhs(placement, d, per_rank, f"{fqn}: no relation for placement {placement}", n,
                           mine[0].get("local_shape"))
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

    lines += ["", "# outputs: the loss and every parameter's gradient" if backward else "# outputs: the logits"]
    spec_out = spec_params["outputs"]
    rank_outs = [_outputs_by_key(p["outputs"]) for p in rank_params]
    if backward and any(set(r) != set(_outputs_by_key(spec_out)) for r in rank_outs):
        spec_keys = set(_outputs_by_key(spec_out))
        odd = sorted({k[0] for r in rank_outs for k in set(r) ^ spec_keys if k[0]})
        raise ValueError(f"the spec and the ranks return different gradients: {', '.join(odd) or '(unnamed)'}")
    for key, o in _outputs_by_key(spec_out).items():
        k = key[0] or key[1]
        mine = [r[key] for r in rank_outs]
        names = {m["name"] for m in mine}
        layouts = {m.get("layout", "Replicate") for m in mine}
        if len(layouts) != 1:
            raise ValueError(f"output {k}: layout differs between ranks: {sorted(layouts)}")
        layout = layouts.pop()
        what = o.get("what", "output") + (f" of {o['fqn']}" if o.get("fqn") else "")
        lines.append(f"output S.{o['name']}  # {what} {_fmt_shape(o.get('shape'))}")
        if len(names) == 1:
            rhs = "D*." + names.pop()
            per_rank = None
        else:
            rhs = None
            per_rank = [f"D{i}.{m['name']}" for i, m in enumerate(mine)]
        comment = f"full {what} on every rank" if layout == "Replicate" else f"{what} {layout}"
        exprs = _layout_rhs(layout, rhs, per_rank, f"output {k}: no relation for layout {layout}")
        lines += [f"expect S.{o['name']} = {expr}  # {comment}" for expr in exprs]
    return "\n".join(lines) + "\n"


_RELATED_KINDS = ("input", "parameter", "buffer", "tangent")


def _outputs_by_key(outputs):
    """Outputs keyed by (fqn, position among the outputs without an FQN): gradients match by their
    parameter's FQN, the rest (logits, loss) by position."""
    out, position = {}, 0
    for o in outputs:
        if o.get("fqn"):
            key = (o["fqn"], None)
        else:
            key = (None, position)
            position += 1
        out[key] = o
    return out


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

def _user_style(ref: str):
    """The parallel style object `ref` ("MODULE:NAME") names: a transformers TensorParallelLayer instance."""
    import importlib
    from transformers.distributed.tensor_parallel import TensorParallelLayer
    module, _, name = ref.partition(":")
    try:
        obj = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as e:
        raise ValueError(f"plan style {ref}: cannot import it ({e})") from None
    if not isinstance(obj, TensorParallelLayer):
        raise ValueError(f"plan style {ref}: not a transformers TensorParallelLayer (got {type(obj).__name__})")
    return obj


def _register_user_styles(plan):
    """A style written MODULE:NAME is the user's own: registered under that name in this process."""
    from transformers.distributed.tensor_parallel import ALL_PARALLEL_STYLES
    for style in plan.values():
        if ":" in style and style not in ALL_PARALLEL_STYLES:
            ALL_PARALLEL_STYLES.register(style, _user_style(style))


def _check_plan(family, plan):
    """Refuses, before any process starts, a plan override naming a style transformers does not have (nor
    the user's MODULE:NAME) or a malformed module pattern."""
    import re
    from transformers.distributed.tensor_parallel import ALL_PARALLEL_STYLES
    for key, style in plan.items():
        if ":" in style:
            _user_style(style)
        elif style not in ALL_PARALLEL_STYLES:
            raise ValueError(f"plan override {key}={style}: unknown parallel style {style!r} "
                             f"(known: {', '.join(sorted(ALL_PARALLEL_STYLES))})")
        if not re.fullmatch(r"[A-Za-z0-9_.*]+", key):
            raise ValueError(f"plan override {key}={style}: a module pattern is dotted names and '*'")


def parse_options(items) -> dict:
    """["max_nodes=5000", ...] -> {key: value} for `option` lines of check.rel; bad items raise ValueError."""
    options = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--option needs KEY=VALUE, got {item!r}")
        options[key.strip()] = value.strip()
    return options


def parse_plan(items) -> dict:
    """["model.layers.*.mlp.down_proj=colwise", ...] -> {pattern: style}; bad items raise ValueError."""
    plan = {}
    for item in items or []:
        key, sep, style = item.partition("=")
        if not sep or not key.strip() or not style.strip():
            raise ValueError(f"--plan needs MODULE_PATTERN=STYLE, got {item!r}")
        plan[key.strip()] = style.strip()
    return plan


def _copy_spec(src_dir, out_dir, info):
    """Copies spec.py and spec.params.json from src_dir after checking they were captured for `info`."""
    import shutil
    with open(os.path.join(src_dir, "spec.params.json")) as f:
        captured = json.load(f)
    for key, value in info.items():
        if captured.get(key) != value:
            raise ValueError(f"{src_dir}: its spec was captured with {key}={captured.get(key)!r}, not {value!r}")
    for name in ("spec.py", "spec.params.json"):
        shutil.copyfile(os.path.join(src_dir, name), os.path.join(out_dir, name))


@dataclasses.dataclass
class HFCapture:
    out_dir: str
    spec: str
    impls: list
    spec_params: str
    impl_params: list
    relation: str


# Imported once by the fork server that starts capture processes, instead of once per process
# (importing torch and transformers is several CPU seconds; a capture is one process per graph).
PRELOAD = ["torch", "torch.distributed", "torch._functorch.aot_autograd", "torch._dynamo",
           "torch.testing._internal.distributed.fake_pg", "transformers", "transformers.models.llama.modeling_llama",
           "tangle.hf", "tangle.hf_train"]


def _context(preload=None, spawn=False):
    """The multiprocessing context for capture processes: a fork server that imported `preload`
    (default PRELOAD) once; each capture is a fresh fork of it, so no capture sees another's state.
    `spawn` (or TANGLE_CAPTURE_START=spawn) starts every process from scratch instead."""
    if spawn or os.environ.get("TANGLE_CAPTURE_START") == "spawn":
        return multiprocessing.get_context("spawn")
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(list(preload or PRELOAD))
    return ctx


def _in_callers_environment(env, target, *args):
    """A fork server's children inherit the server's environment, taken when it started (perhaps
    under another test's or call's settings): each capture runs under its caller's environment now."""
    os.environ.clear()
    os.environ.update(env)
    target(*args)


def _run(jobs, log, target=None, preload=None, spawn=False):
    """Runs [(label, args, params path)] in fresh processes (`target(*args)`, default
    _capture_one_reporting), a few at a time, waited for in order of start."""
    ctx = _context(preload, spawn)
    pending = list(jobs)
    running = []
    limit = max(1, min(len(pending), os.cpu_count() or 1, 4))
    while pending or running:
        while pending and len(running) < limit:
            label, args, path = pending.pop(0)
            p = ctx.Process(target=_in_callers_environment,
                            args=(dict(os.environ), target or _capture_one_reporting, *args))
            p.start()
            running.append((label, p, path, time.time()))
        progress.status(log, f"capturing {', '.join(r[0] for r in running)} ... "
                             f"({len(jobs) - len(pending) - len(running)}/{len(jobs)} captured)")
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
               options: dict | None = None, log=print, plan: dict | None = None,
               spec_from: str | None = None, shape: str = "tiny", backward: bool = False,
               heads: tuple | None = None) -> HFCapture:
    """Captures the spec and the `tp` ranks of `family` with `layers` layers into out_dir and writes
    the placeholder maps and check.rel. Returns the paths. `plan` overrides rules of the model's TP plan
    (module pattern -> transformers parallel style); unknown patterns or styles are refused (ValueError).
    `spec_from`: a folder with the spec captured before for the same family, layers, attention and heads
    (a plan override changes only the ranks); it is copied instead of captured again. `shape`: a key of
    SHAPES; other than "tiny" the graphs are captured without weights (FakeTensorMode). `backward`: one
    training step (loss and every parameter gradient, tangle.hf_train) instead of the forward. `heads`:
    (attention heads, kv heads) instead of heads_for's choice; the kv heads must divide by tp."""
    if family not in FAMILIES:
        raise ValueError(f"unknown family {family!r} (known: {', '.join(FAMILIES)})")
    if tp < 2:
        raise ValueError("tp must be at least 2")
    if shape not in SHAPES:
        raise ValueError(f"unknown shape {shape!r} (known: {', '.join(SHAPES)})")
    fake = shape != "tiny"
    base = SHAPES[shape]
    if heads:
        n, kv = heads
        if kv % tp or n % kv:
            raise ValueError(f"heads {n}/{kv}: the kv heads must divide by tp={tp} and the heads by the kv heads")
        heads = dict(num_attention_heads=n, num_key_value_heads=kv)
    else:
        heads = heads_for(tp, base)
    overrides = dict(base if fake else {}, **heads)
    spec, spec_params, impls, impl_params = graph_paths(out_dir, tp)
    if heads:
        log(f"tp={tp}: {overrides['num_attention_heads']} heads / {overrides['num_key_value_heads']} kv heads "
            f"(each rank needs whole kv heads)")
    if plan:
        _check_plan(family, plan)
        log("plan overrides: " + ", ".join(f"{k}={v}" for k, v in plan.items()))
    jobs = [] if spec_from else [("spec", (family, layers, tp, None, attn, spec, spec_params, overrides, None,
                                            fake, backward), spec_params)]
    if spec_from:
        _copy_spec(spec_from, out_dir, dict(family=family, layers=layers, attn=attn, seq=SEQ,
                                            config=dict(TINY, **overrides), backward=backward or None))
        log(f"spec: copied from {spec_from}")
    jobs += [(f"rank {r}/{tp}", (family, layers, tp, r, attn, impls[r], impl_params[r], overrides, plan, fake,
                                 backward), impl_params[r]) for r in range(tp)]
    _run(jobs, log)
    relation = write_check(out_dir, spec_params, impl_params, options, log=log)
    return HFCapture(out_dir, spec, impls, spec_params, impl_params, relation)


def graph_paths(out_dir, tp: int):
    """Creates out_dir; returns where the captures go: spec.py, spec.params.json, [impl.r{r}.py],
    [impl.r{r}.params.json]."""
    os.makedirs(out_dir, exist_ok=True)
    return (os.path.join(out_dir, "spec.py"), os.path.join(out_dir, "spec.params.json"),
            [os.path.join(out_dir, f"impl.r{r}.py") for r in range(tp)],
            [os.path.join(out_dir, f"impl.r{r}.params.json") for r in range(tp)])


def write_check(out_dir, spec_params: str, impl_params: list, options=None, header=None, log=print) -> str:
    """Writes out_dir/check.rel from the placeholder maps the captures left (write_relation); returns its path."""
    with open(spec_params) as f:
        sp = json.load(f)
    rps = []
    for path in impl_params:
        with open(path) as f:
            rps.append(json.load(f))
    relation = os.path.join(out_dir, "check.rel")
    with open(relation, "w") as f:
        f.write(write_relation(sp, rps, options=options, header=header))
    log(f"wrote {relation}")
    return relation


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m tangle.hf", description=__doc__.split("\n\n")[0])
    ap.add_argument("family", choices=FAMILIES)
    ap.add_argument("--tp", type=int, default=2, help="tensor-parallel degree (ranks)")
    ap.add_argument("--layers", type=int, default=1, help="decoder layers")
    ap.add_argument("--attn", default="sdpa", help="attn_implementation: sdpa (transformers' default) or eager")
    ap.add_argument("--out", required=True, help="output folder")
    ap.add_argument("--backward", action="store_true",
                    help="capture a training step (loss and parameter gradients), not the forward")
    ap.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                    help="an `option KEY = VALUE` line for check.rel (repeatable)")
    ap.add_argument("--shape", default="tiny", choices=sorted(SHAPES),
                    help="model dimensions: tiny (random weights), or a released model's full shape, captured "
                         "without weights (FakeTensorMode)")
    ap.add_argument("--plan", action="append", default=[], metavar="PATTERN=STYLE",
                    help="override a rule of the model's TP plan, e.g. model.layers.*.mlp.down_proj=colwise; "
                         "a style MODULE:NAME is your own TensorParallelLayer object")
    a = ap.parse_args(argv)
    try:
        options = parse_options(a.option)
    except ValueError as e:
        ap.error(str(e))
    out = capture_hf(a.family, a.tp, a.layers, a.out, a.attn, options, plan=parse_plan(a.plan), shape=a.shape,
                     backward=a.backward)
    print(out.relation)
    return 0


if __name__ == "__main__":
    sys.exit(main())
