import torch
from torch import device

f32: type


# Graph[rank=0](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 8]", w: "f32[6, 8]", b: "f32[6]"):
        # File: /models/proj.py:20 in forward, code: y = self.proj(x)
        t: "f32[8, 6]" = torch.ops.aten.t.default(w);  w = None
        addmm: "f32[4, 6]" = torch.ops.aten.addmm.default(b, x, t);  b = x = t = None
        
        # File: /models/proj.py:21 in forward, code: return y.view(2, 2, 6)
        view: "f32[2, 2, 6]" = torch.ops.aten.view.default(addmm, [2, 2, 6]);  addmm = None
        return (view,)
        
