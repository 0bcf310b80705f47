import torch
from torch import device

f32: type


# Spec: a fused q/k/v projection of a sequence x [1, 8, 64] (4 kv heads, each
# with 2 query heads, one key and one value head of dim 8), then the value heads
# repeated for grouped-query attention and flattened to [8 heads, 8, 8].
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[1, 8, 64]", w: "f32[128, 64]"):
        # File: /models/attn.py:10 in forward, code: qkv = self.wqkv(x)
        t: "f32[64, 128]" = torch.ops.aten.t.default(w);  w = None
        view: "f32[8, 64]" = torch.ops.aten.view.default(x, [8, 64]);  x = None
        mm: "f32[8, 128]" = torch.ops.aten.mm.default(view, t);  view = t = None
        _unsafe_view: "f32[1, 8, 128]" = torch.ops.aten._unsafe_view.default(mm, [1, 8, 128]);  mm = None
        # File: /models/attn.py:11 in forward, code: qkv = qkv.view(bs, seqlen, -1, 4, 8)
        view_1: "f32[1, 8, 4, 4, 8]" = torch.ops.aten.view.default(_unsafe_view, [1, 8, -1, 4, 8]);  _unsafe_view = None
        # File: /models/attn.py:12 in forward, code: xq, xk, xv = torch.split(qkv, [2, 1, 1], dim=-2)
        split_with_sizes = torch.ops.aten.split_with_sizes.default(view_1, [2, 1, 1], -2);  view_1 = None
        getitem_2: "f32[1, 8, 4, 1, 8]" = split_with_sizes[2];  split_with_sizes = None
        # File: /models/attn.py:13 in forward, code: xv = xv.reshape(bs, seqlen, -1, 8).transpose(1, 2)
        view_2: "f32[1, 8, 4, 8]" = torch.ops.aten.view.default(getitem_2, [1, 8, 4, 8]);  getitem_2 = None
        clone: "f32[1, 8, 4, 8]" = torch.ops.aten.clone.default(view_2, memory_format = torch.contiguous_format);  view_2 = None
        transpose: "f32[1, 4, 8, 8]" = torch.ops.aten.transpose.int(clone, 1, 2);  clone = None
        # File: /models/attn.py:14 in forward, code: xv = repeat_kv(xv, 2).view(-1, seqlen, 8)
        unsqueeze: "f32[1, 4, 1, 8, 8]" = torch.ops.aten.unsqueeze.default(transpose, 2);  transpose = None
        expand: "f32[1, 4, 2, 8, 8]" = torch.ops.aten.expand.default(unsqueeze, [1, 4, 2, 8, 8]);  unsqueeze = None
        clone_1: "f32[1, 4, 2, 8, 8]" = torch.ops.aten.clone.default(expand, memory_format = torch.contiguous_format);  expand = None
        view_3: "f32[1, 8, 8, 8]" = torch.ops.aten.view.default(clone_1, [1, 8, 8, 8]);  clone_1 = None
        expand_1: "f32[1, 8, 8, 8]" = torch.ops.aten.expand.default(view_3, [1, 8, 8, 8]);  view_3 = None
        view_4: "f32[8, 8, 8]" = torch.ops.aten.view.default(expand_1, [8, 8, 8]);  expand_1 = None
        # File: /models/attn.py:15 in forward, code: return xv * 2.0
        mul: "f32[8, 8, 8]" = torch.ops.aten.mul.Tensor(view_4, 2.0);  view_4 = None
        return (mul,)
