import torch
from torch import device

f32: type


class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 4]", w: "f32[4, 4]"):
        # File: /models/linear_tp.py:19 in forward, code: w = self.w.t()
        t: "f32[4, 4]" = torch.ops.aten.t.default(w);  w = None

        # File: /models/linear_tp.py:20 in forward, code: w_r = w[:, rank * 2:(rank + 1) * 2]
        slice_1: "f32[4, 2]" = torch.ops.aten.slice.Tensor(t, 1, 2, 4);  t = None

        # File: /models/linear_tp.py:21 in forward, code: return x @ w_r
        mm: "f32[4, 2]" = torch.ops.aten.mm.default(x, slice_1);  x = slice_1 = None
        return (mm,)
