import torch
from torch import device

f32: type


# Graph[rank=15](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, X: "f32[1, 8]", W: "f32[8, 8]"):
        # File: /models/dp_mlp.py:5 in forward, code: h = X @ W
        mm: "f32[1, 8]" = torch.ops.aten.mm.default(X, W);  X = W = None
        # File: /models/dp_mlp.py:6 in forward, code: y = torch.relu(h) * 2
        relu: "f32[1, 8]" = torch.ops.aten.relu.default(mm);  mm = None
        mul: "f32[1, 8]" = torch.ops.aten.mul.Tensor(relu, 2.0);  relu = None
        # File: /models/dp_mlp.py:7 in forward, code: return y + 1
        add: "f32[1, 8]" = torch.ops.aten.add.Tensor(mul, 1.0);  mul = None
        return (add,)
