import torch
from torch import device

f32: type


# Graph[rank=0](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, A: "f32[4, 8]", B: "f32[8, 6]", E: "f32[4, 6]"):
        # File: /models/paper_fig1.py:7 in forward, code: C = A @ B
        mm: "f32[4, 7]" = torch.ops.aten.mm.default(A, B);  A = B = None
        
        # File: /models/paper_fig1.py:8 in forward, code: F = C - E
        sub: "f32[4, 6]" = torch.ops.aten.sub.Tensor(mm, E);  mm = E = None
        return (sub,)
        
