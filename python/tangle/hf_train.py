"""Capture one training step (forward + backward) of an HF causal LM as one joint graph.

The step: ``loss = cross_entropy(logits.flatten(0, 1).float(), labels.flatten())``, then
``loss.backward()``, traced by aot_autograd (grad enabled, so transformers' TP layers go through
DTensor redistribute). The forward and backward graphs are stitched into one (tangle.joint); its
inputs are the forward's (``primals_*``: input ids, parameters, buffers, labels) and the tangent
of the loss (``tangents_1``, the seed of backward: 1.0 on the spec and on every rank); its outputs
are the loss and one gradient per parameter.

The placeholder map (``*.params.json``) is tangle.hf's, plus ``kind: "tangent"`` entries, and its
outputs name what they are: ``{"what": "loss", "layout": "Replicate"}`` and
``{"what": "grad", "fqn": "model.layers.0.mlp.down_proj.weight", "layout": "Shard(1)"}``; a
gradient's layout is the placement of the parameter's ``.grad`` DTensor after backward
(``Replicate`` for a plain tensor).
"""
from __future__ import annotations

import json
import os
import time

from . import eager_trace, hf
from .joint import stitch

LABEL_SEED = hf.SEED + 2


def labels(vocab: int = hf.TINY["vocab_size"], seq: int = hf.SEQ):
    """Fixed random target ids (the same on the spec and every rank)."""
    import torch
    g = torch.Generator().manual_seed(LABEL_SEED)
    return torch.randint(0, vocab, (1, seq), generator=g)


def _grad_layout(param) -> str:
    from torch.distributed.tensor import DTensor
    grad = param.grad
    if grad is None:
        raise RuntimeError("no gradient after backward")
    if isinstance(grad, DTensor):
        if len(grad.placements) != 1:
            raise ValueError(f"only 1-D meshes are supported, got gradient placements {grad.placements}")
        return hf._placement_text(grad.placements[0])
    return "Replicate"


def capture_training(model, ids, target, graph_path, params_path, info=None, *, inputs=None, step=None,
                     layouts=None, context=None, grad_layout=None, fake_mode=None):
    """Trace one training step of `model` on (ids, target); write the joint graph to graph_path and its
    placeholder map to params_path. Returns the params dict.
    Other frameworks (tangle.titan, tangle.megatron): `inputs` {name: tensor} replaces (ids, target) and is
    passed in that order to `step(*tensors) -> loss` (default: the HF cross-entropy below); `layouts` is for
    hf._describe (plain-tensor shards); `context()`: a context manager the trace and backward run in;
    `grad_layout(fqn, param) -> str`: a gradient's layout (default: the placement of the `.grad` DTensor,
    else Replicate). `fake_mode`: the FakeTensorMode of weightless parameters, entered for the step and
    left for its backward (aot_autograd compiles the backward lazily, deep-copying the backward graph with
    its real constants, which fails inside the mode; the fake tensors still compute in their own mode)."""
    import contextlib
    import torch
    import torch.nn.functional as F
    from torch._dynamo.backends.common import aot_autograd

    inputs = inputs if inputs is not None else {"input_ids": ids, "labels": target}
    names = {id(t): ("input", n) for n, t in inputs.items()}
    for n, b in model.named_buffers():
        names[id(b)] = ("buffer", n)
    params_by_id = {}
    for n, p in model.named_parameters():
        names[id(p)] = ("parameter", n)
        params_by_id[id(p)] = (n, p)
    graphs = {}

    def fw_compiler(gm, example_inputs):
        graphs["fw"] = gm
        graphs["fw_inputs"] = list(example_inputs)
        return gm.forward

    def bw_compiler(gm, example_inputs):
        graphs["bw"] = gm
        return gm.forward

    inner = aot_autograd(fw_compiler=fw_compiler, bw_compiler=bw_compiler)

    def backend(gm, example_inputs):
        graphs["dynamo_inputs"] = list(example_inputs)
        return inner(gm, example_inputs)

    def hf_step(x, y):
        logits = model(input_ids=x, use_cache=False).logits
        return F.cross_entropy(logits.flatten(0, 1).float(), y.flatten())

    model.zero_grad(set_to_none=True)
    compiled = eager_trace.compile(step or hf_step, backend, model)
    with context() if context else contextlib.nullcontext():
        with fake_mode or contextlib.nullcontext():
            loss = compiled(*inputs.values())
        loss.backward()
    if "fw" not in graphs or "bw" not in graphs:
        raise RuntimeError(f"{graph_path}: aot_autograd produced no {'backward' if 'fw' in graphs else 'forward'} graph")

    fw = graphs["fw"]
    dynamo_inputs = graphs["dynamo_inputs"]
    expected = [d for v in dynamo_inputs for d in hf._describe(v, names, layouts)]
    owners = [v for v in dynamo_inputs for _ in hf._describe(v, names, layouts)]
    placeholders = [n for n in fw.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(expected):
        raise RuntimeError(f"{graph_path}: {len(placeholders)} forward placeholders, but the Dynamo inputs "
                           f"expand to {len(expected)}")
    for node, d in zip(placeholders, expected):
        if (d["kind"] not in ("opaque", "symint")) != hf._is_tensor_like(node.meta.get("val")):
            raise RuntimeError(f"{graph_path}: placeholder {node.name} does not line up with {d}")
        d["name"] = node.name
    constants = hf._constants(fw)

    groups = [len(hf._describe(v, names, layouts)) for v in dynamo_inputs]
    joint = stitch(fw, graphs["bw"], groups)
    with open(graph_path, "w") as f:
        f.write(joint.module.print_readable(print_output=False))

    phs = [dict(name=d.pop("name"), **d) for d in expected]
    for k, t in enumerate(joint.tangents):  # the seed of backward, d loss / d loss
        phs.append(dict(name=t, kind="tangent", fqn="tangent:loss" if len(joint.tangents) == 1 else f"tangent:{k}",
                        placement="Replicate", global_shape=[], local_shape=[], dtype="float32"))
    outputs = [dict(name=name, what="loss", layout="Replicate", shape=shape)
               for name, shape in zip(joint.user_outputs, joint.user_shapes)]
    for index, name in joint.grads:
        d = phs[index]
        if d["kind"] != "parameter":
            raise RuntimeError(f"{graph_path}: a gradient for {d['kind']} placeholder {d['name']} ({d['fqn']})")
        _, param = params_by_id[id(owners[index])]
        layout = grad_layout(d["fqn"], param) if grad_layout else _grad_layout(param)
        outputs.append(dict(name=name, what="grad", fqn=d["fqn"], layout=layout,
                            shape=list(param.shape)))
    params = dict(info or {}, graph=os.path.basename(graph_path), backward=True, placeholders=phs,
                  constants=constants, outputs=outputs,
                  cpu_seconds=round(time.process_time(), 2),  # of this capture process (bench/scale)
                  peak_rss_mib=hf.peak_rss_mib())
    with open(params_path, "w") as f:
        json.dump(params, f, indent=1)
        f.write("\n")
    return params
