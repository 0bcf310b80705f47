# Rank 1 of split, with its window shifted one token back (an off-by-one bug).
class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "Sym(s77)", arg1_1: "f32[s77, 8]", arg2_1: "f32[16, 8]", arg3_1: "f32[8, 16]"):
        # File: sp_model.py:48 in sp_mlp, code: half = x.shape[0] // 2
        floordiv: "Sym((s77//2))" = arg0_1 // 2;  arg0_1 = None

        # File: sp_model.py:49 in sp_mlp, code: y = mlp(x[rank * half:(rank + 1) * half], w1, w2)
        mul: "Sym(2*((s77//2)))" = 2 * floordiv
        sub: "Sym((s77//2) - 1)" = floordiv - 1
        sub_1: "Sym(2*((s77//2)) - 1)" = mul - 1
        slice_1: "f32[(s77//2), 8]" = torch.ops.aten.slice.Tensor(arg1_1, 0, sub, sub_1)

        # File: sp_model.py:22 in mlp, code: return torch.relu(x @ w1.t()) @ w2.t()
        t: "f32[8, 16]" = torch.ops.aten.t.default(arg2_1);  arg2_1 = None
        mm: "f32[(s77//2), 16]" = torch.ops.aten.mm.default(slice_1, t);  slice_1 = t = None
        relu: "f32[(s77//2), 16]" = torch.ops.aten.relu.default(mm);  mm = None
        t_1: "f32[16, 8]" = torch.ops.aten.t.default(arg3_1);  arg3_1 = None
        mm_1: "f32[(s77//2), 8]" = torch.ops.aten.mm.default(relu, t_1);  relu = t_1 = None

        # File: _functional_collectives.py:209 in all_gather_single
        all_gather_into_tensor: "f32[2*((s77//2)), 8]" = torch.ops._c10d_functional.all_gather_into_tensor.default(mm_1, 2, '0');  mm_1 = None
        wait_tensor: "f32[2*((s77//2)), 8]" = torch.ops._c10d_functional.wait_tensor.default(all_gather_into_tensor);  all_gather_into_tensor = None
        return (wait_tensor,)
