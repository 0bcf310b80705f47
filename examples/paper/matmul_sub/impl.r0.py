import torch
from torch import device

f32: type


# Graph[rank=0](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, A: "f32[4, 4]", B: "f32[4, 6]", E: "f32[4, 6]"):
        # File: /models/paper_fig1_tp.py:11 in forward, code: C = A @ B
        mm: "f32[4, 6]" = torch.ops.aten.mm.default(A, B);  A = B = None
        
        # File: /models/paper_fig1_tp.py:12 in forward, code: D = funcol.all_reduce(C, "sum", group)
        all_reduce: "f32[4, 6]" = torch.ops._c10d_functional.all_reduce.default(mm, 'sum', '0');  mm = None
        wait_tensor: "f32[4, 6]" = torch.ops._c10d_functional.wait_tensor.default(all_reduce);  all_reduce = None
        
        # File: /models/paper_fig1_tp.py:13 in forward, code: F = D - E
        sub: "f32[4, 6]" = torch.ops.aten.sub.Tensor(wait_tensor, E);  wait_tensor = E = None
        return (sub,)
        
