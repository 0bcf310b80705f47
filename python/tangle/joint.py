"""Stitch AOTAutograd's forward and backward graphs of one training step into one FX graph.

aot_autograd hands a forward graph (user outputs, then the tensors it saves for backward) and a
backward graph (placeholders: those saved tensors under the same node names, then ``tangents_*``;
outputs: one gradient, or None, per forward placeholder) to two separate compilers. tangle reads
one graph per rank, so ``stitch`` builds a joint graph: the forward's placeholders and the
tangents are its inputs, each backward placeholder that is a saved tensor is the forward node of
that name, and the outputs are the forward's user outputs followed by the gradients.

The result is described by ``Joint``: which output is which, so that the caller can name each
gradient by the forward placeholder (the parameter) it belongs to.
"""
from __future__ import annotations

import dataclasses


class StitchError(RuntimeError):
    """The two graphs do not fit together (one line, names the offending node)."""


@dataclasses.dataclass
class Joint:
    module: object                 # torch.fx.GraphModule of the joint graph
    user_outputs: list             # names of the forward's user outputs (the loss)
    user_shapes: list              # their shapes
    grads: list                    # [(forward placeholder index, joint output name)] for each tensor gradient
    tangents: list                 # names of the tangent placeholders (inputs of the joint graph)


def _is_tensor_node(node) -> bool:
    import torch
    return isinstance(node.meta.get("val"), torch.Tensor)


def _grad_positions(bw_out, groups, n_fw):
    """[(forward placeholder index, backward output)] for the backward's outputs. `groups`: how many
    forward placeholders each Dynamo input became (a DTensor: 2, its local tensor then its mesh). A
    DTensor's gradient comes back as as many outputs, but one None when it has none (a buffer)."""
    groups = groups or [1] * n_fw
    if sum(groups) != n_fw:
        raise StitchError(f"the inputs' groups cover {sum(groups)} placeholders, the forward has {n_fw}")
    out, j, first = [], 0, 0
    for k in groups:
        take = 1 if k > 1 and j < len(bw_out) and bw_out[j] is None else k
        out += [(first + i, a) for i, a in enumerate(bw_out[j:j + take])]
        j, first = j + take, first + k
    if j != len(bw_out):
        raise StitchError(f"the backward returns {len(bw_out)} outputs for {n_fw} forward inputs")
    return out


def stitch(fw, bw, groups=None) -> Joint:
    """fw, bw: the GraphModules given to aot_autograd's fw_compiler and bw_compiler. `groups`: see
    _grad_positions (default: one placeholder per input)."""
    import torch
    import torch.fx as fx

    fw_out = next(n for n in fw.graph.nodes if n.op == "output").args[0]
    fw_by_name = {getattr(a, "name", None): a for a in fw_out if isinstance(a, fx.Node)}
    bw_phs = [n for n in bw.graph.nodes if n.op == "placeholder"]
    saved = [p for p in bw_phs if not p.name.startswith("tangents_")]
    tangents = [p for p in bw_phs if p.name.startswith("tangents_")]
    for p in saved:
        if p.name not in fw_by_name:
            raise StitchError(f"backward placeholder {p.name} is neither a tangent nor a forward output")
    n_user = len(fw_out) - len(saved)
    if n_user < 1 or [getattr(a, "name", None) for a in fw_out[n_user:]] != [p.name for p in saved]:
        raise StitchError(f"the forward's saved outputs do not line up with the backward's {len(saved)} "
                          f"saved placeholders")

    # Unused nodes of the backward (recomputations the partitioner left behind) would only clash
    # with the forward's names.
    bw.graph.eliminate_dead_code()

    g = fx.Graph()
    env = {}
    fw_phs = [n for n in fw.graph.nodes if n.op == "placeholder"]
    for n in fw_phs:
        env[n] = g.placeholder(n.name)
        env[n].meta = dict(n.meta)
    tangent_nodes = []
    for t in tangents:
        new = g.placeholder(t.name)
        new.meta = dict(t.meta)
        env[t] = new
        tangent_nodes.append(new)
    for n in fw.graph.nodes:
        if n.op in ("placeholder", "output"):
            continue
        env[n] = g.node_copy(n, lambda x: env[x])
    for p in saved:
        env[p] = env[fw_by_name[p.name]]
    bw_out = None
    for n in bw.graph.nodes:
        if n.op == "placeholder":
            continue
        if n.op == "output":
            bw_out = n.args[0]
            continue
        env[n] = g.node_copy(n, lambda x: env[x])
    if bw_out is None:
        raise StitchError("the backward graph has no output")

    outs, grads = [env[a] for a in fw_out[:n_user]], []
    for i, a in _grad_positions(list(bw_out), groups, len(fw_phs)):
        if not isinstance(a, fx.Node) or not _is_tensor_node(a):
            continue  # None, or the device-mesh object a DTensor input hands back
        node = env[a]
        grads.append((i, node))
        outs.append(node)
    g.output(tuple(outs))

    root = torch.nn.Module()
    for src in (fw, bw):
        for n in src.graph.nodes:
            if n.op == "get_attr" and not hasattr(root, n.target):
                setattr(root, n.target, getattr(src, n.target))
    module = fx.GraphModule(root, g)
    shapes = [list(a.meta["val"].shape) if _is_tensor_node(a) else None for a in fw_out[:n_user]]
    return Joint(module, [env[a].name for a in fw_out[:n_user]], shapes, [(i, node.name) for i, node in grads],
                 [t.name for t in tangent_nodes])
