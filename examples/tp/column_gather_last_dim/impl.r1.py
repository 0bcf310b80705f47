import torch
from torch import device

f32: type


# Graph[rank=1](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 8]", w: "f32[3, 8]", b: "f32[3]"):
        # File: /models/proj_tp.py:40 in forward, code: y = F.linear(x, self.w, self.b)
        t: "f32[8, 3]" = torch.ops.aten.t.default(w);  w = None
        addmm: "f32[4, 3]" = torch.ops.aten.addmm.default(b, x, t);  b = x = t = None
        
        # File: /models/proj_tp.py:41 in forward, code: y = funcol.all_gather_tensor(y.transpose(0, 1), 0, group).transpose(0, 1)
        transpose: "f32[3, 4]" = torch.ops.aten.transpose.int(addmm, 0, 1);  addmm = None
        all_gather_into_tensor: "f32[6, 4]" = torch.ops._c10d_functional.all_gather_into_tensor.default(transpose, 2, '0');  transpose = None
        wait_tensor: "f32[6, 4]" = torch.ops._c10d_functional.wait_tensor.default(all_gather_into_tensor);  all_gather_into_tensor = None
        transpose_1: "f32[4, 6]" = torch.ops.aten.transpose.int(wait_tensor, 0, 1);  wait_tensor = None
        
        # File: /models/proj_tp.py:42 in forward, code: return y.view(2, 2, 6)
        view: "f32[2, 2, 6]" = torch.ops.aten.view.default(transpose_1, [2, 2, 6]);  transpose_1 = None
        return (view,)
        
