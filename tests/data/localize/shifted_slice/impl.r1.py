import torch
from torch import device

f32: type


class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 8]", w: "f32[16, 8]"):
        # File: /models/linear_tp.py:20 in forward, code: w_r = self.w[rank * 8:(rank + 1) * 8]
        slice_1: "f32[8, 8]" = torch.ops.aten.slice.Tensor(w, 0, 4, 12);  w = None

        # File: /models/linear_tp.py:21 in forward, code: return x @ w_r.t()
        t: "f32[8, 8]" = torch.ops.aten.t.default(slice_1);  slice_1 = None
        mm: "f32[4, 8]" = torch.ops.aten.mm.default(x, t);  x = t = None
        return (mm,)
