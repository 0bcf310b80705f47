import torch
from torch import device

f32: type


# Graph[rank=1](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, A: "bf16[4, 4]", B: "bf16[4, 6]", E: "f32[2, 6]"):
        # File: /models/fig1_bf16_tp_late_cast.py:21 in forward, code: C = A @ B
        mm: "bf16[4, 6]" = torch.ops.aten.mm.default(A, B);  A = B = None

        # File: /models/fig1_bf16_tp_late_cast.py:22 in forward, code: D = funcol.reduce_scatter_tensor(C, "sum", 0, group)
        reduce_scatter_tensor: "bf16[2, 6]" = torch.ops._c10d_functional.reduce_scatter_tensor.default(mm, 'sum', 2, '0');  mm = None
        wait_tensor: "bf16[2, 6]" = torch.ops._c10d_functional.wait_tensor.default(reduce_scatter_tensor);  reduce_scatter_tensor = None

        # File: /models/fig1_bf16_tp_late_cast.py:23 in forward, code: G = D.flatten().float().view(2, 6)
        view: "bf16[12]" = torch.ops.aten.view.default(wait_tensor, [12]);  wait_tensor = None
        _to_copy: "f32[12]" = torch.ops.aten._to_copy.default(view, dtype = torch.float32);  view = None
        view_1: "f32[2, 6]" = torch.ops.aten.view.default(_to_copy, [2, 6]);  _to_copy = None

        # File: /models/fig1_bf16_tp_late_cast.py:24 in forward, code: F = G - E
        sub: "f32[2, 6]" = torch.ops.aten.sub.Tensor(view_1, E);  view_1 = E = None
        return (sub,)
