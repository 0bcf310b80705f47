# Sequence parallel: this rank's block of tokens, then an all_gather.
class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[16, 8]", arg1_1: "Sym(s77)", arg2_1: "f32[s77, 8]", arg3_1: "f32[8, 16]"):
        # File: sp_model.py:22 in mlp, code: return torch.relu(x @ w1.t()) @ w2.t()
        t: "f32[8, 16]" = torch.ops.aten.t.default(arg0_1);  arg0_1 = None
        mm: "f32[s77, 16]" = torch.ops.aten.mm.default(arg2_1, t);  arg2_1 = t = None
        relu: "f32[s77, 16]" = torch.ops.aten.relu.default(mm);  mm = None
        t_1: "f32[16, 8]" = torch.ops.aten.t.default(arg3_1);  arg3_1 = None
        mm_1: "f32[s77, 8]" = torch.ops.aten.mm.default(relu, t_1);  relu = t_1 = None

        # File: _functional_collectives.py:209 in all_gather_single
        all_gather_into_tensor: "f32[2*s77, 8]" = torch.ops._c10d_functional.all_gather_into_tensor.default(mm_1, 2, '0');  mm_1 = None
        wait_tensor: "f32[2*s77, 8]" = torch.ops._c10d_functional.wait_tensor.default(all_gather_into_tensor);  all_gather_into_tensor = None
        return (wait_tensor,)
