import torch
from torch import device

f32: type


# Graph[rank=1](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 8]", w1: "f32[8, 8]", b1: "f32[8]", w2: "f32[8, 8]", b2: "f32[8]"):
        # File: /models/mlp_tp.py:30 in forward, code: h = F.gelu(F.linear(x, self.w1, self.b1))
        t: "f32[8, 8]" = torch.ops.aten.t.default(w1);  w1 = None
        addmm: "f32[4, 8]" = torch.ops.aten.addmm.default(b1, x, t);  b1 = x = t = None
        gelu: "f32[4, 8]" = torch.ops.aten.gelu.default(addmm);  addmm = None
        
        # File: /models/mlp_tp.py:31 in forward, code: y = h @ self.w2.t()
        t_1: "f32[8, 8]" = torch.ops.aten.t.default(w2);  w2 = None
        mm: "f32[4, 8]" = torch.ops.aten.mm.default(gelu, t_1);  gelu = t_1 = None
        
        # File: /models/mlp_tp.py:32 in forward, code: y = funcol.all_reduce(y, "sum", group)
        all_reduce: "f32[4, 8]" = torch.ops._c10d_functional.all_reduce.default(mm, 'sum', '0')
        wait_tensor: "f32[4, 8]" = torch.ops.aten.clone.default(mm);  mm = None
        
        # File: /models/mlp_tp.py:33 in forward, code: y = y + self.b2
        add: "f32[4, 8]" = torch.ops.aten.add.Tensor(wait_tensor, b2);  wait_tensor = b2 = None
        return (add,)
        
