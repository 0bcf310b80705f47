import torch
from torch import device

f32: type


# Rank 2 of 4 (tensor parallel + sequence parallel): x holds the rank's 2 rows
# of the sequence, w the q/k/v rows of one kv head. The sequence is all-gathered
# (along dim 0, then its chunks concatenated along the sequence dim) before the
# column-parallel projection.
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[1, 2, 64]", w: "f32[32, 64]"):
        # File: /models/attn_sp.py:20 in forward, code: x = all_gather(x, dim=1)
        all_gather_into_tensor: "f32[4, 2, 64]" = torch.ops._c10d_functional.all_gather_into_tensor.default(x, 4, '0');  x = None
        wait_tensor: "f32[4, 2, 64]" = torch.ops._c10d_functional.wait_tensor.default(all_gather_into_tensor);  all_gather_into_tensor = None
        split = torch.ops.aten.split.Tensor(wait_tensor, 1);  wait_tensor = None
        getitem: "f32[1, 2, 64]" = split[0]
        getitem_1: "f32[1, 2, 64]" = split[1]
        getitem_2: "f32[1, 2, 64]" = split[2]
        getitem_3: "f32[1, 2, 64]" = split[3];  split = None
        cat: "f32[1, 8, 64]" = torch.ops.aten.cat.default([getitem, getitem_1, getitem_2, getitem_3], 1);  getitem = getitem_1 = getitem_2 = getitem_3 = None
        # File: /models/attn.py:10 in forward, code: qkv = self.wqkv(x)
        t: "f32[64, 32]" = torch.ops.aten.t.default(w);  w = None
        view: "f32[8, 64]" = torch.ops.aten.view.default(cat, [8, 64]);  cat = None
        mm: "f32[8, 32]" = torch.ops.aten.mm.default(view, t);  view = t = None
        _unsafe_view: "f32[1, 8, 32]" = torch.ops.aten._unsafe_view.default(mm, [1, 8, 32]);  mm = None
        # File: /models/attn.py:11 in forward, code: qkv = qkv.view(bs, seqlen, -1, 4, 8)
        view_1: "f32[1, 8, 1, 4, 8]" = torch.ops.aten.view.default(_unsafe_view, [1, 8, -1, 4, 8]);  _unsafe_view = None
        # File: /models/attn.py:12 in forward, code: xq, xk, xv = torch.split(qkv, [2, 1, 1], dim=-2)
        split_with_sizes = torch.ops.aten.split_with_sizes.default(view_1, [2, 1, 1], -2);  view_1 = None
        getitem_4: "f32[1, 8, 1, 1, 8]" = split_with_sizes[2];  split_with_sizes = None
        # File: /models/attn.py:13 in forward, code: xv = xv.reshape(bs, seqlen, -1, 8).transpose(1, 2)
        view_2: "f32[1, 8, 1, 8]" = torch.ops.aten.view.default(getitem_4, [1, 8, 1, 8]);  getitem_4 = None
        clone: "f32[1, 8, 1, 8]" = torch.ops.aten.clone.default(view_2, memory_format = torch.contiguous_format);  view_2 = None
        transpose: "f32[1, 1, 8, 8]" = torch.ops.aten.transpose.int(clone, 1, 2);  clone = None
        # File: /models/attn.py:14 in forward, code: xv = repeat_kv(xv, 2).view(-1, seqlen, 8)
        unsqueeze: "f32[1, 1, 1, 8, 8]" = torch.ops.aten.unsqueeze.default(transpose, 2);  transpose = None
        expand: "f32[1, 1, 2, 8, 8]" = torch.ops.aten.expand.default(unsqueeze, [1, 1, 2, 8, 8]);  unsqueeze = None
        clone_1: "f32[1, 1, 2, 8, 8]" = torch.ops.aten.clone.default(expand, memory_format = torch.contiguous_format);  expand = None
        view_3: "f32[1, 2, 8, 8]" = torch.ops.aten.view.default(clone_1, [1, 2, 8, 8]);  clone_1 = None
        expand_1: "f32[1, 2, 8, 8]" = torch.ops.aten.expand.default(view_3, [1, 2, 8, 8]);  view_3 = None
        view_4: "f32[2, 8, 8]" = torch.ops.aten.view.default(expand_1, [2, 8, 8]);  expand_1 = None
        # File: /models/attn.py:15 in forward, code: return xv * 2.0
        mul: "f32[2, 8, 8]" = torch.ops.aten.mul.Tensor(view_4, 2.0);  view_4 = None
        return (mul,)
