import torch
from torch import device

f32: type


# Graph[rank=0](fw, gid=0): two micro-batches of 4 samples, each loss scaled by 1/2
class GraphModule(torch.nn.Module):
    def forward(self, w: "f32[]", b: "f32[]", x1: "f32[4]", y1: "f32[4]", acc: "f32[]", x2: "f32[4]", y2: "f32[4]"):
        # File: /models/regression.py:12 in step, code: pred = x * w + b
        mul: "f32[4]" = torch.ops.aten.mul.Tensor(x1, w);  x1 = None
        add: "f32[4]" = torch.ops.aten.add.Tensor(mul, b);  mul = None

        # File: /models/regression.py:22 in micro_step, code: loss = ((pred - y) ** 2).mean() / accumulation_steps
        sub: "f32[4]" = torch.ops.aten.sub.Tensor(add, y1);  add = y1 = None
        pow_1: "f32[4]" = torch.ops.aten.pow.Tensor_Scalar(sub, 2);  sub = None
        mean: "f32[]" = torch.ops.aten.mean.default(pow_1);  pow_1 = None
        div: "f32[]" = torch.ops.aten.div.Tensor(mean, 2);  mean = None

        # File: /models/regression.py:23 in micro_step, code: total = total + loss
        add_1: "f32[]" = torch.ops.aten.add.Tensor(acc, div);  acc = div = None

        # File: /models/regression.py:12 in step, code: pred = x * w + b
        mul_1: "f32[4]" = torch.ops.aten.mul.Tensor(x2, w);  x2 = w = None
        add_2: "f32[4]" = torch.ops.aten.add.Tensor(mul_1, b);  mul_1 = b = None

        # File: /models/regression.py:22 in micro_step, code: loss = ((pred - y) ** 2).mean() / accumulation_steps
        sub_1: "f32[4]" = torch.ops.aten.sub.Tensor(add_2, y2);  add_2 = y2 = None
        pow_2: "f32[4]" = torch.ops.aten.pow.Tensor_Scalar(sub_1, 2);  sub_1 = None
        mean_1: "f32[]" = torch.ops.aten.mean.default(pow_2);  pow_2 = None
        div_1: "f32[]" = torch.ops.aten.div.Tensor(mean_1, 2);  mean_1 = None

        # File: /models/regression.py:23 in micro_step, code: total = total + loss
        add_3: "f32[]" = torch.ops.aten.add.Tensor(add_1, div_1);  add_1 = div_1 = None
        return (add_3,)
