class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[3, 2]", arg1_1: "f32[3, 2]"):
        select_backward: "f32[2, 3, 2]" = torch.ops.aten.select_backward.default(arg1_1, [2, 3, 2], 0, 1)
        select_backward_1: "f32[2, 3, 2]" = torch.ops.aten.select_backward.default(arg0_1, [2, 3, 2], 0, 0)
        add: "f32[2, 3, 2]" = torch.ops.aten.add.Tensor(select_backward, select_backward_1)
        return (add,)
