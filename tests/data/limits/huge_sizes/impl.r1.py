import torch
from torch import device

f32: type


# Graph[rank=1](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, A: "f32[1073741824, 1073741824]", B: "f32[1073741824, 1610612736]", E: "f32[536870912, 1610612736]"):
        # File: /models/paper_fig1_tp.py:21 in forward, code: C = A @ B
        mm: "f32[1073741824, 1610612736]" = torch.ops.aten.mm.default(A, B);  A = B = None
        
        # File: /models/paper_fig1_tp.py:22 in forward, code: D = funcol.reduce_scatter_tensor(C, "sum", 0, group)
        reduce_scatter_tensor: "f32[536870912, 1610612736]" = torch.ops._c10d_functional.reduce_scatter_tensor.default(mm, "sum", 2, '0');  mm = None
        wait_tensor: "f32[536870912, 1610612736]" = torch.ops._c10d_functional.wait_tensor.default(reduce_scatter_tensor);  reduce_scatter_tensor = None
        
        # File: /models/paper_fig1_tp.py:23 in forward, code: F = D - E
        sub: "f32[536870912, 1610612736]" = torch.ops.aten.sub.Tensor(wait_tensor, E);  wait_tensor = E = None
        return (sub,)
        
