"""Capture Megatron-core's GPTModel and its tensor-parallel ranks for tangle.

The spec is ``GPTModel`` built with tensor-parallel size 1; rank r of N is the same model built with
``tensor_model_parallel_size=N`` after ``parallel_state.initialize_model_parallel`` under a fake
process group. Tiny config, random weights, CPU initialization, fusions and dropout off, the
``get_gpt_layer_local_spec()`` layers (no Transformer Engine). Each graph is captured in its own
spawned process (forward, ``no_grad``) by ``tangle.hf``'s capture, so the files are the same as for
``hf:`` targets (``spec.py``, ``impl.r{rank}.py``, ``*.params.json``, ``check.rel``).

Megatron's parameters are plain tensors: a parameter's layout on the ranks is read from the
attributes Megatron sets on it, ``tensor_model_parallel`` and ``partition_dim`` (``Shard(dim)``;
``Replicate`` when not tensor-parallel). A parameter split with ``partition_stride != 1`` is refused
(its shards interleave; no relation is written for that). The logits ``[batch, seq, vocab]`` are
vocab-sharded (``Shard(2)``) when the output layer does not gather them (Megatron's default
``parallel_output=True``), else replicated.

The fused QKV weight (``linear_qkv``) is laid out per query group ([q heads of the group, k, v]);
``Shard(0)`` of it is what each rank holds because every rank gets whole groups. The head counts
are chosen so that they divide (``heads_for``).

``backward=True`` (``--backward``) captures one training step instead (tangle.hf_train's joint graph):
Megatron's vocab-parallel cross entropy (its mean over the tokens), then every parameter's gradient,
expected with the layout ``grad_layout`` gives (where Megatron leaves it after backward).

Megatron on a CPU-only machine needs a few patches (CUDA device queries, the CUDA RNG tracker, a
``warnings.warn`` only rank 0 calls inside forward). tangle applies none: ``setup="MODULE"`` names a
module whose ``setup()`` runs first in every capture process; tests/python/megatron_cpu.py is one.

Full-size shapes (``SHAPES``, ``--shape gpt3-6.7b``) or ``fake=True`` (``--fake``) capture without weights:
the model is constructed, run and traced inside a FakeTensorMode (``_capture_one``); the graphs are the
ones a capture with weights gives.

    from tangle import megatron                          # PYTHONPATH=python
    out = megatron.capture_megatron(tp=2, layers=1, out_dir="out/gpt_tp2", setup="megatron_cpu")

Command line:  python -m tangle.megatron --tp 2 --layers 1 --setup MODULE [--backward] [--shape S] [--fake] --out DIR
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys
import warnings

from . import hf
from .capture import _run_reporting

# Tiny shapes: GQA (2 query groups of 2 heads), vocab and ffn divisible by every TP degree up to 4.
TINY = dict(hidden_size=64, num_attention_heads=4, num_query_groups=2, ffn_hidden_size=128)
VOCAB = 128
SEQ = 8
SEED = 0
# Full-size shapes (public architecture numbers; the vocabulary padded to a multiple of 128 x 8 ranks
# as Megatron pads it), for --shape: captured without weights (FakeTensorMode), like tangle.hf's.
SHAPES = {
    "tiny": dict(TINY, vocab_size=VOCAB),
    # GPT-3 6.7B: hidden 4096, 32 heads, ffn 4 x hidden, GPT-2 vocabulary 50257 padded.
    "gpt3-6.7b": dict(hidden_size=4096, num_attention_heads=32, num_query_groups=32, ffn_hidden_size=16384,
                      vocab_size=51200),
    # GPT-3 175B: hidden 12288, 96 heads.
    "gpt3-175b": dict(hidden_size=12288, num_attention_heads=96, num_query_groups=96, ffn_hidden_size=49152,
                      vocab_size=51200),
}


def heads_for(tp: int, base: dict = TINY) -> dict:
    """Head counts for degree tp: the shape's own while its query groups divide by tp, else tp groups
    of 2 heads (each rank needs whole query groups of linear_qkv)."""
    groups = base["num_query_groups"]
    if groups % tp == 0:
        return {}
    groups = tp * ((groups + tp - 1) // tp)
    return dict(num_query_groups=groups, num_attention_heads=2 * groups)


def run_setup(setup: str | None):
    """Imports `setup` and calls its setup() (the caller's CPU patches); nothing when None."""
    if not setup:
        return
    module = importlib.import_module(setup)
    fn = getattr(module, "setup", None)
    if not callable(fn):
        raise ValueError(f"setup module {setup!r} has no setup() function")
    fn()


def tiny_config(layers: int, tp: int, **overrides):
    from megatron.core.transformer import TransformerConfig
    kw = dict(TINY, num_layers=layers, tensor_model_parallel_size=tp, use_cpu_initialization=True,
              hidden_dropout=0.0, attention_dropout=0.0, bias_activation_fusion=False,
              masked_softmax_fusion=False, bias_dropout_fusion=False, apply_rope_fusion=False,
              gradient_accumulation_fusion=False, persist_layer_norm=False)
    kw.update(overrides)
    return TransformerConfig(**kw)


def build_model(layers: int, tp: int = 1, parallel_output: bool = True, vocab: int = VOCAB, fake=None,
                **overrides):
    """GPTModel (eval mode, seeded weights) for degree tp. The (fake) default process group must be
    initialized (world size tp); this initializes Megatron's model-parallel groups on it. `fake`: a
    FakeTensorMode to construct the model in: Megatron's own initialization (the full master weight
    built on every rank, then this rank's slice copied, `_initialize_affine_weight_cpu`) runs on
    fake tensors, so no weight is materialized and its tensor-parallel attributes are set as usual."""
    import contextlib
    import torch
    from megatron.core import parallel_state
    from megatron.core.models.gpt import GPTModel
    from megatron.core.models.gpt.gpt_layer_specs import get_gpt_layer_local_spec
    parallel_state.initialize_model_parallel(tensor_model_parallel_size=tp, create_gloo_process_groups=False)
    torch.manual_seed(SEED)
    with fake or contextlib.nullcontext():
        return GPTModel(config=tiny_config(layers, tp, **overrides), transformer_layer_spec=get_gpt_layer_local_spec(),
                        vocab_size=vocab, max_sequence_length=SEQ, parallel_output=parallel_output,
                        share_embeddings_and_output_weights=False).eval()


def inputs(vocab: int = VOCAB) -> dict:
    """input_ids [1, SEQ], position_ids [1, SEQ] and the causal attention_mask [1, 1, SEQ, SEQ]
    (True = masked out, Megatron's convention)."""
    import torch
    g = torch.Generator().manual_seed(SEED + 1)
    return dict(input_ids=torch.randint(0, vocab, (1, SEQ), generator=g),
                position_ids=torch.arange(SEQ).unsqueeze(0),
                attention_mask=torch.triu(torch.ones(SEQ, SEQ, dtype=torch.bool), diagonal=1)[None, None])


def layouts(model, tp: int) -> dict:
    """{id(parameter): (placement, global shape)} from Megatron's tensor-parallel attributes."""
    out = {}
    for name, p in model.named_parameters():
        if not getattr(p, "tensor_model_parallel", False):
            continue
        dim, stride = getattr(p, "partition_dim", -1), getattr(p, "partition_stride", 1)
        if stride != 1:
            raise ValueError(f"{name}: partition_stride {stride} (interleaved shards) has no relation here")
        if not 0 <= dim < p.dim():
            raise ValueError(f"{name}: tensor_model_parallel but partition_dim is {dim}")
        shape = list(p.shape)
        shape[dim] *= tp
        out[id(p)] = (f"Shard({dim})", shape)
    return out


def labels(vocab: int = VOCAB):
    """Fixed random target ids [1, SEQ] for the training step (the same on the spec and every rank)."""
    import torch
    g = torch.Generator().manual_seed(SEED + 2)
    return torch.randint(0, vocab, (1, SEQ), generator=g)


def grad_layout(fqn: str, param, config) -> str:
    """Layout of a parameter's gradient on the ranks once Megatron's training step is done with it.
    Tensor-parallel weights: this rank's shard (Shard(partition_dim)). The other parameters are
    replicated; their gradient is whole on every rank unless Megatron all-reduces it after backward,
    outside the traced step (distributed/finalize_model_grads.py, _allreduce_non_tensor_model_parallel_grads):
    a sum over the tensor-parallel group for `sequence_parallel` parameters under sequence parallelism
    and for q/k layernorms, so each rank's own gradient is a partial sum (Partial(sum)). The ones it
    averages (`average_gradients_across_tp_domain`) are refused."""
    if getattr(param, "tensor_model_parallel", False):
        return f"Shard({param.partition_dim})"
    if getattr(param, "average_gradients_across_tp_domain", False):
        raise ValueError("a gradient averaged over the tensor-parallel ranks after backward has no relation here")
    if config.sequence_parallel and getattr(param, "sequence_parallel", False):
        return "Partial(sum)"
    if config.qk_layernorm and ("q_layernorm" in fqn or "k_layernorm" in fqn):
        return "Partial(sum)"
    return "Replicate"


def training_step(model, parallel_output: bool):
    """The loss of one step. Vocab-sharded logits: Megatron's own, GPTModel with labels returns the
    per-token vocab-parallel cross entropy [batch, seq], and the step's loss is its mean (every token
    counted, no loss mask). Gathered logits: torch's cross entropy of the full logits (mean)."""
    import torch.nn.functional as F

    def vocab_parallel(ids, pos, mask, target):
        return model(ids, pos, mask, labels=target).mean()

    def gathered(ids, pos, mask, target):
        return F.cross_entropy(model(ids, pos, mask).flatten(0, 1).float(), target.flatten())

    return vocab_parallel if parallel_output else gathered


def output_layout(model) -> str:
    """Layout of the logits [batch, seq, vocab] on the ranks."""
    return "Replicate" if model.output_layer.gather_output else "Shard(2)"


def _real_scratch():
    """Megatron's global scratch buffers, allocated by a run on fake weights, made real (zeros; a few KiB
    at SEQ tokens): the graph reads them as constants, as a capture with weights does, and aot_autograd
    refuses a fake constant in a training step."""
    import torch
    from megatron.core import parallel_state
    from torch._subclasses.fake_tensor import is_fake, unset_fake_temporarily
    buffers = parallel_state.get_global_memory_buffer().buffer
    with unset_fake_temporarily():
        for key, t in buffers.items():
            if is_fake(t):
                buffers[key] = torch.zeros(t.shape, dtype=t.dtype)


def _capture_one(layers, tp, rank, setup, parallel_output, graph_path, params_path, overrides=None,
                 backward=False, fake=False):
    """One spawned process: the spec (rank None, world size 1) or one rank, under a fake process group.
    The model runs once before the capture: its first forward allocates Megatron's global memory
    buffer (the attention's baddbmm scratch, read with beta=0), which would otherwise be created
    inside the graph and returned as a second output. `backward`: one training step (loss and every
    parameter gradient, tangle.hf_train's joint graph) instead of the forward. `overrides`: the config
    entries that differ from the tiny shape (`vocab_size` among them). `fake`: no weights, shapes
    only: construction, the first run and the capture all under one FakeTensorMode."""
    import contextlib
    import torch
    import torch.distributed as dist
    from torch.testing._internal.distributed.fake_pg import FakeStore
    if not os.environ.get("TANGLE_DEBUG"):  # Megatron's import-time notes (no Apex, no TE) on every process
        warnings.filterwarnings("ignore", category=UserWarning, module=r"megatron\.")
    run_setup(setup)
    overrides = dict(overrides or {})
    vocab = overrides.pop("vocab_size", VOCAB)
    world = 1 if rank is None else tp
    info = dict(family="megatron-gpt", layers=layers, seq=SEQ, parallel_output=parallel_output,
                config=dict(TINY, vocab_size=vocab, **overrides))
    if fake:
        info["weights"] = "fake"
    info.update(dict(role="spec", world_size=1) if rank is None else dict(role="impl", rank=rank, world_size=tp))
    mode = None
    if fake:
        from torch._subclasses.fake_tensor import FakeTensorMode
        mode = FakeTensorMode(allow_non_fake_inputs=True)  # the inputs below are real (small) tensors
    dist.init_process_group("fake", store=FakeStore(), rank=rank or 0, world_size=world)
    try:
        from megatron.core import parallel_state
        model = build_model(layers, world, parallel_output, vocab, mode, **overrides)
        try:
            x = inputs(vocab)
            with mode or contextlib.nullcontext(), torch.no_grad():
                model(*x.values())  # allocates Megatron's global scratch buffer outside the graph (see above)
            if mode:
                _real_scratch()
            if backward:
                from . import hf_train
                hf_train.capture_training(model, None, None, graph_path, params_path, dict(info, backward=True),
                                          inputs=dict(x, labels=labels(vocab)),
                                          step=training_step(model, parallel_output),
                                          layouts=layouts(model, world) if rank is not None else None,
                                          grad_layout=lambda fqn, p: grad_layout(fqn, p, model.config),
                                          fake_mode=mode)
                return
            with mode or contextlib.nullcontext():
                params = hf.capture_model(model, x, graph_path, params_path, info,
                                          forward=lambda ids, pos, mask: model(ids, pos, mask),
                                          layouts=layouts(model, world) if rank is not None else None,
                                          output_layout=output_layout(model))
            if len(params["outputs"]) != 1:
                raise RuntimeError(f"{graph_path}: the graph returns {len(params['outputs'])} tensors, "
                                   f"expected the logits alone")
        finally:
            parallel_state.destroy_model_parallel()
    finally:
        dist.destroy_process_group()


def _capture_one_reporting(*args):
    """_capture_one in a spawned process; an exception is left as one line for the parent."""
    # Megatron's CPU shims were written against torch.compile; the eager frontend (tangle.eager_trace)
    # is not yet validated for it, so its captures keep Dynamo unless the user chose a frontend.
    os.environ.setdefault("TANGLE_CAPTURE_FRONTEND", "dynamo")
    _run_reporting(args[5], lambda: _capture_one(*args))


def header(tp: int, layers: int, parallel_output: bool, backward: bool = False) -> list[str]:
    logits = "vocab-sharded" if parallel_output else "gathered"
    step = ", one training step (vocab-parallel cross entropy, forward + backward)" if backward else ""
    return [f"# Megatron-core GPTModel, {layers} layer(s), tensor parallel {tp}, logits {logits}{step}",
            "# written by python -m tangle.megatron from the placeholder maps (*.params.json); layouts from",
            "# each parameter's tensor_model_parallel / partition_dim"]


def capture_megatron(tp: int, layers: int, out_dir: str, setup: str | None = None, parallel_output: bool = True,
                     options: dict | None = None, log=print, backward: bool = False, shape: str = "tiny",
                     fake: bool | None = None) -> hf.HFCapture:
    """Captures the spec and the `tp` ranks of a GPTModel into out_dir and writes the placeholder
    maps and check.rel. `setup`: module whose setup() runs first in each capture process. `backward`:
    one training step (Megatron's loss, then every parameter gradient) instead of the forward.
    `shape`: a key of SHAPES. `fake`: capture without weights (FakeTensorMode); default: for every
    shape but "tiny"."""
    if tp < 2:
        raise ValueError("tp must be at least 2")
    if layers < 1:
        raise ValueError("layers must be at least 1")
    if shape not in SHAPES:
        raise ValueError(f"unknown shape {shape!r} (known: {', '.join(SHAPES)})")
    fake = shape != "tiny" if fake is None else bool(fake)
    base = SHAPES[shape]
    spec, spec_params, impls, impl_params = hf.graph_paths(out_dir, tp)
    heads = heads_for(tp, base)
    overrides = dict({k: v for k, v in base.items() if SHAPES["tiny"].get(k) != v}, **heads)
    if heads:
        log(f"tp={tp}: {heads['num_attention_heads']} heads in {heads['num_query_groups']} query groups "
            f"(each rank needs whole groups)")
    if fake:
        log(f"shape {shape}: captured without weights (FakeTensorMode)")
    jobs = [("spec", (layers, tp, None, setup, parallel_output, spec, spec_params, overrides, backward, fake),
             spec_params)]
    jobs += [(f"rank {r}/{tp}", (layers, tp, r, setup, parallel_output, impls[r], impl_params[r], overrides,
                                 backward, fake), impl_params[r]) for r in range(tp)]
    # Spawned, not forked from the preloaded server: with torch._dynamo imported before Megatron's CPU
    # shims, Dynamo refuses Megatron's all-gather ("torch.* op returned non-Tensor").
    hf._run(jobs, log, target=_capture_one_reporting, spawn=True)
    relation = hf.write_check(out_dir, spec_params, impl_params, options,
                              header(tp, layers, parallel_output, backward), log)
    return hf.HFCapture(out_dir, spec, impls, spec_params, impl_params, relation)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m tangle.megatron", description=__doc__.split("\n\n")[0])
    ap.add_argument("--tp", type=int, default=2, help="tensor-parallel degree (ranks)")
    ap.add_argument("--layers", type=int, default=1, help="transformer layers")
    ap.add_argument("--setup", help="module whose setup() runs first in each capture process (CPU patches)")
    ap.add_argument("--gather-output", action="store_true", help="the output layer gathers the logits")
    ap.add_argument("--backward", action="store_true",
                    help="capture a training step (loss and parameter gradients), not the forward")
    ap.add_argument("--shape", default="tiny", choices=sorted(SHAPES),
                    help="model dimensions: tiny (random weights) or a full-size GPT-3 shape, captured without "
                         "weights (FakeTensorMode)")
    ap.add_argument("--fake", action="store_true", help="capture without weights (FakeTensorMode) at any shape")
    ap.add_argument("--out", required=True, help="output folder")
    ap.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                    help="an `option KEY = VALUE` line for check.rel (repeatable)")
    a = ap.parse_args(argv)
    try:
        options = hf.parse_options(a.option)
    except ValueError as e:
        ap.error(str(e))
    out = capture_megatron(a.tp, a.layers, a.out, a.setup, not a.gather_output, options, backward=a.backward,
                           shape=a.shape, fake=a.fake or None)
    print(out.relation)
    return 0


if __name__ == "__main__":
    sys.exit(main())
