import torch
from torch import device

f32: type


# vLLM-style causal mask for one prefill sequence: key j is seen by query i when j <= i.
class GraphModule(torch.nn.Module):
    def forward(self, scores: "f32[6, 6]"):
        # File: /models/prefill.py:4 in forward, code: pos = torch.arange(t)
        arange: "i64[6]" = torch.ops.aten.arange.default(6, device = device(type='cpu'), pin_memory = False)

        # File: /models/prefill.py:5 in forward, code: mask = torch.where(pos[None, :] <= pos[:, None], 0.0, torch.finfo(torch.float32).min)
        unsqueeze: "i64[1, 6]" = torch.ops.aten.unsqueeze.default(arange, 0)
        unsqueeze_1: "i64[6, 1]" = torch.ops.aten.unsqueeze.default(arange, 1);  arange = None
        le: "b8[6, 6]" = torch.ops.aten.le.Tensor(unsqueeze, unsqueeze_1);  unsqueeze = unsqueeze_1 = None
        scalar_tensor: "f32[]" = torch.ops.aten.scalar_tensor.default(-3.4028234663852886e+38, dtype = torch.float32, layout = torch.strided, device = device(type='cpu'))
        scalar_tensor_1: "f32[]" = torch.ops.aten.scalar_tensor.default(0.0, dtype = torch.float32, layout = torch.strided, device = device(type='cpu'))
        where: "f32[6, 6]" = torch.ops.aten.where.self(le, scalar_tensor_1, scalar_tensor);  le = scalar_tensor_1 = scalar_tensor = None

        # File: /models/prefill.py:6 in forward, code: s = s + mask
        add: "f32[6, 6]" = torch.ops.aten.add.Tensor(scores, where);  scores = where = None
        return (add,)
