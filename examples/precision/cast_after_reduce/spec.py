import torch
from torch import device

f32: type


# Graph[rank=0](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, A: "bf16[4, 8]", B: "bf16[8, 6]", E: "f32[4, 6]"):
        # File: /models/fig1_bf16.py:7 in forward, code: C = (A @ B).float()
        mm: "bf16[4, 6]" = torch.ops.aten.mm.default(A, B);  A = B = None
        _to_copy: "f32[4, 6]" = torch.ops.aten._to_copy.default(mm, dtype = torch.float32);  mm = None

        # File: /models/fig1_bf16.py:8 in forward, code: F = C - E
        sub: "f32[4, 6]" = torch.ops.aten.sub.Tensor(_to_copy, E);  _to_copy = E = None
        return (sub,)
