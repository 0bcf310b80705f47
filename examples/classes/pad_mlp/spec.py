class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[10, 4]", arg1_1: "f32[3, 4]", arg2_1: "f32[4, 10]"):
        # File: /models/pad_model.py:18 in mlp, code: return torch.relu(x @ w1.t()) @ w2.t()
        t: "f32[4, 10]" = torch.ops.aten.t.default(arg0_1);  arg0_1 = None
        mm: "f32[3, 10]" = torch.ops.aten.mm.default(arg1_1, t);  arg1_1 = t = None
        relu: "f32[3, 10]" = torch.ops.aten.relu.default(mm);  mm = None
        t_1: "f32[10, 4]" = torch.ops.aten.t.default(arg2_1);  arg2_1 = None
        mm_1: "f32[3, 4]" = torch.ops.aten.mm.default(relu, t_1);  relu = t_1 = None
        return (mm_1,)
