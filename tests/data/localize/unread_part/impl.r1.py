import torch
from torch import device

f32: type


class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 8]", w: "f32[8, 8]"):
        # File: /models/fused_inplace.py:20 in forward, code: h = x @ self.w.t()
        t: "f32[8, 8]" = torch.ops.aten.t.default(w);  w = None
        mm: "f32[4, 8]" = torch.ops.aten.mm.default(x, t);  x = t = None
        # File: /models/fused_inplace.py:21 in forward, code: h[:, :4] = relu(h[:, :4])
        slice_1: "f32[4, 4]" = torch.ops.aten.slice.Tensor(mm, 1, 0, 4)
        relu: "f32[4, 4]" = torch.ops.aten.relu.default(slice_1);  slice_1 = None
        slice_scatter: "f32[4, 8]" = torch.ops.aten.slice_scatter.default(mm, relu, 1, 0, 4);  mm = relu = None
        # File: /models/fused_inplace.py:22 in forward, code: h[:, 4:] = h[:, 4:] * 2
        slice_2: "f32[4, 4]" = torch.ops.aten.slice.Tensor(slice_scatter, 1, 4, 8)
        mul: "f32[4, 4]" = torch.ops.aten.mul.Tensor(slice_2, 2);  slice_2 = None
        slice_scatter_1: "f32[4, 8]" = torch.ops.aten.slice_scatter.default(slice_scatter, mul, 1, 4, 8);  slice_scatter = mul = None
        # File: /models/fused_inplace.py:23 in forward, code: return h + 1
        add: "f32[4, 8]" = torch.ops.aten.add.Tensor(slice_scatter_1, 2);  slice_scatter_1 = None
        return (add,)
