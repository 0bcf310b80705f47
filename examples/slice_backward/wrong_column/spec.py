class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[8, 1]", arg1_1: "f32[8, 1]"):
        slice_backward: "f32[8, 4]" = torch.ops.aten.slice_backward.default(arg0_1, [8, 4], 1, 3, 4, 1)
        return (slice_backward,)
