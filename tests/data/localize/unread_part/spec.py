import torch
from torch import device

f32: type


class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 8]", w: "f32[8, 8]"):
        # File: /models/fused.py:10 in forward, code: h = x @ self.w.t()
        t: "f32[8, 8]" = torch.ops.aten.t.default(w);  w = None
        mm: "f32[4, 8]" = torch.ops.aten.mm.default(x, t);  x = t = None
        slice_1: "f32[4, 4]" = torch.ops.aten.slice.Tensor(mm, 1, 0, 4)
        relu: "f32[4, 4]" = torch.ops.aten.relu.default(slice_1);  slice_1 = None
        slice_2: "f32[4, 4]" = torch.ops.aten.slice.Tensor(mm, 1, 4, 8);  mm = None
        mul: "f32[4, 4]" = torch.ops.aten.mul.Tensor(slice_2, 2);  slice_2 = None
        cat: "f32[4, 8]" = torch.ops.aten.cat.default([relu, mul], 1);  relu = mul = None
        # File: /models/fused.py:14 in forward, code: return h + 1
        add: "f32[4, 8]" = torch.ops.aten.add.Tensor(cat, 1);  cat = None
        return (add,)
