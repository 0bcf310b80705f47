class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[8, 8]", arg1_1: "f32[8, 8]"):
        slice_backward: "f32[16, 8]" = torch.ops.aten.slice_backward.default(arg0_1, [16, 8], 0, 8, 16, 1)
        slice_backward_2: "f32[16, 8]" = torch.ops.aten.slice_backward.default(arg1_1, [16, 8], 0, 0, 8, 1)
        add_4: "f32[16, 8]" = torch.ops.aten.add.Tensor(slice_backward, slice_backward_2)
        return (add_4,)
