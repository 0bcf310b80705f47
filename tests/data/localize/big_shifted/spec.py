import torch
from torch import device

f32: type


class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[64, 2048]", w: "f32[4096, 2048]"):
        # File: /models/linear.py:10 in forward, code: return x @ self.w.t()
        t: "f32[2048, 4096]" = torch.ops.aten.t.default(w);  w = None
        mm: "f32[64, 4096]" = torch.ops.aten.mm.default(x, t);  x = t = None
        return (mm,)
