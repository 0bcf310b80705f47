import torch
from torch import device

f32: type


# Graph[rank=0](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, A: "bf16[4, 4]", B: "bf16[4, 6]", E: "f32[2, 6]"):
        # File: /models/fig1_bf16_tp.py:21 in forward, code: C = (A @ B).float()
        mm: "bf16[4, 6]" = torch.ops.aten.mm.default(A, B);  A = B = None
        _to_copy: "f32[4, 6]" = torch.ops.aten._to_copy.default(mm, dtype = torch.float32);  mm = None

        # File: /models/fig1_bf16_tp.py:22 in forward, code: D = funcol.reduce_scatter_tensor(C, "sum", 0, group)
        reduce_scatter_tensor: "f32[2, 6]" = torch.ops._c10d_functional.reduce_scatter_tensor.default(_to_copy, 'sum', 2, '0');  _to_copy = None
        wait_tensor: "f32[2, 6]" = torch.ops._c10d_functional.wait_tensor.default(reduce_scatter_tensor);  reduce_scatter_tensor = None

        # File: /models/fig1_bf16_tp.py:23 in forward, code: F = D - E
        sub: "f32[2, 6]" = torch.ops.aten.sub.Tensor(wait_tensor, E);  wait_tensor = E = None
        return (sub,)
