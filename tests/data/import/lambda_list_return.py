import torch

class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[4]", arg1_1: "f32[4]"):
        add: "f32[4]" = torch.ops.aten.add.Tensor(arg0_1, arg1_1)
        auto_functionalized_v2 = torch.ops.higher_order.auto_functionalized_v2(torch.ops.tg.inplace_log_tensor.default, s = 'w', _t_base_index = 0, _all_bases = [add]);  add = None
        getitem_1: "f32[4]" = auto_functionalized_v2[1];  auto_functionalized_v2 = None
        return [getitem_1, arg1_1]
