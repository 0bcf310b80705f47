import torch
from torch import device

f32: type


class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[64, 2048]", w: "f32[4096, 2048]"):
        # File: /models/linear_tp.py:20 in forward, code: w_r = self.w[rank * 2048:(rank + 1) * 2048]
        slice_1: "f32[2048, 2048]" = torch.ops.aten.slice.Tensor(w, 0, 2048, 4096);  w = None

        # File: /models/linear_tp.py:21 in forward, code: return x @ w_r.t()
        t: "f32[2048, 2048]" = torch.ops.aten.t.default(slice_1);  slice_1 = None
        mm: "f32[64, 2048]" = torch.ops.aten.mm.default(x, t);  x = t = None
        return (mm,)
