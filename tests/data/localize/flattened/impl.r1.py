import torch
from torch import device

f32: type


class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[2048, 2048]"):
        # File: /models/big.py:5 in forward, code: return torch.relu(x.view(-1))
        view: "f32[4194304]" = torch.ops.aten.view.default(x, [4194304]);  x = None
        relu: "f32[4194304]" = torch.ops.aten.relu.default(view);  view = None
        return (relu,)
