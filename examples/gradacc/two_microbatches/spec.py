import torch
from torch import device

f32: type


# Graph[rank=0](fw, gid=0): one step on the whole batch of 8 samples
class GraphModule(torch.nn.Module):
    def forward(self, w: "f32[]", b: "f32[]", x: "f32[8]", y: "f32[8]", acc: "f32[]"):
        # File: /models/regression.py:12 in step, code: pred = x * w + b
        mul: "f32[8]" = torch.ops.aten.mul.Tensor(x, w);  x = w = None
        add: "f32[8]" = torch.ops.aten.add.Tensor(mul, b);  mul = b = None

        # File: /models/regression.py:13 in step, code: loss = ((pred - y) ** 2).sum() / 8
        sub: "f32[8]" = torch.ops.aten.sub.Tensor(add, y);  add = y = None
        pow_1: "f32[8]" = torch.ops.aten.pow.Tensor_Scalar(sub, 2);  sub = None
        sum_1: "f32[]" = torch.ops.aten.sum.default(pow_1);  pow_1 = None
        div: "f32[]" = torch.ops.aten.div.Tensor(sum_1, 8);  sum_1 = None

        # File: /models/regression.py:14 in step, code: total = total + loss
        total: "f32[]" = torch.ops.aten.add.Tensor(acc, div);  acc = div = None
        return (total,)
