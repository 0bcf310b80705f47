import torch
from torch import device

f32: type


# Graph[rank=0](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 8]", w1: "f32[16, 8]", b1: "f32[16]", w2: "f32[8, 16]", b2: "f32[8]"):
        # File: /models/mlp.py:14 in forward, code: h = F.gelu(self.fc1(x))
        t: "f32[8, 16]" = torch.ops.aten.t.default(w1);  w1 = None
        addmm: "f32[4, 16]" = torch.ops.aten.addmm.default(b1, x, t);  b1 = x = t = None
        gelu: "f32[4, 16]" = torch.ops.aten.gelu.default(addmm);  addmm = None
        
        # File: /models/mlp.py:15 in forward, code: y = h @ self.w2.t() + self.b2
        t_1: "f32[16, 8]" = torch.ops.aten.t.default(w2);  w2 = None
        mm: "f32[4, 8]" = torch.ops.aten.mm.default(gelu, t_1);  gelu = t_1 = None
        add: "f32[4, 8]" = torch.ops.aten.add.Tensor(mm, b2);  mm = b2 = None
        return (add,)
        
