"""Capture torchtitan's Llama-3 and its tensor-parallel version for tangle.

The spec is the unparallelized model; rank r of N is the same model after torchtitan's own
``model.parallelize(parallel_dims)`` (its per-module sharding configs, with or without sequence
parallel) under a fake process group, with either SPMD backend:

* ``partial_dtensor``: parameters are DTensors; their placements give the layout;
* ``spmd_types`` (torchtitan's default): parameters stay plain tensors; the layout of each is its
  module's ``_sharding_config.state_shardings`` (TP axis). This backend only communicates inside
  ``dist_utils.get_spmd_context(parallel_dims=...)``: outside it the graph has no collective at all,
  so a parallel capture that shards parameters but holds no collective is refused (CaptureError).

The model is a tiny Llama-3 config (random weights, no download) with torchtitan's
``ScaledDotProductAttention`` as inner attention, restricted to the math SDPA backend (the language
model's own flex/varlen backends need GPU kernels). Graphs, placeholder maps and ``check.rel`` are
written as by ``tangle.hf`` (same files, same relation writer); nothing here decides a verdict.

    from tangle import titan                             # PYTHONPATH=python
    out = titan.capture_titan(tp=2, sp=True, backend="spmd_types", out_dir="out/titan")

Command line:  python -m tangle.titan --tp 2 [--sp] [--backend spmd_types|partial_dtensor] --out DIR
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import sys

from . import hf
from .capture import CaptureError, _run_reporting

TINY = dict(dim=64, n_heads=4, n_kv_heads=2, hidden_dim=128, vocab_size=128, max_seq_len=64)
SEQ = 8
SEED = 0
BACKENDS = ("spmd_types", "partial_dtensor")
# Planted bugs for tests (never on by default): each makes the ranks compute something else.
# norm_grad_unreduced (training step, spmd_types, sequence parallel): the norms' weights are declared
# invariant (I) instead of replicate (R), i.e. complete gradients, while each rank's is partial.
BUGS = ("embedding_offset", "norm_grad_unreduced")


def heads_for(tp: int) -> dict:
    """Head counts for degree tp: torchtitan needs tp to divide both head counts."""
    kv = TINY["n_kv_heads"]
    if kv % tp == 0:
        return {}
    kv = tp * ((kv + tp - 1) // tp)
    return dict(n_kv_heads=kv, n_heads=2 * kv)


def model_config(layers: int, sp: bool, bug: str | None = None, flavor: str | None = None, **overrides):
    """A tiny Llama3Model.Config (or, with `flavor`, torchtitan's shipped config of that name, e.g. "405B",
    cut to its first `layers` layers) with torchtitan's sharding configs filled (TP plan, SP or not)."""
    if flavor:
        return _sharded(_shipped_config(flavor, layers), sp, bug)
    from torchtitan.models.common import ComplexRoPE, Embedding, Linear, RMSNorm
    from torchtitan.models.common.attention import ScaledDotProductAttention
    from torchtitan.models.llama3 import Llama3Model, _build_llama3_layers
    c = dict(TINY, **overrides)
    dim, heads = c["dim"], c["n_heads"]
    blocks = _build_llama3_layers(
        n_layers=layers, dim=dim, n_heads=heads, n_kv_heads=c["n_kv_heads"], hidden_dim=c["hidden_dim"],
        rope=ComplexRoPE.Config(dim=dim // heads, max_seq_len=c["max_seq_len"], theta=500000, scaling="llama"),
        attn_backend="flex")
    for b in blocks:  # flex attention needs GPU kernels; SDPA (math) is torchtitan's CPU-runnable module
        b.attention.inner_attention = ScaledDotProductAttention.Config()
    config = Llama3Model.Config(
        dim=dim, vocab_size=c["vocab_size"],
        tok_embeddings=Embedding.Config(num_embeddings=c["vocab_size"], embedding_dim=dim),
        norm=RMSNorm.Config(normalized_shape=dim),
        lm_head=Linear.Config(in_features=dim, out_features=c["vocab_size"]), layers=blocks)
    return _sharded(config, sp, bug)


def _shipped_config(flavor: str, layers: int):
    """torchtitan's own Llama-3 config `flavor` (llama3_configs: debugmodel, 8B, 70B, 405B, ...) with its
    first `layers` layers, inner attention torchtitan's SDPA module (flex needs GPU kernels)."""
    from torchtitan.models.common.attention import ScaledDotProductAttention
    from torchtitan.models.llama3 import llama3_configs
    if flavor not in llama3_configs:
        raise ValueError(f"unknown torchtitan llama3 flavor {flavor!r} (known: {', '.join(llama3_configs)})")
    config = llama3_configs[flavor](attn_backend="flex")
    if not 1 <= layers <= len(config.layers):
        raise ValueError(f"flavor {flavor} has {len(config.layers)} layers; cannot take {layers}")
    config.layers = config.layers[:layers]
    for b in config.layers:
        b.attention.inner_attention = ScaledDotProductAttention.Config()
    return config


def _sharded(config, sp: bool, bug: str | None):
    from torchtitan.models.llama3.sharding import set_llama3_sharding_config
    # What Llama3Model.Config.update_from_config does for TP, without importing the trainer.
    set_llama3_sharding_config(config, enable_sp=sp)
    if bug == "norm_grad_unreduced":
        _declare_norm_weights_invariant(config)
    return config


def _declare_norm_weights_invariant(config):
    """The plan variant of the norm_grad_unreduced bug: every norm weight typed I on the TP axis."""
    import spmd_types as spmd
    from torchtitan.models.common.decoder_sharding import dense_param_placement
    norms = [config.norm] + [n for b in config.layers for n in (b.attention_norm, b.ffn_norm)]
    for n in norms:
        n.sharding_config.state_shardings["weight"] = dense_param_placement(tp=spmd.I)


@contextlib.contextmanager
def _buffers_only(on: bool):
    """init_states without parameter initializers while `on`: fake parameters hold no values to set (the
    random initializers are data-dependent under FakeTensorMode); buffers (RoPE cache) are still computed."""
    from torchtitan.protocols.module import Module
    if not on:
        yield
        return
    saved = Module._init_self_parameters
    Module._init_self_parameters = lambda self: None
    try:
        yield
    finally:
        Module._init_self_parameters = saved


def _math_sdpa():
    from torch.nn.attention import SDPBackend
    from torchtitan.models.common.attention import ScaledDotProductAttention
    ScaledDotProductAttention.sdpa_backends = [SDPBackend.MATH]


def input_ids(vocab: int = TINY["vocab_size"], seq: int = SEQ):
    import torch
    g = torch.Generator().manual_seed(SEED + 1)
    return torch.randint(0, vocab, (1, seq), generator=g)


# ---------------------------------------------------------------- layouts (spmd_types)

def _tp_type_text(t, rank: int) -> str | None:
    """An spmd_types per-axis type as a placement text (S(d) -> Shard(d), R/I -> Replicate, P -> Partial)."""
    import spmd_types as spmd
    if isinstance(t, spmd.types.Shard):
        return f"Shard({t.dim % rank if t.dim < 0 else t.dim})"
    name = getattr(t, "name", str(t))
    if name in ("R", "I"):
        return "Replicate"
    if name == "P":
        return "Partial(sum)"
    return None


def _tp_axis(layout):
    for axis, t in layout.axis_types.items():
        if str(getattr(axis, "value", axis)) == "tp":
            return t
    return None


def _declared_types(model):
    """(module name, attribute, value, TP-axis spmd type or None) for every declared parameter/buffer."""
    for mname, mod in model.named_modules():
        sc = getattr(mod, "_sharding_config", None)
        for attr, layout in (getattr(sc, "state_shardings", None) or {}).items():
            value = getattr(mod, attr, None)
            if value is not None and hasattr(value, "shape"):
                yield mname, attr, value, _tp_axis(layout)


def grad_placements(model) -> dict:
    """{id(parameter): layout of its gradient} under spmd_types (plain tensors, no .grad placement):
    in spmd_types a value typed R (replicate) has a P (partial) gradient, reduced later by whoever
    owns the gradient sync (FSDP, when enabled); I (invariant) and S(d) keep their type."""
    out = {}
    for mname, attr, value, t in _declared_types(model):
        text = _tp_type_text(t, value.dim()) if t is not None else "Replicate"
        if t is not None and getattr(t, "name", None) == "R":
            text = "Partial(sum)"
        out[id(value)] = text
    return out


def state_placements(model, world_size: int) -> dict:
    """{id(tensor): (placement text, global shape)} for every parameter/buffer whose module declares its
    TP layout in ``_sharding_config.state_shardings`` (the spmd_types backend keeps plain tensors)."""
    out = {}
    for mname, mod in model.named_modules():
        sc = getattr(mod, "_sharding_config", None)
        for attr, layout in (getattr(sc, "state_shardings", None) or {}).items():
            value = getattr(mod, attr, None)
            if value is None or not hasattr(value, "shape"):
                continue
            t = _tp_axis(layout)
            text = _tp_type_text(t, value.dim()) if t is not None else "Replicate"
            if text is None:
                raise CaptureError(f"{mname}.{attr}: TP layout {t} has no relation")
            shape = list(value.shape)
            if text.startswith("Shard("):
                shape[int(text[6:-1])] *= world_size
            out[id(value)] = (text, shape)
    return out


def _output_layout(model, value) -> str:
    """Layout of the logits on the ranks: the DTensor's placement, else lm_head's declared output."""
    from torch.distributed.tensor import DTensor
    if isinstance(value, DTensor):
        return hf._placement_text(value.placements[-1])
    sc = getattr(model.lm_head, "_sharding_config", None)
    layout = getattr(sc, "out_dst_shardings", None) or getattr(sc, "out_src_shardings", None)
    t = _tp_axis(layout) if layout is not None else None
    return (_tp_type_text(t, value.dim()) or "Replicate") if t is not None else "Replicate"


# ---------------------------------------------------------------- the no-collective check

COLLECTIVE = re.compile(r"torch\.ops\._c10d_functional\.(all_reduce|all_gather_into_tensor|reduce_scatter_tensor|"
                        r"all_to_all_single|broadcast)\b")


def check_collectives(params: dict, graph_text: str, where: str) -> None:
    """Refuses a parallel graph whose parameters are sharded but that never communicates: it
    cannot compute the sequential model (the silent failure of spmd_types outside its context)."""
    sharded = [p["fqn"] for p in params["placeholders"]
               if p.get("kind") == "parameter" and p.get("placement", "Replicate") != "Replicate"]
    if sharded and not COLLECTIVE.search(graph_text):
        raise CaptureError(f"{where}: the rank's graph shards parameters ({sharded[0]}, ...) but contains no "
                           f"collective: it cannot compute the sequential model (spmd_types run outside "
                           f"get_spmd_context?)")


# ---------------------------------------------------------------- the training step

def _full_logits(logits, tp_group=None):
    """The ranks' vocab-sharded logits gathered whole (a plain tensor): the loss of the training step is
    tangle.hf_train's cross-entropy on them, the same on the spec and every rank. Gathered to an
    invariant (spmd_types I / DTensor Replicate): each rank's logits gradient is its own slice."""
    from torch.distributed.tensor import DTensor, Replicate
    if isinstance(logits, DTensor):
        return logits.redistribute(logits.device_mesh, [Replicate()]).to_local()
    if tp_group is None:
        return logits
    import spmd_types as spmd
    return spmd.all_gather(logits, tp_group, src=spmd.S(logits.dim() - 1), dst=spmd.I)


def _training_capture(model, vocab, tp_group=None):
    """capture(model, ids, graph, params, info, layouts, context, grad_layout) for one training step."""
    from . import hf_train

    def loss(x, y):
        import torch.nn.functional as F
        logits = _full_logits(model(x), tp_group)
        return F.cross_entropy(logits.flatten(0, 1).float(), y.flatten())

    def capture(ids, graph_path, params_path, info, layouts=None, context=None, grads=None):
        return hf_train.capture_training(model, ids, hf_train.labels(vocab, SEQ), graph_path, params_path, info,
                                         step=loss, layouts=layouts, context=context,
                                         grad_layout=(lambda fqn, p: grads[id(p)]) if grads is not None else None)
    return capture


# ---------------------------------------------------------------- one capture

def _capture_one(layers, tp, rank, backend, sp, graph_path, params_path, overrides=None, bug=None,
                 spmd_context=True, backward=False, flavor=None):
    """One spawned process: the spec (rank None) or one rank under a fake process group. `backward`:
    one training step (loss and every parameter gradient) instead of the forward. `flavor`: torchtitan's
    shipped config of that name, built and traced without weights (FakeTensorMode: shapes only; the
    mesh and init_states stay outside the mode, the rest inside)."""
    fake = None
    if flavor:
        from torch._subclasses.fake_tensor import FakeTensorMode
        fake = FakeTensorMode(allow_non_fake_inputs=True)  # constants the model makes while running are real
    inside = fake or contextlib.nullcontext()
    import torch
    import torch.distributed as dist
    import torchtitan.distributed.parallel_dims as pdims
    from torchtitan.distributed import ParallelDims
    from torchtitan.distributed import utils as dist_utils
    pdims.device_type = "cpu"  # else torchtitan builds a CUDA mesh
    _math_sdpa()
    overrides = overrides or {}
    info = dict(framework="torchtitan", family="llama3", layers=layers, attn="sdpa (math)", backend=backend,
                sequence_parallel=sp, seq=SEQ, config=dict(TINY, **overrides))
    if flavor:
        shipped = _shipped_config(flavor, layers)
        info.update(flavor=flavor, config=dict(dim=shipped.dim, vocab_size=shipped.vocab_size))
    vocab = info["config"]["vocab_size"]
    if rank is None:
        config = model_config(layers, sp, flavor=flavor, **overrides)
        torch.manual_seed(SEED)
        with inside:
            model = config.build()
        with _buffers_only(fake is not None):
            model.init_states(buffer_device=torch.device("cpu"))
        with inside:
            if backward:
                _training_capture(model, vocab)(input_ids(vocab), graph_path, params_path,
                                                dict(info, role="spec", world_size=1))
                return
            hf.capture_model(model.eval(), input_ids(vocab), graph_path, params_path,
                             dict(info, role="spec", world_size=1), forward=lambda x: model(x))
        return
    config = model_config(layers, sp, bug, flavor=flavor, **overrides)
    from torch.testing._internal.distributed.fake_pg import FakeStore
    dist.init_process_group("fake", store=FakeStore(), rank=rank, world_size=tp)
    try:
        dist_utils.set_spmd_backend(backend)
        torch.manual_seed(SEED)
        with inside:
            model = config.build()
        with _buffers_only(fake is not None):
            model.init_states(buffer_device=torch.device("cpu"))
        dims = ParallelDims(dp_replicate=1, dp_shard=1, cp=1, tp=tp, pp=1, ep=1, world_size=tp, spmd_backend=backend)
        dims.build_mesh()
        with inside:
            model.parallelize(dims)
        if bug == "embedding_offset":  # the ranks' row offset computed from a wrong vocabulary size
            model.tok_embeddings.num_embeddings += tp
        layouts = state_placements(model, tp) if backend == "spmd_types" else None
        context = dist_utils.get_spmd_context(parallel_dims=dims) if spmd_context else None
        if backward:
            group = dims.get_mesh("tp").get_group() if backend == "spmd_types" else None
            grads = grad_placements(model) if backend == "spmd_types" else None
            with inside:
                params = _training_capture(model, vocab, group)(
                    input_ids(vocab), graph_path, params_path,
                    dict(info, role="impl", rank=rank, world_size=tp, bug=bug), layouts, context, grads)
        else:
            with inside:
                params = hf.capture_model(model.eval(), input_ids(vocab), graph_path, params_path,
                                          dict(info, role="impl", rank=rank, world_size=tp, bug=bug),
                                          forward=lambda x: model(x), layouts=layouts,
                                          output_layout=lambda v: _output_layout(model, v), context=context)
        with open(graph_path) as f:
            check_collectives(params, f.read(), f"rank {rank}/{tp} ({backend})")
    finally:
        dist.destroy_process_group()


def _capture_one_reporting(*args):
    """_capture_one in a spawned process; an exception is left as one line for the parent."""
    _run_reporting(args[5], lambda: _capture_one(*args))


# ---------------------------------------------------------------- driver

def capture_titan(tp: int, out_dir: str, sp: bool = False, backend: str = "spmd_types", layers: int = 1,
                  options: dict | None = None, bug: str | None = None, spmd_context: bool = True,
                  spec_from: str | None = None, log=print, backward: bool = False,
                  flavor: str | None = None) -> hf.HFCapture:
    """Captures the spec and the `tp` ranks into out_dir, writes the placeholder maps and check.rel.
    `spec_from`: a folder of an earlier capture with the same layers and heads whose spec is reused
    (the spec does not depend on tp, sp, the backend or a planted bug). `backward`: one training step
    (the loss and every parameter gradient, tangle.hf_train) instead of the forward. `flavor`: torchtitan's
    shipped Llama-3 config of that name (e.g. "405B") cut to `layers` layers, captured without weights."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown spmd backend {backend!r} (known: {', '.join(BACKENDS)})")
    if bug is not None and bug not in BUGS:
        raise ValueError(f"unknown planted bug {bug!r} (known: {', '.join(BUGS)})")
    if tp < 2:
        raise ValueError("tp must be at least 2")
    spec, spec_params, impls, impl_params = hf.graph_paths(out_dir, tp)
    overrides = {} if flavor else heads_for(tp)
    if flavor:
        _shipped_config(flavor, layers)  # refuses an unknown flavor or depth before any process starts
    if overrides:
        log(f"tp={tp}: {overrides['n_heads']} heads / {overrides['n_kv_heads']} kv heads "
            f"(torchtitan needs tp to divide both)")
    jobs = []
    if spec_from:
        with open(os.path.join(spec_from, "spec.params.json")) as f:
            earlier = json.load(f)
        if (earlier.get("layers") != layers or earlier.get("flavor") != flavor
                or (not flavor and earlier.get("config") != dict(TINY, **overrides))
                or bool(earlier.get("backward")) != backward):
            raise ValueError(f"{spec_from}: its spec has another config; cannot reuse it")
        for name in ("spec.py", "spec.params.json"):
            shutil.copyfile(os.path.join(spec_from, name), os.path.join(out_dir, name))
    else:
        jobs.append(("spec", (layers, tp, None, backend, sp, spec, spec_params, overrides, None, True, backward,
                              flavor), spec_params))
    jobs += [(f"rank {r}/{tp}", (layers, tp, r, backend, sp, impls[r], impl_params[r], overrides, bug, spmd_context,
                                 backward, flavor), impl_params[r]) for r in range(tp)]
    hf._run(jobs, log, target=_capture_one_reporting, preload=PRELOAD)
    title = [f"torchtitan llama3{' ' + flavor if flavor else ''}, {layers} layer(s), tensor parallel {tp}"
             f"{' + sequence parallel' if sp else ''}, spmd backend {backend}, attention sdpa (math)"
             + (", one training step (forward + backward)" if backward else "")
             + (f", planted bug {bug}" if bug else ""),
             "written by python -m tangle.titan from the placeholder maps (*.params.json)"]
    relation = hf.write_check(out_dir, spec_params, impl_params, options, [f"# {t}" for t in title], log)
    return hf.HFCapture(out_dir, spec, impls, spec_params, impl_params, relation)


PRELOAD = hf.PRELOAD + ["torchtitan.models.llama3", "torchtitan.distributed", "spmd_types", "tangle.titan"]


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m tangle.titan", description=__doc__.split("\n\n")[0])
    ap.add_argument("--tp", type=int, default=2, help="tensor-parallel degree (ranks)")
    ap.add_argument("--sp", action="store_true", help="sequence parallel (torchtitan's enable_sequence_parallel)")
    ap.add_argument("--backend", choices=BACKENDS, default="spmd_types", help="torchtitan's spmd backend")
    ap.add_argument("--layers", type=int, default=1, help="decoder layers")
    ap.add_argument("--backward", action="store_true",
                    help="capture a training step (loss and parameter gradients), not the forward")
    ap.add_argument("--flavor", default=None,
                    help="torchtitan's shipped Llama-3 config (e.g. 405B) cut to --layers, captured without weights")
    ap.add_argument("--bug", choices=BUGS, default=None, help="plant a bug in the ranks (for tests)")
    ap.add_argument("--out", required=True, help="output folder")
    ap.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                    help="an `option KEY = VALUE` line for check.rel (repeatable)")
    a = ap.parse_args(argv)
    try:
        options = hf.parse_options(a.option)
    except ValueError as e:
        ap.error(str(e))
    out = capture_titan(a.tp, a.out, a.sp, a.backend, a.layers, options, a.bug, backward=a.backward,
                        flavor=a.flavor)
    print(out.relation)
    return 0


if __name__ == "__main__":
    sys.exit(main())
