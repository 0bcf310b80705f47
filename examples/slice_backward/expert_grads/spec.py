class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[3, 2]", arg1_1: "f32[3, 2]", arg2_1: "f32[3, 2]", arg3_1: "f32[3, 2]"):
        select_backward: "f32[4, 3, 2]" = torch.ops.aten.select_backward.default(arg3_1, [4, 3, 2], 0, 3)
        select_backward_1: "f32[4, 3, 2]" = torch.ops.aten.select_backward.default(arg2_1, [4, 3, 2], 0, 2)
        add: "f32[4, 3, 2]" = torch.ops.aten.add.Tensor(select_backward, select_backward_1)
        select_backward_2: "f32[4, 3, 2]" = torch.ops.aten.select_backward.default(arg1_1, [4, 3, 2], 0, 1)
        add_1: "f32[4, 3, 2]" = torch.ops.aten.add.Tensor(add, select_backward_2)
        select_backward_3: "f32[4, 3, 2]" = torch.ops.aten.select_backward.default(arg0_1, [4, 3, 2], 0, 0)
        add_2: "f32[4, 3, 2]" = torch.ops.aten.add.Tensor(add_1, select_backward_3)
        return (add_2,)
